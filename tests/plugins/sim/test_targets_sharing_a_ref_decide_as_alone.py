"""Sim targets that share a ref (the same workload and fleet: a fleet of thousands is
written this way) share its load and fleet model, read once — and each still decides,
sync for sync, exactly as it does as the configuration's only target."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from scalebridge.cli import main

ROOT = Path(__file__).resolve().parents[3]
POLICY = str(ROOT / "examples" / "run" / "policies" / "web.yaml")
REF = {"workload": "flash_crowd", "seed": 5, "duration": "4h", "capacity": 80, "startup": "uniform:30,90"}


def _run(tmp_path: Path, name: str, targets: list[dict]) -> dict[str, list[tuple]]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"providers": {"sim": {}}, "targets": targets}))
    audit = tmp_path / f"{name}.jsonl"
    assert main(["run", str(path), "--clock", "virtual", "--until", "4h", "--state", str(tmp_path / f"{name}.db"),
                 "--audit", str(audit)]) == 0
    out: dict[str, list[tuple]] = {}
    for line in audit.read_text().splitlines():
        r = json.loads(line)
        out.setdefault(r["target"], []).append((r["time"], r["current_replicas"], r["desired_replicas"],
                                                r["action"]))
    return out


def test_targets_sharing_a_ref_each_decide_as_they_do_alone(tmp_path, capsys):
    def target(name: str, semantics: str, **ref) -> dict:
        return {"name": name, "provider": "sim", "policy": POLICY, "semantics": semantics, "ref": {**REF, **ref}}

    fleet = [target("a", "kubernetes"), target("b", "kubernetes"), target("c", "gce"),
             target("d", "scalebridge", capacity=95)]
    together = _run(tmp_path, "together", fleet)
    assert sum(action == "applied" for _, _, _, action in together["a"]) >= 3   # the fleets do move
    for t in fleet:
        alone = _run(tmp_path, f"alone-{t['name']}", [t])
        assert together[t["name"]] == alone[t["name"]]
    assert together["a"] == together["b"]            # the same ref and semantics: the same decisions
    assert together["d"] != together["a"]            # another capacity: another fleet
