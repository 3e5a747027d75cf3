"""docs/kubernetes.md against the kubernetes semantics: the error messages it quotes, what
happens before the metrics, the legacy scale-up cap."""

import json
from pathlib import Path

from scalebridge import decide


ROOT = Path(__file__).resolve().parents[2]


REQUESTS = ROOT / "examples" / "requests"


def request(name: str) -> dict:
    return json.loads((REQUESTS / name).read_text())


def _k8s(mod) -> dict:
    r = request("resource-utilization.json")
    mod(r)
    return decide(r)


def test_kubernetes_md_missing_request_message():
    resp = _k8s(lambda r: r["observations"]["members"][0].pop("requests"))
    assert resp["reason"] == "InvalidMetrics" and resp["desired_replicas"] == 3
    assert "missing request for cpu in Pod web-0" in resp["error"]


def test_kubernetes_md_invalid_metrics_message():
    def two(r):
        r["policy"]["metrics"].append({"type": "pods", "name": "nosuch",
                                       "target": {"type": "AverageValue", "average_value": 10}})
        r["observations"]["metrics"]["cpu"]["members"] = {f"web-{i}": "100m" for i in range(3)}
    resp = _k8s(two)
    assert resp["error"].startswith("invalid metrics (1 invalid out of 2), first error is: ")
    assert resp["desired_replicas"] == 3


def test_kubernetes_md_before_the_metrics():
    assert _k8s(lambda r: r.update(current_replicas=0))["reason"] == "ScalingDisabled"
    resp = _k8s(lambda r: r["policy"].update(max_replicas=2))
    assert (resp["desired_replicas"], resp["reason"]) == (2, "TooManyReplicas")


def test_kubernetes_md_legacy_scale_up_cap():
    def legacy(r):
        r["policy"].pop("behavior")
        r["observations"]["metrics"]["cpu"]["members"] = {f"web-{i}": "5000m" for i in range(3)}
    assert _k8s(legacy)["desired_replicas"] == 6     # max(2 x 3, 4)
