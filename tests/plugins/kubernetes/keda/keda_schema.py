"""KEDA's own ScaledObject schema (tests/plugins/kubernetes/keda/data/README.md says where it comes
from), for checking what ``render --to keda`` writes."""
from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parent / "data"
CRD = DATA / "keda.sh_scaledobjects.yaml"


def _closed(node):
    """The schema as the API server applies it to a structural schema: a field no
    ``properties`` names is pruned (dropped without a word), unless the schema says
    ``x-kubernetes-preserve-unknown-fields`` — here such a field is an error, so a
    rendered field KEDA would silently lose fails the test."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node \
                and not node.get("x-kubernetes-preserve-unknown-fields"):
            node["additionalProperties"] = False
        for v in node.values():
            _closed(v)
    elif isinstance(node, list):
        for v in node:
            _closed(v)
    return node


@lru_cache(maxsize=1)
def schema() -> dict:
    crd = yaml.safe_load(CRD.read_text(encoding="utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return _closed(copy.deepcopy(version["schema"]["openAPIV3Schema"]))


def errors(obj: dict) -> list[str]:
    """Why KEDA's API server would refuse (or prune part of) ``obj``: its openAPIV3Schema,
    and the CRD's one x-kubernetes-validations rule on ``spec`` (``minReplicaCount <=
    maxReplicaCount``, 100 when unset)."""
    import jsonschema
    validator = jsonschema.Draft7Validator(schema())
    out = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]
    spec = obj.get("spec") or {}
    if "minReplicaCount" in spec and spec["minReplicaCount"] > spec.get("maxReplicaCount", 100):
        out.append("spec: minReplicaCount must be less than or equal to maxReplicaCount")
    if obj.get("apiVersion") != "keda.sh/v1alpha1" or obj.get("kind") != "ScaledObject":
        out.append("not a keda.sh/v1alpha1 ScaledObject")
    return out
