"""``scalebridge apply CONFIG`` for a gce target, against the local Compute
REST server with the real google-cloud-compute client: it inserts the group's
autoscaler (https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers/insert),
a second apply changes nothing, a changed policy patches the same autoscaler
(``autoscalers/patch``), ``--dry-run`` writes nothing, and a target with decision state
in the run's store is refused."""
from __future__ import annotations

import pytest

from scalebridge.cli import main
from scalebridge_gce.fake_server import ComputeServer

pytestmark = pytest.mark.slow   # google-cloud-compute's import (about 2 s) and a local REST server

PROJECT = "shop-prod"
ZONE = "europe-west1-b"
REGION = "europe-west1"
CONFIG = """\
providers:
  gce: {{project: {project}, compute_endpoint: "{url}", credentials: anonymous, timeout_seconds: 5,
         operation_wait_seconds: 2}}
policies:
  web:
    name: web-autoscaler
    min_replicas: 2
    max_replicas: 12
    metrics:
      - {{type: resource, name: cpu, target: {{type: Utilization, average_utilization: {target}}}}}
targets:
  - {{name: web-mig, provider: gce, policy: web, ref: {ref}}}
"""
ZONAL = f"{{zone: {ZONE}, instance_group_manager: web}}"
REGIONAL = f"{{region: {REGION}, instance_group_manager: web}}"


@pytest.fixture(scope="module")
def _server():
    with ComputeServer(project=PROJECT) as server:
        yield server


@pytest.fixture
def compute(_server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)     # the default state file is looked for here
    _server.reset()
    _server.op_polls = 0
    yield _server
    _server.reset()


def _apply(compute, tmp_path, capsys, target, *flags, ref=ZONAL, code=0):
    f = tmp_path / "run.yaml"
    f.write_text(CONFIG.format(project=PROJECT, url=compute.endpoint, target=target, ref=ref))
    got = main(["apply", str(f), *flags])
    out, err = capsys.readouterr()
    assert got == code, err
    return out, err


def test_apply_native_inserts_then_patches_one_autoscaler(compute, tmp_path, capsys):
    mig = compute.add_mig("web", zone=ZONE, size=2)
    out, _ = _apply(compute, tmp_path, capsys, 60)
    assert out == f"web-mig: zones/{ZONE}/autoscalers/web-autoscaler: create\n"
    [autoscaler] = compute.autoscalers.values()
    assert autoscaler["name"] == "web-autoscaler"
    assert autoscaler["target"] == mig.link
    # the Compute reference: utilizationTarget is a fraction (0.6 for 60 %)
    assert autoscaler["autoscalingPolicy"] == {"minNumReplicas": 2, "maxNumReplicas": 12,
                                               "cpuUtilization": {"utilizationTarget": 0.6}}
    assert compute.count("POST /compute/v1/projects/shop-prod/zones/europe-west1-b/autoscalers") == 1

    assert _apply(compute, tmp_path, capsys, 60)[0] == "web-mig: unchanged\n"
    assert compute.count("PATCH") == 0

    out, _ = _apply(compute, tmp_path, capsys, 75)
    assert out == (f"web-mig: zones/{ZONE}/autoscalers/web-autoscaler: "
                   "autoscalingPolicy.cpuUtilization.utilizationTarget: 0.6 -> 0.75\n")
    [autoscaler] = compute.autoscalers.values()   # patched in place: still one
    assert autoscaler["autoscalingPolicy"]["cpuUtilization"] == {"utilizationTarget": 0.75}
    assert compute.count("PATCH") == 1
    assert compute.count("POST /compute/v1/projects/shop-prod/zones/europe-west1-b/autoscalers") == 1


def test_a_regional_group_gets_a_region_autoscaler(compute, tmp_path, capsys):
    mig = compute.add_mig("web", region=REGION, size=3)
    out, _ = _apply(compute, tmp_path, capsys, 60, ref=REGIONAL)
    assert out == f"web-mig: regions/{REGION}/autoscalers/web-autoscaler: create\n"
    assert list(compute.autoscalers) == [(PROJECT, f"regions/{REGION}", "web-autoscaler")]
    assert compute.autoscalers[(PROJECT, f"regions/{REGION}", "web-autoscaler")]["target"] == mig.link
    _apply(compute, tmp_path, capsys, 50, ref=REGIONAL)
    [autoscaler] = compute.autoscalers.values()
    assert autoscaler["autoscalingPolicy"]["cpuUtilization"] == {"utilizationTarget": 0.5}


def test_an_autoscaler_under_another_name_is_patched_not_duplicated(compute, tmp_path, capsys):
    """The group's own autoscaler is the one its ``status.autoscaler`` names, whatever its name."""
    mig = compute.add_mig("web", zone=ZONE, size=2, autoscaler_mode="ON")   # the fake names it web-as
    out, _ = _apply(compute, tmp_path, capsys, 60, "--dry-run")
    assert out == (f"web-mig: zones/{ZONE}/autoscalers/web-as: autoscalingPolicy.minNumReplicas: 1 -> 2\n"
                   f"web-mig: zones/{ZONE}/autoscalers/web-as: autoscalingPolicy.maxNumReplicas: 10 -> 12\n")
    assert compute.count("PATCH") == compute.count("POST") == 0
    _apply(compute, tmp_path, capsys, 60)
    assert list(compute.autoscalers) == [(PROJECT, f"zones/{ZONE}", "web-as")]
    policy = compute.autoscalers[(PROJECT, f"zones/{ZONE}", "web-as")]["autoscalingPolicy"]
    assert (policy["minNumReplicas"], policy["maxNumReplicas"]) == (2, 12)
    assert compute.count("PATCH") == 1 and compute.count("POST /compute") == 0
    assert mig.autoscaler.endswith(f"/zones/{ZONE}/autoscalers/web-as")


