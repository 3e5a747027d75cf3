"""Without ``monitoring_insecure`` the Monitoring client speaks TLS to
``monitoring_endpoint``, as to the real API: a local TLS server whose CA gRPC is
told to trust (``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``, read once per process: the
client runs in a subprocess)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from scalebridge_azure.fake_server import make_ca
from scalebridge_gce.fake_monitoring import MonitoringServer
from tests.plugins.gce.conftest import CPU, PROJECT, ZONE

CLIENT = """
import json, sys, time
from scalebridge.providers import MetricQuery
from scalebridge_gce.provider import GceProvider
p = GceProvider(project=%(project)r, compute_endpoint=%(compute)r, monitoring_endpoint=%(monitoring)r,
                credentials="anonymous", timeout_seconds=5)
t = p.target({"zone": %(zone)r, "instance_group_manager": "web"})
now = time.time()
obs = t.observe(now)
print(json.dumps({k: v.model_dump(mode="json", exclude_none=True)
                  for k, v in t.read_metrics(now, obs, [MetricQuery("cpu", "resource", {}, 60.0)]).items()}))
"""


@pytest.mark.slow   # a fresh interpreter imports google-cloud-compute (2-4 s, more on a busy machine)
def test_monitoring_over_tls_to_a_custom_endpoint(compute, tmp_path, now):
    ca, cert, key = make_ca(str(tmp_path))
    mig = compute.add_mig("web", zone=ZONE, size=1)
    with MonitoringServer(tls=(cert, key)) as mon:
        mon.add_series(CPU, resource_labels={"instance_id": str(mig.vms[0].id), "zone": ZONE},
                       points=[(now - 60, 0.25)], project=PROJECT)
        code = CLIENT % {"project": PROJECT, "compute": compute.endpoint, "monitoring": mon.address, "zone": ZONE}
        env = {**os.environ, "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": ca}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["cpu"]["members"] == {mig.vms[0].name: 0.5}   # 25% of 2 vCPUs
        assert len(mon.requests) == 1
