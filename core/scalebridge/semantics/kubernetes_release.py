"""Which Kubernetes release the ``kubernetes`` semantics reproduces, and its feature gates.

A request says which release it reproduces with ``settings.kubernetes_version``
(``"1.37"``; a ``gitVersion`` such as ``"v1.36.2-eks-1a2b"`` is read as 1.36) and may
set kube-controller-manager's ``--feature-gates`` with ``settings.feature_gates``
(``{HPAScaleToZero: true}``). Without a version the newest release scalebridge
reproduces is meant (:data:`NEWEST`); the kubernetes provider fills the version from
the API server's ``/version``.

The gates the HPA controller reads, with each release's default, as
pkg/features/kube_features.go declares them (versioned feature specs):

- ``HPAScaleToZero``: alpha (off) since 1.16; **beta, on by default, in 1.37**
  (KEP-2021, kubernetes/enhancements ``keps/sig-autoscaling/2021-scale-from-zero/kep.yaml``:
  ``beta: "v1.37"``; the v1.37 release blog, "HorizontalPodAutoscaler scale to
  zero … now enabled by default"). What it changes from 1.36 on (the ``ScaledToZero``
  condition, kubernetes/kubernetes#135118) is :mod:`.kubernetes`' to say.
- ``HPAConfigurableTolerance``: alpha (off) in 1.33, **beta, on by default, from
  1.35** (KEP-4951, ``keps/sig-autoscaling/4951-configurable-hpa-tolerance``). With it
  off, the API server drops ``behavior.scaleUp/scaleDown.tolerance`` on write
  (``dropDisabledFields``) and the controller decides with
  ``--horizontal-pod-autoscaler-tolerance``; before 1.33 the field does not exist.

A gate set for a release that does not have it is refused, as kube-controller-manager
refuses an unrecognized gate at start ("unrecognized feature gate").
"""
from __future__ import annotations

import re
from typing import Any, Mapping, NamedTuple, Optional

from ..errors import RequestError

Version = tuple[int, int]

NEWEST: Version = (1, 37)
"""The newest Kubernetes release this semantics reproduces: the default."""
OLDEST_EXACT: Version = (1, 33)
"""The oldest release whose behaviour is reproduced as such; an older one is decided
with the code paths of 1.33 (the decisions that differ before it are in
docs/known-divergences.md)."""
SCALED_TO_ZERO_CONDITION: Version = (1, 36)
"""The release whose HPA records ``ScaledToZero`` and stays paused at zero without it
(kubernetes/kubernetes#135118, "KEP-2021: HPA condition based scaling to zero")."""

#: gate -> ((release it appears or changes stage, default on, stage), …) in release order
FEATURE_GATES: dict[str, tuple[tuple[Version, bool, str], ...]] = {
    "HPAScaleToZero": (((1, 16), False, "alpha"), ((1, 37), True, "beta")),
    "HPAConfigurableTolerance": (((1, 33), False, "alpha"), ((1, 35), True, "beta")),
}

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


def parse_version(text: Any) -> Optional[Version]:
    """``"1.37"``, ``"v1.36.2"``, ``"v1.36.2-eks-1a2b"``, ``"1.35+"`` → (major, minor); None
    for what is not a release number."""
    if not isinstance(text, str):
        return None
    m = _VERSION.match(text.strip().rstrip("+"))
    return (int(m.group(1)), int(m.group(2))) if m else None


def version_text(v: Version) -> str:
    return f"{v[0]}.{v[1]}"


class Release(NamedTuple):
    """One Kubernetes release as a request describes it: its version and the gates on."""
    version: Version
    scale_to_zero: bool           # HPAScaleToZero
    configurable_tolerance: bool  # HPAConfigurableTolerance

    @property
    def name(self) -> str:
        return f"Kubernetes {version_text(self.version)}"

    @property
    def scaled_to_zero_condition(self) -> bool:
        """The 1.36+ controller: zero is paused unless it recorded ``ScaledToZero=True``."""
        return self.version >= SCALED_TO_ZERO_CONDITION


def gate_default(gate: str, version: Version) -> Optional[bool]:
    """``gate``'s default in ``version``, or None where the release has no such gate."""
    on = None
    for since, default, _ in FEATURE_GATES[gate]:
        if version >= since:
            on = default
    return on


def check(kubernetes_version: Optional[str], feature_gates: Optional[Mapping[str, bool]]) -> None:
    """Refuse a version that is no release number, a gate this semantics does not know,
    and a gate set for a release that does not have it (RequestError naming the setting)."""
    version = NEWEST
    if kubernetes_version is not None:
        v = parse_version(kubernetes_version)
        if v is None:
            raise RequestError("$.settings.kubernetes_version",
                               f"{kubernetes_version!r} is not a Kubernetes release such as \"1.37\"")
        version = v
    for gate in feature_gates or {}:
        if gate not in FEATURE_GATES:
            raise RequestError(f"$.settings.feature_gates.{gate}",
                               f"unrecognized feature gate {gate!r}: the kubernetes semantics reproduces "
                               f"{', '.join(FEATURE_GATES)}")
        if gate_default(gate, version) is None:
            since = FEATURE_GATES[gate][0][0]
            raise RequestError(f"$.settings.feature_gates.{gate}",
                               f"unrecognized feature gate {gate!r}: Kubernetes {version_text(version)} has no such "
                               f"gate (it appears in {version_text(since)})")


_RELEASES: dict = {}


def release(kubernetes_version: Optional[str], feature_gates: Optional[Mapping[str, bool]]) -> Release:
    """The release a request's settings describe (checked with :func:`check` first)."""
    key = (kubernetes_version, tuple(sorted(feature_gates.items())) if feature_gates else None)
    r = _RELEASES.get(key)
    if r is None:
        check(kubernetes_version, feature_gates)
        version = parse_version(kubernetes_version) if kubernetes_version is not None else NEWEST
        gates = dict(feature_gates or {})

        def on(gate: str) -> bool:
            return bool(gates[gate]) if gate in gates else bool(gate_default(gate, version))
        r = _RELEASES[key] = Release(version, on("HPAScaleToZero"), on("HPAConfigurableTolerance"))
    return r


def tolerance_note(r: Release) -> Optional[str]:
    """Why ``r`` does not honour a per-HPA tolerance, or None where it does."""
    if r.configurable_tolerance:
        return None
    if r.version < FEATURE_GATES["HPAConfigurableTolerance"][0][0]:
        return (f"{r.name} has no behavior tolerance (the field appears in 1.33, alpha): the API server prunes "
                "it and the HPA decides with --horizontal-pod-autoscaler-tolerance")
    return (f"{r.name} ignores it: the HPAConfigurableTolerance feature gate is off (alpha in 1.33, beta and on by "
            "default from 1.35), so the API server drops the field and the HPA decides with "
            "--horizontal-pod-autoscaler-tolerance")
