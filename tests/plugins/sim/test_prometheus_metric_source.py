"""``scalebridge run`` with a Prometheus metric source on a ``sim`` target decides
as with the simulated world's own metrics carrying the same numbers: two sim
targets on the same trace and fleet under ``--clock virtual``, one reading the
external metric the world publishes, one reading a Prometheus series holding
those numbers (the load of each tick, stamped at the tick's end, which the world
publishes one metric lag later), decide the same size at every sync."""
from __future__ import annotations

import json

import yaml

from scalebridge.cli import main
from scalebridge.simulator.scenario import load_workload
from scalebridge_prometheus.fake_server import PrometheusServer
from tests.backtest.conftest import TRACE

POLICY = {"semantics": "kubernetes", "min_replicas": 1, "max_replicas": 200,
          "metrics": [{"type": "external", "name": "rps", "target": {"type": "AverageValue", "average_value": 2}}]}
REF = {"trace": str(TRACE), "scale": "1/60", "duration": "2h", "capacity": 10, "startup": 60}


def test_prometheus_and_the_simulated_world_carrying_the_same_numbers_decide_alike(tmp_path):
    w = load_workload(trace=str(TRACE), scale=1 / 60, tick_seconds=15.0, duration_seconds=7200)
    t0, tick = w.start_time, w.tick_seconds
    with PrometheusServer(retention="100y") as prom:
        # tick j's load at its end; the warm start's first load before t0, as the world pads it
        samples = [(t0 - tick, w.load[0]), (t0, w.load[0])] + [(t0 + (j + 1) * tick, x) for j, x in enumerate(w.load)]
        prom.add({"__name__": "rps", "job": "web"}, samples)
        targets = [{"name": "native", "provider": "sim", "policy": "p", "ref": REF},
                   {"name": "prom", "provider": "sim", "policy": "p", "ref": REF,
                    "metrics": {"rps": {"source": {"metric_source": "prom", "query": 'sum(rps{job="web"})'}}}}]
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump({"metric_sources": {"prom": {"type": "prometheus", "url": prom.url}},
                                        "providers": {"sim": {}}, "policies": {"p": POLICY}, "targets": targets}))
        audit = tmp_path / "audit.jsonl"
        assert main(["run", str(path), "--clock", "virtual", "--until", "2h", "--audit", str(audit),
                     "--state", str(tmp_path / "s.db")]) == 0
        queries = sum(1 for p, _ in prom.requests if p == "/api/v1/query")
    recs: dict[str, list] = {"native": [], "prom": []}
    for r in map(json.loads, audit.read_text().splitlines()):
        recs[r["target"]].append((r["time"], r["current_replicas"], r["desired_replicas"], r["reason"], r["action"]))
    assert len(recs["native"]) == len(recs["prom"]) == queries == 480       # every 15 s for 2 hours
    assert recs["prom"] == recs["native"]
    assert len({d for _, _, d, _, _ in recs["prom"]}) >= 3                  # it scaled, more than once
