"""JSON merge patch (https://www.rfc-editor.org/rfc/rfc7396, section 2), as the local
servers apply it: the Compute ``autoscalers.patch`` processing rules
(https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers/patch) and a
Kubernetes ``application/merge-patch+json`` PATCH
(https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/)."""
from __future__ import annotations

import copy
from typing import Any

__all__ = ["merge_patch"]


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` merged in: an object member set to null is removed,
    any other member replaces or merges into the target's, a non-object patch
    replaces the target. Neither argument is changed; nothing of ``patch`` is
    shared with the result."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out