SCHEDULED = """\
    schedules:
      - {name: office, schedule: "0 8 * * MON-FRI", time_zone: Europe/Paris, duration_seconds: 36000,
         min_required_replicas: 6}
"""


def test_a_schedule_the_policy_dropped_is_removed_by_update(compute, tmp_path, capsys):
    """``autoscalers.patch`` is a JSON merge patch: a map key the body leaves out stays.
    A signal or schedule to remove goes through ``autoscalers.update`` (the resource replaced)."""
    compute.add_mig("web", zone=ZONE, size=2)
    f = tmp_path / "run.yaml"
    text = CONFIG.format(project=PROJECT, url=compute.endpoint, target=60, ref=ZONAL)
    f.write_text(text.replace("targets:", SCHEDULED + "targets:"))
    assert main(["apply", str(f)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    [autoscaler] = compute.autoscalers.values()
    assert list(autoscaler["autoscalingPolicy"]["scalingSchedules"]) == ["office"]
    out, _ = _apply(compute, tmp_path, capsys, 60)
    assert out.startswith(f"web-mig: zones/{ZONE}/autoscalers/web-autoscaler: "
                          "autoscalingPolicy.scalingSchedules: {'office': ")
    assert out.endswith("} -> None\n")
    [autoscaler] = compute.autoscalers.values()
    assert "scalingSchedules" not in autoscaler["autoscalingPolicy"]
    assert compute.count("PUT") == 1 and compute.count("PATCH") == 0
    assert _apply(compute, tmp_path, capsys, 60)[0] == "web-mig: unchanged\n"


def _client(compute):
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import compute_v1
    return compute_v1, compute_v1.AutoscalersClient(
        transport="rest", credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=compute.endpoint))


def test_the_fake_is_strict_where_the_autoscalers_api_is(compute):
    """https://cloud.google.com/compute/docs/reference/rest/v1/autoscalers: an existing
    name cannot be inserted again, a missing autoscaler cannot be patched, an insert
    needs its target and autoscalingPolicy."""
    from google.api_core import exceptions as gx
    mig = compute.add_mig("web", zone=ZONE, size=2)
    compute_v1, client = _client(compute)
    body = compute_v1.Autoscaler(name="a", target=mig.link,
                                 autoscaling_policy=compute_v1.AutoscalingPolicy(max_num_replicas=5))
    op = client.insert_unary(project=PROJECT, zone=ZONE, autoscaler_resource=body)
    assert (op.status, op.operation_type) == (compute_v1.Operation.Status.DONE, "compute.autoscalers.insert")
    got = client.get(project=PROJECT, zone=ZONE, autoscaler="a")
    assert (got.target, got.autoscaling_policy.max_num_replicas) == (mig.link, 5)
    assert [a.name for a in client.list(project=PROJECT, zone=ZONE)] == ["a"]
    with pytest.raises(gx.Conflict):
        client.insert_unary(project=PROJECT, zone=ZONE, autoscaler_resource=body)
    with pytest.raises(gx.NotFound):
        client.patch_unary(request=compute_v1.PatchAutoscalerRequest(project=PROJECT, zone=ZONE, autoscaler="b",
                                                                     autoscaler_resource=body))
    for missing in (compute_v1.Autoscaler(name="c", target=mig.link),
                    compute_v1.Autoscaler(name="c", autoscaling_policy=body.autoscaling_policy)):
        with pytest.raises(gx.BadRequest):
            client.insert_unary(project=PROJECT, zone=ZONE, autoscaler_resource=missing)
    assert list(compute.autoscalers) == [(PROJECT, f"zones/{ZONE}", "a")]


def test_dry_run_prints_the_difference_and_writes_nothing(compute, tmp_path, capsys):
    compute.add_mig("web", zone=ZONE, size=2)
    out, _ = _apply(compute, tmp_path, capsys, 60, "--dry-run")
    assert out == f"web-mig: zones/{ZONE}/autoscalers/web-autoscaler: create\n"
    assert compute.autoscalers == {}
    _apply(compute, tmp_path, capsys, 60)
    before = [dict(a) for a in compute.autoscalers.values()]
    out, _ = _apply(compute, tmp_path, capsys, 75, "--dry-run")
    assert "utilizationTarget: 0.6 -> 0.75" in out
    assert [dict(a) for a in compute.autoscalers.values()] == before
    assert compute.count("PATCH") == 0


def test_a_missing_group_fails_that_target(compute, tmp_path, capsys):
    _, err = _apply(compute, tmp_path, capsys, 60, code=1)
    assert err.startswith("scalebridge apply: web-mig: not_found: instanceGroupManagers.get: HTTP 404")
    assert compute.autoscalers == {}


def test_a_target_in_the_run_state_is_refused(compute, tmp_path, capsys):
    """docs/run.md: a target is actuated by `scalebridge run` or translated, never both."""
    from scalebridge.controller.store import SQLiteStore, StoredTarget
    compute.add_mig("web", zone=ZONE, size=2)
    db = tmp_path / "state.db"
    store = SQLiteStore(db)
    store.save([StoredTarget(name="web-mig", policy_hash="x", state={"recommendations": []})])
    store.close()
    _, err = _apply(compute, tmp_path, capsys, 60, "--state", str(db), code=1)
    assert err.startswith("scalebridge apply: web-mig: refused: `scalebridge run` actuates this target")
    assert compute.autoscalers == {}
    assert compute.count("autoscalers") == 0
