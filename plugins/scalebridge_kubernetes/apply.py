"""``scalebridge apply CONFIG`` for ``kubernetes`` targets: the ``autoscaling/v2``
HorizontalPodAutoscaler, created in the workload's namespace or replaced (its
``resourceVersion`` guarding the write) when it differs, through the plugin's own
client (:class:`~scalebridge_kubernetes.client.KubeClient`).
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from scalebridge.providers import ErrorKind, ProviderError
from scalebridge.translate.apply import diff
from scalebridge.units import exact


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
    release = c.release()      # what this API server keeps of the HPA is said as a loss
    if release is not None:
        ref["kubernetes_version"] = release
    hpa, losses = translator.render(policy, ref)
    hpa = quantities_as_the_api_writes_them(hpa)
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


#: resource.Quantity's decimal SI suffixes (k8s.io/apimachinery/pkg/api/resource/suffix.go)
_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def canonical_quantity(value: Any) -> str:
    """A number as the API server writes a ``resource.Quantity`` back (``CanonicalizeBytes``,
    decimal SI): an integer mantissa with the largest suffix that keeps it whole, rounded
    up to nano — 0.05 is "50m", 1000 "1k", 1500 "1500"."""
    v = exact(value)
    v = Fraction(math.ceil(v * 10**9), 10**9)
    if v == 0:
        return "0"
    for e in sorted(_SUFFIXES, reverse=True):
        m = v / Fraction(10) ** e
        if m.denominator == 1:
            return f"{m.numerator}{_SUFFIXES[e]}"
    raise AssertionError("rounded to nano: unreachable")


def quantities_as_the_api_writes_them(hpa: dict) -> dict:
    """The HPA with its ``resource.Quantity`` fields (a metric target's ``value`` and
    ``averageValue``, a behavior rule's ``tolerance``) given as numbers as canonical
    strings (a string the policy wrote, "2Gi", is the user's quantity): the typed
    client requires strings there, and the server answers in canonical form, so what is
    written and what is read back compare equal."""
    out = copy.deepcopy(hpa)
    spec = out.get("spec") or {}
    for m in spec.get("metrics") or []:
        for body in m.values():
            target = body.get("target") if isinstance(body, dict) else None
            for key in ("value", "averageValue"):
                if target and target.get(key) is not None and not isinstance(target[key], str):
                    target[key] = canonical_quantity(target[key])
    for rules in (spec.get("behavior") or {}).values():
        if isinstance(rules, dict) and rules.get("tolerance") is not None and not isinstance(rules["tolerance"], str):
            rules["tolerance"] = canonical_quantity(rules["tolerance"])
    return out
