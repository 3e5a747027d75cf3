"""examples/plugin/droplets.yaml works as written, its endpoint pointed at the local
droplets API and its token file beside it: it validates, ``run --once --dry-run``
decides for its pool, and ``apply --dry-run`` says what it would create."""
from __future__ import annotations

from pathlib import Path

import yaml

from scalebridge.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "droplets.yaml"
TOKEN = "test-token-5f1c2a9e"


def test_the_example_configuration_validates_runs_and_applies(api, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    config = yaml.safe_load(EXAMPLE.read_text())
    config["providers"]["droplets"]["endpoint"] = api.url
    (tmp_path / config["providers"]["droplets"]["token_file"]).write_text(TOKEN + "\n")
    path = tmp_path / "droplets.yaml"
    path.write_text(yaml.safe_dump(config))
    api.add_pool("web", size=2)
    api.cpu("web", 30.0)
    assert main(["validate", str(path)]) == 0
    assert main(["run", str(path), "--once", "--dry-run", "--audit", "-", "--state", str(tmp_path / "s.db")]) == 0
    assert '"target":"web-pool"' in capsys.readouterr().out
    assert main(["apply", str(path), "--dry-run"]) == 0
    assert capsys.readouterr().out == "web-pool: autoscaler web: create\n"
    assert api.count("PUT") == 0
