"""``render --to keda`` then ``import --from keda`` is a fixed point for every policy KEDA
expresses without a loss line: the policies under examples/ (each metric of the user's own
read from a Prometheus source, as a run configuration would say) and the cases of
keda_cases.LOSSLESS — ``render(import(render(p))) == render(p)``, the import loses nothing,
and ``decide`` under ``kubernetes`` answers the same for ``p`` and ``import(render(p))``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scalebridge import decide
from scalebridge.testing.requests import NOW, pods
from scalebridge.translate import import_native, render

from .keda_cases import LOSSLESS, target

ROOT = Path(__file__).resolve().parents[4]


def _example_policies() -> list[tuple[str, dict, dict | None]]:
    """(file, policy, the request it comes in, if any) for every policy under examples/."""
    out = []
    for f in sorted((ROOT / "examples").rglob("*")):
        if f.suffix not in (".json", ".yaml") or "plugin" in f.parts:
            continue
        doc = json.loads(f.read_text()) if f.suffix == ".json" else yaml.safe_load(f.read_text())
        if not isinstance(doc, dict):
            continue
        if isinstance(doc.get("policy"), dict):
            out.append((str(f.relative_to(ROOT)), doc["policy"], doc))
        elif "metrics" in doc or "max_replicas" in doc:
            out.append((str(f.relative_to(ROOT)), doc, None))
    return out


EXAMPLES = _example_policies()


def _target_for(policy: dict) -> dict:
    own = [m["name"] for m in policy.get("metrics") or [] if m["type"] not in ("resource", "container_resource")]
    return target(*own)


def _round_trip(policy: dict) -> tuple[dict, dict, object]:
    ref = _target_for(policy)
    native, losses = render(policy, "keda", ref)
    back, back_losses = import_native(native, "keda")
    assert not back_losses.lines, back_losses.lines
    again, again_losses = render(back, "keda", ref)
    assert again == native
    assert not again_losses.lines
    return native, back, losses


def _outcome(request: dict, policy: dict) -> tuple:
    r = decide({**request, "policy": policy, "semantics": "kubernetes"}, "kubernetes")
    return r["desired_replicas"], r["reason"]


@pytest.mark.parametrize("name,policy,request_", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_every_example_policy_that_renders_without_loss_comes_back_the_same(name, policy, request_):
    native, losses = render(policy, "keda", _target_for(policy))
    if losses.lines:
        pytest.skip(f"{name} loses {losses.lines[0]}")
    _, back, _ = _round_trip(policy)
    if request_ is not None:
        assert _outcome(request_, back) == _outcome(request_, policy)


def test_examples_render_without_loss_often_enough_to_count():
    lossless = [n for n, p, _ in EXAMPLES if not render(p, "keda", _target_for(p))[1].lines]
    assert len(lossless) >= 10, lossless


def _request(policy: dict, values: dict | None, current: int = 3) -> dict:
    obs: dict = {"members": pods(current), "metrics": {}}
    for m in policy["metrics"]:
        if m["type"] == "resource":
            usage = {"cpu": "800m", "memory": "700Mi"}[m["name"]]
            members = {p["name"]: usage for p in obs["members"]}
            for p in obs["members"]:
                p["requests"] = {"cpu": "1", "memory": "1Gi"}
            obs["metrics"][m["name"]] = {"members": members, "timestamp": NOW - 10, "window": 30}
    for k, v in (values or {}).items():
        obs["metrics"][k] = {"value": v, "timestamp": NOW - 10}
    return {"now": NOW, "current_replicas": current, "observations": obs}


@pytest.mark.parametrize("case", sorted(LOSSLESS))
def test_lossless_policies_are_a_fixed_point_and_decide_the_same(case):
    policy, values = LOSSLESS[case]
    native, back, losses = _round_trip(policy)
    assert not losses.lines, losses.lines
    for current in (0, 1, 3, 8):
        req = _request(policy, values, current)
        assert _outcome(req, back) == _outcome(req, policy), current


def test_import_gives_back_the_policy_itself():
    policy, _ = LOSSLESS["every-source"]
    _, back, _ = _round_trip(policy)
    # and says what KEDA >= 2.20.2 does with a negative scaler value (kedacore/keda#7889)
    assert back == {"semantics": "kubernetes", "invalid_values_as_zero": True, **policy}


def test_a_failed_metric_falls_back_the_same_way_after_the_round_trip():
    policy, _ = LOSSLESS["prometheus-fallback"]
    _, back, _ = _round_trip(policy)
    req = {"now": NOW, "current_replicas": 3,   # the HPA without behavior: up to max(2 × 3, 4) at once
           "observations": {"metrics": {"requests": {"error": "prometheus: connection refused"}}},
           "state": {"fallback.failures": {"requests": 3}}}
    assert _outcome(req, back) == _outcome(req, policy) == (6, "Fallback")
