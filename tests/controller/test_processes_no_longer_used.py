"""``processes:`` and ``--processes`` of earlier releases (shard processes for the
in-process targets, removed once one process met the sync goal): a configuration
or a command line that still sets them runs as before, in one process, and says
once that the setting no longer does anything."""
from __future__ import annotations

import json

from scalebridge.controller.build import NO_LONGER_USED


def test_validate_warns_of_processes_with_its_line_and_passes(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 1.8}}], processes=4)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("processes:"))
    code, out, err = scalebridge("validate", path)
    assert code == 0, err
    column = len("processes: ") + 1   # where the value is, as every file:line:column of the configuration
    assert f"{path}:{line}:{column}: processes: warning: {NO_LONGER_USED['processes']}" in err.splitlines()
    assert "ok" in out
    code, _, _ = scalebridge("validate", "--strict", path)
    assert code == 1   # a warning fails --strict, as an ignored part of a policy does


def test_validate_says_nothing_of_processes_when_unset(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 3, "load": 1.8}}])
    code, _, err = scalebridge("validate", path)
    assert code == 0 and "processes" not in err


def test_processes_still_bounded_as_before(write_config, scalebridge):
    path = write_config([{"name": "web", "ref": {"name": "web"}}], processes=0)
    code, _, err = scalebridge("validate", path)
    assert code == 2 and "processes" in err


def test_run_with_processes_decides_every_target_in_one_process(write_config, scalebridge, tmp_path):
    targets = [{"name": f"t{k}", "ref": {"name": f"t{k}", "size": 3, "load": 0.6 + k}} for k in range(6)]
    audits = []
    for n, (extra, flags) in enumerate((({}, ()), ({"processes": 3}, ("--processes", "2")))):
        path = write_config(targets, **extra)
        audit = tmp_path / f"audit-{n}.jsonl"
        code, _, err = scalebridge("run", path, "--once", "--state", tmp_path / f"s{n}.db", "--audit", audit,
                                   *flags)
        assert code == 0, err
        audits.append([{k: v for k, v in json.loads(line).items() if k != "time"}
                       for line in audit.read_text().splitlines()])
        if flags:
            assert "--processes is no longer used" in err
            assert "processes: warning: no longer used" in err
    assert audits[0] == audits[1]
    assert {r["action"] for r in audits[0]} >= {"applied", "unchanged"}
