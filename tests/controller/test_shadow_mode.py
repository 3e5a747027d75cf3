"""Shadow mode with the fake provider playing the native autoscaler (``ref.native``):
a shadow target is decided beside it, never written; the audit names both sizes, and
where they differ, the first stage at which scalebridge departs."""
from __future__ import annotations

import json

from scalebridge.controller.loop import build_controller
from scalebridge.controller.metrics import Metrics

from .conftest import FAKE

HPA = {"min_replicas": 1, "max_replicas": 20,
       "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}]}
SHORT_WINDOW = dict(HPA, behavior={"scale_down": {"stabilization_window_seconds": 60}})
# a demand that rises and falls twice an hour: the HPA scales both ways, its 300 s window holds
LOAD = {"base": 4.0, "amplitude": 3.0, "period": 1800}


def _target(name="web", *, native=HPA, **ref):
    return {"name": name, "semantics": "kubernetes", "shadow": True,
            "ref": {"name": name, "size": 4, "load": LOAD, **ref,
                    "native": {"policy": native, "semantics": "kubernetes",
                               "name": f"HorizontalPodAutoscaler default/{name}"}}}


def _run(write_config, tmp_path, targets, *, policy=HPA, until=2 * 3600.0, providers=None, metrics=None, **kw):
    path = write_config(targets, policies={"web": policy}, providers=providers, sync_period_seconds=15)
    audit = tmp_path / "audit.jsonl"
    c = build_controller(str(path), clock="virtual", until=until, state=str(tmp_path / "s.db"), audit=str(audit),
                         metrics=metrics, **kw)
    try:
        c.run()
        fake = c.runtime.providers["fake"]
    finally:
        c.close()
    return fake, [json.loads(line) for line in audit.read_text().splitlines()]


def test_the_kubernetes_semantics_beside_an_hpa_it_plays_agrees_on_every_sync(write_config, tmp_path):
    fake, records = _run(write_config, tmp_path, [_target()])
    assert {r["action"] for r in records} == {"shadow"}
    compared = [r["shadow"] for r in records if r["shadow"]["compared"]]
    assert len(compared) == len(records) - 1     # all but the first: nothing earlier to compare with
    assert all(s["agree"] and s["difference"] == 0 and s["inputs_match"] for s in compared)
    # not a world standing still: the native autoscaler scaled both ways, and scalebridge followed
    sizes = [s["native_replicas"] for s in compared]
    assert max(sizes) > 4 and min(sizes) < 4
    assert fake.writes() == 0


def test_a_policy_whose_window_differs_departs_at_the_stabilization_stage(write_config, tmp_path):
    fake, records = _run(write_config, tmp_path, [_target()], policy=SHORT_WINDOW)
    compared = [r["shadow"] for r in records if r["shadow"]["compared"]]
    differ = [s for s in compared if not s["agree"]]
    assert differ, "a 60 s scale-down window beside the HPA's 300 s one scales in sooner"
    assert {s["stage"] for s in differ} == {"stabilization"}
    for s in differ:
        # scales in sooner: fewer than the HPA, whose window still holds a higher recommendation
        assert s["scalebridge_replicas"] < s["native_replicas"]
        assert s["native_reason"] == "ScaleDownStabilized"
        assert s["detail"].endswith(f"; native {s['native_replicas']}")
        assert s["difference"] == s["scalebridge_replicas"] - s["native_replicas"]
    # the same inputs: the difference is the policy's, not the metrics pipeline's
    assert all(s["inputs_match"] for s in compared)
    assert fake.writes() == 0


def test_a_shadow_target_is_never_written_even_when_its_native_autoscaler_errors(write_config, tmp_path):
    providers = {"fake": {"type": FAKE, "faults": {"rate": 1.0, "seed": 1, "calls": ["native_decision"],
                                                   "kinds": ["5xx"]}}}
    # a load that asks for far more than the target has: a controller not in shadow would write every sync
    targets = [_target("web", load=12.0), _target("api", load=12.0, managed_by="HorizontalPodAutoscaler default/api")]
    fake, records = _run(write_config, tmp_path, targets, providers=providers, until=600.0)
    assert fake.writes() == 0 and fake.count("set_size") == 0
    assert {r["action"] for r in records} == {"shadow"}
    assert all(r["shadow"]["compared"] is False and "native_read_error" in r["shadow"] for r in records)
    assert all(r["desired_replicas"] > r["current_replicas"] for r in records if r["time"] == records[0]["time"])
    # a target another autoscaler manages is compared with it, not refused
    assert {r["target"] for r in records} == {"web", "api"}


def test_run_shadow_turns_every_target_into_a_shadow_target(write_config, scalebridge, tmp_path):
    world = tmp_path / "world.json"
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 2, "load": 9.0}}],
                        providers={"fake": {"type": FAKE, "world": str(world)}})
    audit = tmp_path / "audit.jsonl"
    code, _, err = scalebridge("run", path, "--once", "--shadow", "--state", tmp_path / "s.db", "--audit", audit)
    assert code == 0, err
    [rec] = [json.loads(line) for line in audit.read_text().splitlines()]
    assert rec["action"] == "shadow" and rec["desired_replicas"] > rec["current_replicas"]
    from scalebridge.testing.fake import FakeProvider
    assert FakeProvider(world=str(world)).writes() == 0


def test_metrics_count_agreement_and_disagreements_by_stage(write_config, tmp_path):
    metrics = Metrics()
    _, records = _run(write_config, tmp_path, [_target()], policy=SHORT_WINDOW, metrics=metrics)
    compared = [r["shadow"] for r in records if r["shadow"]["compared"]]
    r = metrics.registry

    def value(name, **labels):
        return r.get_sample_value(name, labels)

    disagree = sum(1 for s in compared if not s["agree"])
    assert value("scalebridge_shadow_comparisons_total", target="web", result="agree") == len(compared) - disagree
    assert value("scalebridge_shadow_comparisons_total", target="web", result="disagree") == disagree
    assert value("scalebridge_shadow_comparisons_total", target="web", result="not_compared") == 1
    assert value("scalebridge_shadow_disagreements_total", target="web", stage="stabilization") == disagree
    last = compared[-1]
    assert value("scalebridge_shadow_agreement", target="web") == (1 if last["agree"] else 0)
    assert value("scalebridge_shadow_difference_replicas", target="web") == last["difference"]
    assert value("scalebridge_shadow_native_replicas", target="web") == last["native_replicas"]
