"""``scalebridge run CONFIG --once`` against the local droplets API, as a cron job runs
it: a pool scales from its droplets' CPU as the ``scalebridge`` semantics says
(``ceil(size × average / target)``, docs/semantics.md), a pool its own autoscaler sizes
is refused, and the API's refusals reach the audit log with their kind."""
from __future__ import annotations

import json
import math

from scalebridge.cli import main

TOKEN = "test-token-5f1c2a9e"


class Run:
    """``scalebridge run CONFIG --once`` with an audit log and a state file of its own."""

    def __init__(self, tmp_path, state: str = "state.db"):
        self.audit, self.state = tmp_path / f"{state}.audit.jsonl", tmp_path / state
        self.seen = 0

    def __call__(self, config, *flags: str) -> tuple[int, list[dict]]:
        rc = main(["run", str(config), "--once", "--audit", str(self.audit), "--state", str(self.state), *flags])
        lines = self.audit.read_text().splitlines() if self.audit.exists() else []
        new, self.seen = [json.loads(line) for line in lines[self.seen:]], len(lines)
        return rc, new


def test_a_pool_of_2_at_90_percent_cpu_grows_to_3_and_dry_run_writes_nothing(api, droplets_config, tmp_path):
    api.add_pool("web", size=2)
    api.cpu("web", 90.0)
    config, run = droplets_config(), Run(tmp_path)
    rc, [rec] = run(config, "--dry-run")
    assert rc == 0 and rec["action"] == "dry_run" and rec["desired_replicas"] == math.ceil(2 * 90 / 60)
    assert rec["provider"] == "droplets" and rec["semantics"] == "scalebridge"
    assert api.pool("web").size == 2 and api.count("PUT") == 0
    rc, [rec] = run(config)
    assert rc == 0 and rec["action"] == "applied" and rec["desired_replicas"] == 3
    pool = api.pool("web")
    assert pool.size == 3 and [d.status for d in pool.droplets] == ["active", "active", "new"]


def test_a_resize_in_progress_gets_no_second_one(api, droplets_config, tmp_path):
    api.resize_seconds = 3600
    api.add_pool("web", size=2)
    api.cpu("web", 90.0)
    config, run = droplets_config(), Run(tmp_path)
    assert run(config)[1][0]["action"] == "applied"
    api.cpu("web", 95.0)
    rc, [rec] = run(config)
    assert rc == 0 and rec["action"] == "in_flight" and "pool web is resizing to 3" in rec["note"]
    assert api.count("PUT", "/size$") == 1


def test_a_pool_whose_own_autoscaler_is_enabled_is_refused_naming_it(api, droplets_config, tmp_path, capsys):
    api.add_pool("web", size=2, autoscaler={"enabled": True, "min": 1, "max": 6, "target_cpu_percent": 60,
                                            "cooldown_seconds": 300})
    api.cpu("web", 90.0)
    rc, [rec] = Run(tmp_path)(droplets_config())
    assert rc == 1 and rec["action"] == "refused"
    assert "pool web's own autoscaler (enabled: 1 to 6 droplets at 60 % CPU)" in rec["error"]
    assert "web-pool" in capsys.readouterr().err
    assert api.pool("web").size == 2 and api.count("PUT") == 0


def test_throttling_and_a_failing_api_reach_the_audit_log_with_their_kind(api, droplets_config, tmp_path, capsys):
    api.add_pool("web", size=2)
    api.cpu("web", 90.0)
    config = droplets_config()
    api.fail(429, retry_after=30, match=r"^GET /v1/pools/web$")
    rc, [rec] = Run(tmp_path, "a.db")(config)
    assert rc == 1 and rec["action"] == "failed" and rec["error_kind"] == "throttled"
    assert "HTTP 429 too_many_requests" in rec["error"]
    api.fail(503, match=r"^GET /v1/pools/web/metrics/cpu$")
    rc, [rec] = Run(tmp_path, "b.db")(config)
    assert rc == 1 and rec["action"] == "failed" and rec["error_kind"] == "transient"
    assert api.pool("web").size == 2 and api.count("PUT") == 0
    out, err = capsys.readouterr()
    assert TOKEN not in out + err + "".join(f.read_text() for f in tmp_path.glob("*.audit.jsonl"))
