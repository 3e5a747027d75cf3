"""``scalebridge render --to droplets``, ``import --from droplets`` and ``apply``,
run as a user runs them (scalebridge.cli.main), against the local droplets API."""
from __future__ import annotations

import json

import pytest
import yaml

from scalebridge.cli import main

POLICY = {"name": "web", "min_replicas": 2, "max_replicas": 12,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization", "average_utilization": 60}}],
          "behavior": {"scale_down": {"stabilization_window_seconds": 300}}}


@pytest.fixture(autouse=True)
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)    # apply looks for the default state file here


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_render_writes_the_pools_autoscaler_and_import_reads_it_back(tmp_path, capsys):
    (tmp_path / "web.yaml").write_text(yaml.safe_dump(POLICY))
    code, out, err = run(capsys, "render", "web.yaml", "--to", "droplets", "--target", "{pool: web}")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"name": "web", "autoscaler": {"enabled": True, "min": 2, "max": 12,
                                                             "target_cpu_percent": 60, "cooldown_seconds": 300}}
    (tmp_path / "web.json").write_text(out)
    code, out, err = run(capsys, "import", "web.json", "--from", "droplets")
    assert (code, err) == (0, "")
    assert yaml.safe_load(out) == {"semantics": "scalebridge", **POLICY}
    (tmp_path / "imported.yaml").write_text(out)
    code, again, _ = run(capsys, "render", "imported.yaml", "--to", "droplets", "--target", "{pool: web}")
    assert code == 0 and json.loads(again) == json.loads((tmp_path / "web.json").read_text())


def test_render_says_what_it_loses_and_strict_fails_on_it(tmp_path, capsys):
    rules = {**POLICY, "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 85,
                                  "action": {"direction": "Increase", "type": "ChangeCount", "value": 2}}]}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))
    code, out, err = run(capsys, "render", "rules.yaml", "--to", "droplets", "--strict")
    assert code == 1 and json.loads(out)["name"] == "PLACEHOLDER-set-with-target"
    assert err.splitlines() == [
        "scalebridge render: note: name: placeholder 'PLACEHOLDER-set-with-target': pass --target pool (the pool's "
        "name)",
        "scalebridge render: lost: rules[0]: a pool's autoscaler has no threshold rules; dropped"]
    code, _, err = run(capsys, "render", "rules.yaml", "--to", "droplets", "--target", "{pol: web}")
    assert (code, err) == (2, "scalebridge render: --target.pol: unknown key; did you mean 'pool'? valid keys for "
                              "--to droplets: pool\n")


def test_apply_creates_the_autoscaler_then_finds_it_unchanged_then_updates_it(api, droplets_config, capsys):
    api.add_pool("web", size=2)
    config = str(droplets_config(POLICY))
    code, out, err = run(capsys, "apply", config, "--dry-run")
    assert (code, out, err) == (0, "web-pool: autoscaler web: create\n", "")
    assert api.pool("web").autoscaler is None and api.count("PUT") == 0
    code, out, _ = run(capsys, "apply", config)
    assert (code, out) == (0, "web-pool: autoscaler web: create\n")
    assert api.pool("web").autoscaler == {"enabled": True, "min": 2, "max": 12, "target_cpu_percent": 60,
                                          "cooldown_seconds": 300}
    code, out, _ = run(capsys, "apply", config)
    assert (code, out) == (0, "web-pool: unchanged\n") and api.count("PUT") == 1
    hotter = {**POLICY, "metrics": [{**POLICY["metrics"][0], "target": {"type": "Utilization",
                                                                        "average_utilization": 70}}]}
    code, out, _ = run(capsys, "apply", str(droplets_config(hotter)), "--dry-run")
    assert (code, out) == (0, "web-pool: autoscaler web: target_cpu_percent: 60 -> 70\n")
    assert api.pool("web").autoscaler["target_cpu_percent"] == 60


def test_apply_says_what_the_policy_loses_and_a_refusal_fails_the_target(api, droplets_config, token_file, capsys):
    api.add_pool("web", size=2)
    lossy = {**POLICY, "tolerance": 0.2}
    token_file.write_text("read-only-token-77\n")
    code, out, err = run(capsys, "apply", str(droplets_config(lossy)))
    assert out == ("web-pool: lost: tolerance: a pool's autoscaler has a fixed tolerance of 0.1; dropped\n"
                   "web-pool: autoscaler web: create\n")
    assert code == 1 and err == ("scalebridge apply: web-pool: forbidden: PUT /v1/pools/web/autoscaler: HTTP 403 "
                                 "forbidden: this token may only read\n")
    assert api.pool("web").autoscaler is None
