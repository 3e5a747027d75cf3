"""Back-test examples/run/backtest.yaml without a cluster: a local Prometheus-API
server (scalebridge_prometheus.fake_server) holds six hours of a real trace
(examples/traces/azure_llm_code_2024-05-10_00-06.csv, its notice in examples/traces/README.md) as the Deployment's request rate, and what kube-state-metrics recorded of its
size (a fixed 8 replicas, then 12); the configuration is pointed at it, and
`scalebridge backtest` runs on it as it would on a real Prometheus."""
import sys
import tempfile
from pathlib import Path

from scalebridge.cli import main
from scalebridge.simulator.traces import read_trace
from scalebridge_prometheus.fake_server import PrometheusServer

HERE = Path(__file__).resolve().parent
TRACE = HERE.parent / "traces" / "azure_llm_code_2024-05-10_00-06.csv"

trace = read_trace(TRACE, scale=1 / 60)          # requests per minute -> per second
n = 6 * 60
times, rps = trace.times[:n], trace.values[:n]
with PrometheusServer(retention="100y") as prom, tempfile.TemporaryDirectory() as tmp:
    # the counter a rate(…[1m]) query reads would need raw scrapes; the recorded rate is served as is
    prom.add_arrays({"__name__": "web_requests_per_second", "job": "web"}, times, rps)
    prom.add_arrays({"__name__": "kube_deployment_spec_replicas", "namespace": "shop", "deployment": "web"},
                    times, [8 if i < n // 2 else 12 for i in range(n)])
    config = (HERE.parent / "run" / "backtest.yaml").read_text().replace("http://prometheus:9090", prom.url).replace(
        "sum(rate(http_requests_total{job=\"web\"}[1m]))", "sum(web_requests_per_second{job=\"web\"})").replace(
        "{context: prod}", "{kubeconfig: " + str(Path(tmp) / "kubeconfig") + "}").replace("../backtest/policy.yaml", str(HERE / "policy.yaml"))
    (Path(tmp) / "kubeconfig").write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "
                                          "'http://127.0.0.1:9'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: "
                                          "[{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n")
    (Path(tmp) / "run.yaml").write_text(config)
    sys.exit(main(["backtest", str(Path(tmp) / "run.yaml"), "--start", "2024-05-10T00:00:00Z",
                   "--end", "2024-05-10T06:00:00Z", *sys.argv[1:]]))
