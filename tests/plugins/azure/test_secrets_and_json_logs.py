"""Secrets outside the configuration file, never printed, and pure JSON logs, through
the real azure-identity ``ClientSecretCredential`` against the local ARM server's
token endpoint (which accepts only its own client secret).

- ``client_secret: ${AZURE_CLIENT_SECRET}`` expands from the environment (the issue:
  the token endpoint received the literal ``${AZURE_CLIENT_SECRET}`` while
  ``validate`` said ok); ``client_secret_file:`` reads a mounted Secret;
- no output of a failing run (stderr, audit, ``observe``, ``validate``, ``state
  show``) holds the secret, nor an error about a secret in the wrong field;
- under ``--log-format json`` every stderr line is one JSON object, the SDKs' too.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from scalebridge_azure.fake_server import ArmServer

from .conftest import SUB

SECRET = "AZSECRET-7f3k9Q-5fd0c1e2"
POLICY = {"semantics": "azure", "profiles": [{"name": "default", "capacity": {"minimum": 1, "maximum": 5,
                                                                             "default": 2}, "rules": []}]}


@pytest.fixture
def arm():
    with ArmServer(client_secret=SECRET) as server:
        server.add_scale_set(SUB, "shop", "web", capacity=2)
        yield server


def _config(tmp_path, arm, credential) -> str:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({
        "providers": {"azure": {"subscription_id": SUB, "arm_endpoint": arm.url, "ca_bundle": arm.ca_file,
                                "credential": credential}},
        "policies": {"p": POLICY},
        "targets": [{"name": "web", "provider": "azure", "policy": "p",
                     "ref": {"resource_group": "shop", "scale_set": "web"}}]}))
    return str(path)


def _cli(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    import os
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "scalebridge.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=full, cwd=cwd)


def _principal(arm, **secret) -> dict:
    return {"tenant_id": arm.tenant_id, "client_id": "scalebridge", "authority": arm.authority, **secret}


def test_a_secret_from_the_environment_reaches_the_token_endpoint(arm, tmp_path):
    path = _config(tmp_path, arm, _principal(arm, client_secret="${AZURE_CLIENT_SECRET}"))
    done = _cli("run", path, "--once", "--state", tmp_path / "s.db", "--audit", "-",
                env={"AZURE_CLIENT_SECRET": SECRET})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["current_replicas"] == 2
    assert SECRET not in done.stdout + done.stderr
    # without the variable: a configuration error naming it, file and line — not a literal sent
    unset = _cli("validate", path)
    assert unset.returncode == 2
    assert "AZURE_CLIENT_SECRET is not set" in unset.stderr and f"{path}:" in unset.stderr
    assert "credential.client_secret" in unset.stderr


def test_a_secret_in_a_file_reaches_the_token_endpoint(arm, tmp_path):
    (tmp_path / "secret").write_text(SECRET + "\n")   # as a Kubernetes Secret is mounted
    path = _config(tmp_path, arm, _principal(arm, client_secret_file="secret"))
    done = _cli("run", path, "--once", "--state", tmp_path / "s.db")
    assert done.returncode == 0, done.stderr
    both = _config(tmp_path, arm, _principal(arm, client_secret="x" * 10, client_secret_file="secret"))
    refused = _cli("validate", both)
    assert refused.returncode == 2 and "not both" in refused.stderr


def test_a_literal_dollar_brace_is_written_doubled(tmp_path, arm):
    path = _config(tmp_path, arm, _principal(arm, client_secret="$${NOT_A_VARIABLE}"))
    from scalebridge.controller.configfile import load_config
    loaded = load_config(path)
    assert loaded.config.providers["azure"]["credential"]["client_secret"] == "${NOT_A_VARIABLE}"


def test_no_output_of_a_failing_run_holds_the_secret(arm, tmp_path):
    """A wrong secret fails every sync; the right one, given in the environment and
    also put by mistake where it does not belong, is never printed."""
    wrong = "WRONG-" + SECRET[::-1]
    env = {"AZURE_CLIENT_SECRET": wrong}
    path = _config(tmp_path, arm, _principal(arm, client_secret="${AZURE_CLIENT_SECRET}"))
    outputs = []
    run = _cli("run", path, "--once", "--state", tmp_path / "s.db", "--audit", tmp_path / "audit.jsonl", env=env)
    assert run.returncode == 1
    outputs += [run.stdout, run.stderr, (tmp_path / "audit.jsonl").read_text()]
    for args in (("observe", path), ("observe", path, "--output", "json"), ("validate", path),
                 ("state", "show", "--state", tmp_path / "s.db"),
                 ("run", path, "--once", "--state", tmp_path / "s2.db", "--log-format", "json")):
        done = _cli(*args, env=env)
        outputs += [done.stdout, done.stderr]
    text = "\n".join(outputs)
    assert "web" in text and "failed" in text
    assert wrong not in text
    # a secret put where a mapping belongs is named by its key, never printed
    misplaced = _config(tmp_path, arm, "${AZURE_CLIENT_SECRET}")
    bad = _cli("validate", misplaced, env=env)
    assert bad.returncode == 2 and "credential" in bad.stderr
    assert wrong not in bad.stdout + bad.stderr
    literal = _config(tmp_path, arm, SECRET)
    bad = _cli("validate", literal)
    assert bad.returncode == 2 and SECRET not in bad.stdout + bad.stderr


def test_a_secret_of_the_wrong_type_is_a_configuration_error(arm, tmp_path):
    """The issue: a list as client_secret passed validate."""
    path = _config(tmp_path, arm, _principal(arm, client_secret=["a", "list"]))
    done = _cli("validate", path)
    assert done.returncode == 2 and "credential.client_secret" in done.stderr and "a list" in done.stderr
    assert "'a'" not in done.stderr


@pytest.mark.parametrize("kind", ["service principal", "default chain"])
def test_json_logs_are_json_line_by_line_with_a_failing_credential(arm, tmp_path, kind):
    """The issue: azure-identity's warnings, 13 lines of DefaultAzureCredential's chain
    per failed sync and the final summary came out as plain text between the JSON."""
    credential = _principal(arm, client_secret="not-the-secret-at-all") if kind == "service principal" \
        else "default"
    path = _config(tmp_path, arm, credential)
    done = _cli("run", path, "--once", "--state", tmp_path / "s.db", "--log-format", "json")
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines
    records = [json.loads(line) for line in lines]   # every line: one JSON object
    assert any("web" in json.dumps(r) and "failed" in json.dumps(r) for r in records)
    assert any(r.get("command") == "scalebridge run" for r in records), "the summary line is a record too"


def test_a_secret_with_a_backslash_and_a_quote_in_the_wrong_field_is_masked_in_every_encoding(arm, tmp_path):
    """A secret put by mistake in ``arm_endpoint``: the messages about that field show
    it as Python's repr writes it (``\\\\``, ``\\"``), in JSON, URL-quoted; none of
    those forms is printed. Before, a plain secret there was masked and one holding
    ``\\`` and ``"`` came out in repr form from ``observe``, ``validate`` and ``run``."""
    from urllib.parse import quote
    secret = 'AZ\\SECRET"7f3k9Q 5fd0c1e2'
    env = {"AZURE_CLIENT_SECRET": secret}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({
        "providers": {"azure": {"subscription_id": SUB, "arm_endpoint": "${AZURE_CLIENT_SECRET}",
                                "ca_bundle": arm.ca_file,
                                "credential": _principal(arm, client_secret="${AZURE_CLIENT_SECRET}")}},
        "policies": {"p": POLICY},
        "targets": [{"name": "web", "provider": "azure", "policy": "p",
                     "ref": {"resource_group": "shop", "scale_set": "web"}}]}))
    outputs = []
    for args in (("observe", path), ("observe", path, "--output", "json"), ("validate", path),
                 ("run", path, "--once", "--state", tmp_path / "s.db", "--audit", "-"),
                 ("run", path, "--once", "--state", tmp_path / "s2.db", "--log-format", "json")):
        done = _cli(*args, env=env)
        assert done.returncode != 0, args   # the endpoint is no URL: refused, naming the field
        outputs += [done.stdout, done.stderr]
    text = "\n".join(outputs)
    assert "arm_endpoint" in text and "***" in text
    forms = {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1], quote(secret, safe=""), quote(secret),
             json.dumps(repr(secret)[1:-1])[1:-1], "SECRET\"7f3k9Q", "SECRET\\\"7f3k9Q", "SECRET%227f3k9Q"}
    for form in forms:
        assert form not in text, form
