"""The audit log is always valid JSON Lines: a record is written whole or not at all
— a write its disk cuts short is cut back to its last whole record — and a file that
ends in a torn record all the same (a crash in the middle of a write) is repaired
when the controller opens it, with a warning naming the bytes dropped. It is rotated
by size (``--audit-max-bytes``, ``--audit-keep``), or reopened on SIGUSR1 for
logrotate. Before, a disk that filled mid-write left a torn JSON line at the end of
the audit, and after a restart one audit line was not JSON.

The full disk is a real tmpfs (mounting one needs root; the tests say so and skip
elsewhere)."""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time

import pytest

from scalebridge.controller.audit import AuditError, AuditLog, read_records

from .conftest import FAKE, fill


def _record(k: int, pad: int = 200) -> dict:
    return {"time": 1.8e9 + k, "target": f"web-{k}", "action": "unchanged", "note": "x" * pad}


def _lines_valid(path) -> list[dict]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), f"a torn record at the end: {data[-80:]!r}"
    return [json.loads(line) for line in data.splitlines()]


def test_a_disk_that_fills_mid_write_leaves_whole_records_only(tmpfs):
    audit = tmpfs / "audit.jsonl"
    log = AuditLog(str(audit), max_bytes=0)
    fill(tmpfs, leave=8192)     # two pages: room for one batch of 20 records (~5 KB), not for two
    with pytest.raises(AuditError) as e:
        for k in range(0, 400, 20):
            log.write([_record(j) for j in range(k, k + 20)])
    assert "No space left on device" in str(e.value) and "the file ends with its last whole record" in str(e.value)
    records = _lines_valid(audit)
    assert 0 < len(records) < 400 and records == [json.loads(json.dumps(_record(j))) for j in range(len(records))]
    with pytest.raises(AuditError):   # a broken log stays broken: the controller stops
        log.write([_record(0)])


def test_a_run_whose_audit_disk_fills_exits_1_and_leaves_valid_json_lines(write_config, tmpfs, tmp_path, scalebridge):
    targets = [{"name": f"web-{i}-{'x' * 40}", "ref": {"name": f"w{i}", "size": 2, "load": 3.0}} for i in range(40)]
    path = write_config(targets, providers={"fake": {"type": FAKE}})
    audit = tmpfs / "audit.jsonl"
    fill(tmpfs, leave=8192)     # one sync's 40 records are about 14 KB
    code, _, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db", "--audit", audit)
    assert code == 1 and "Traceback" not in err
    [said] = [line for line in err.splitlines() if line.startswith("scalebridge run:")]
    assert "No space left on device" in said and str(audit) in said
    before = _lines_valid(audit)
    assert len(before) < 40
    (tmpfs / "filler").unlink()   # room again: the restart audits what was not, and the file stays valid
    code, _, err = scalebridge("run", path, "--once", "--state", tmp_path / "s.db", "--audit", audit)
    assert code == 0, err
    after = _lines_valid(audit)
    # the sync whose audit was cut short: every write of it is audited at the restart as
    # recovered (those already in the file a second time, none lost), then the restart's own
    recovered = [r["target"] for r in after[len(before):] if r.get("recovered")]
    assert sorted(recovered) == sorted(t["name"] for t in targets)
    assert len(after) == len(before) + 40 + 40


def test_a_torn_tail_is_dropped_when_the_file_is_opened(tmp_path, caplog):
    audit = tmp_path / "audit.jsonl"
    whole = "".join(json.dumps(_record(k)) + "\n" for k in range(3))
    torn = json.dumps(_record(3))[:57]
    audit.write_text(whole + torn)
    caplog.set_level(logging.WARNING, logger="scalebridge.controller")
    log = AuditLog(str(audit))
    log.write([_record(4)])
    log.close()
    assert [r["target"] for r in _lines_valid(audit)] == ["web-0", "web-1", "web-2", "web-4"]
    assert log.repaired == (57, len(whole.encode()))
    [w] = [r for r in caplog.records if "torn record" in r.getMessage()]
    assert w.fields == {"file": str(audit), "bytes_dropped": 57, "offset": len(whole.encode())}
    # a last line that ends but is no record (an older torn write glued to nothing) goes too
    audit.write_text(whole + '{"time": 1, "tar\n')
    AuditLog(str(audit)).close()
    assert len(_lines_valid(audit)) == 3


def test_a_reader_names_the_line_of_anything_that_is_not_a_record(tmp_path):
    audit = tmp_path / "audit.jsonl"
    audit.write_text(json.dumps(_record(0)) + "\n" + "[1, 2]\n")
    with pytest.raises(AuditError, match=r"audit.jsonl:2: not a JSON object"):
        list(read_records(str(audit)))
    audit.write_text(json.dumps(_record(0)) + "\n" + '{"time"')
    with pytest.raises(AuditError, match=r"audit.jsonl:2: a torn record at the end of the file \(7 bytes"):
        list(read_records(str(audit)))
    audit.write_text(json.dumps(_record(0)) + "\n")
    assert [r["target"] for r in read_records(str(audit))] == ["web-0"]


def test_the_audit_is_rotated_by_size_and_a_sync_never_straddles_two_files(tmp_path):
    audit = tmp_path / "audit.jsonl"
    log = AuditLog(str(audit), max_bytes=4000, keep=3)
    batches = [[_record(k * 7 + j) for j in range(7)] for k in range(30)]   # ~1,900 bytes a batch
    for b in batches:
        log.write(b)
    log.close()
    files = [audit] + [tmp_path / f"audit.jsonl.{k}" for k in (1, 2, 3)]
    assert all(f.exists() for f in files) and not (tmp_path / "audit.jsonl.4").exists()
    kept = []
    for f in reversed(files):
        records = _lines_valid(f)
        assert f.stat().st_size <= 4000 and len(records) % 7 == 0, f
        kept += records
    # the newest files hold the last batches, in order, each whole
    assert [r["target"] for r in kept] == [r["target"] for b in batches[-len(kept) // 7:] for r in b]


@pytest.mark.slow
def test_sigusr1_reopens_the_audit_log_for_logrotate(write_config, tmp_path):
    path = write_config([{"name": "web", "ref": {"name": "web", "size": 2, "load": 3.0}}],
                        providers={"fake": {"type": FAKE}}, sync_period_seconds=1)
    audit = tmp_path / "audit.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "scalebridge.cli", "run", str(path), "--state",
                             str(tmp_path / "s.db"), "--audit", str(audit), "--audit-max-bytes", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not (audit.exists() and audit.read_text().count("\n") >= 2):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        os.rename(audit, tmp_path / "audit.jsonl.1")     # what logrotate does, then its postrotate:
        proc.send_signal(signal.SIGUSR1)
        while not (audit.exists() and audit.read_text().count("\n") >= 2):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "reopening the audit log" in err
    old, new = _lines_valid(tmp_path / "audit.jsonl.1"), _lines_valid(audit)
    assert old and new and old[-1]["time"] < new[0]["time"]


def test_the_commands_defaults_are_the_audit_logs():
    from scalebridge.controller import audit, cli
    assert (cli.DEFAULT_AUDIT_MAX_BYTES, cli.DEFAULT_AUDIT_KEEP) == (audit.DEFAULT_MAX_BYTES, audit.DEFAULT_KEEP)
