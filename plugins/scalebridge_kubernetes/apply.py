"""``scalebridge apply CONFIG`` for ``kubernetes`` targets: the ``autoscaling/v2``
HorizontalPodAutoscaler, created in the workload's namespace or replaced (its
``resourceVersion`` guarding the write) when it differs, through the plugin's own
client (:class:`~scalebridge_kubernetes.client.KubeClient`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from scalebridge.providers import ErrorKind, ProviderError
from scalebridge.translate.apply import diff


if TYPE_CHECKING:
    from scalebridge.translate.base import Translator

    from .provider import KubernetesTarget


def apply_native(translator: "Translator", name: str, target: "KubernetesTarget", policy: Any, dry_run: bool, say: Callable[[str], None],
              metrics: Optional[Mapping[str, Any]] = None) -> bool:
    """One kubernetes target; ``target`` is the kubernetes plugin's workload handle
    (its ``client`` makes every call)."""
    c = target.client
    ref = {"kind": target.kind, "api_version": target.api_version, "namespace": target.namespace,
           "name": target.workload, "metrics": metrics or {}}
    hpa, losses = translator.render(policy, ref)
    for line in losses.lines:
        say(f"{name}: lost: {line}")
    hpa_name, ns = hpa["metadata"]["name"], target.namespace
    try:
        have = c.call("read HorizontalPodAutoscaler", c.autoscaling.read_namespaced_horizontal_pod_autoscaler,
                      hpa_name, ns)
    except ProviderError as e:
        if e.kind != ErrorKind.NOT_FOUND:
            raise
        have = None
    if have is None:
        say(f"{name}: HorizontalPodAutoscaler {ns}/{hpa_name}: create")
        if not dry_run:
            c.call("create HorizontalPodAutoscaler", c.autoscaling.create_namespaced_horizontal_pod_autoscaler,
                   ns, hpa)
        return True
    current = c.api_client.sanitize_for_serialization(have)
    d = diff(hpa["spec"], current.get("spec") or {})
    # the API server fills in behavior defaults the policy did not state: only what the policy states counts
    for line in d:
        say(f"{name}: HorizontalPodAutoscaler {ns}/{hpa_name}: spec.{line}")
    if d and not dry_run:
        body = dict(hpa, metadata=dict(hpa["metadata"], resourceVersion=current["metadata"].get("resourceVersion")))
        c.call("replace HorizontalPodAutoscaler", c.autoscaling.replace_namespaced_horizontal_pod_autoscaler,
               hpa_name, ns, body)
    if not d:
        say(f"{name}: unchanged")
    return bool(d)
