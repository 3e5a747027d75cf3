"""The kubernetes provider keeps the provider contract
(scalebridge.testing.check_provider), with the real client against the test API
server."""
from __future__ import annotations

import time

from scalebridge.providers import ErrorKind
from scalebridge.testing import check_provider

_STATUS = {ErrorKind.THROTTLED: 429, ErrorKind.TRANSIENT: 503, ErrorKind.CONFLICT: 409,
           ErrorKind.NOT_FOUND: 404, ErrorKind.FORBIDDEN: 403}


def test_the_kubernetes_provider_keeps_the_contract(k8s, provider):
    k8s.clock = lambda: time.time() - 3600
    k8s.add_deployment("shop", "web", replicas=3, requests={"cpu": "500m"})
    k8s.clock = time.time
    k8s.set_pod_usage("shop", "web", {"cpu": "200m"})

    def provoke(target, call, kind):
        if call == "observe":
            k8s.inject(_STATUS[kind], method="GET", path_contains="/deployments/web/scale",
                       retry_after=3 if kind is ErrorKind.THROTTLED else None)
        elif call == "read_metrics":
            if kind not in (ErrorKind.THROTTLED, ErrorKind.FORBIDDEN):
                return False    # one metric failing is a missing metric (left out), as the HPA reads it
            k8s.inject(_STATUS[kind], path_contains="/apis/metrics.k8s.io/")
        elif kind is ErrorKind.CONFLICT:
            # another writer moves the size after the observe: the write must not overwrite it
            obj = k8s.get("apps", "deployments", "shop", "web")
            obj["spec"]["replicas"] += 1
            k8s.put("apps", "deployments", "shop", obj)
        else:
            k8s.inject(_STATUS[kind], method="PUT", path_contains="/deployments/web/scale",
                       retry_after=3 if kind is ErrorKind.THROTTLED else None)
        return True

    report = check_provider(provider, {"kind": "Deployment", "namespace": "shop", "name": "web"}, provoke=provoke,
                            bad_refs=[{"kind": "Worker", "name": "web"},
                                      {"kind": "Deployment", "name": "web", "replicas": 3},
                                      {"kind": "Deployment", "name": "web", "api_version": "apps/v1beta1"}])
    assert ("set_size", "conflict") in report.provoked
    assert ("observe", "throttled") in report.provoked
