"""The ConfigMap state store against the API server's limits."""
import pytest


def test_state_past_a_configmaps_1_mib_is_one_clear_error(provider, k8s):
    """The API server refuses a ConfigMap whose data pass 1 MiB (422, ``ValidateConfigMap``,
    https://kubernetes.io/docs/concepts/configuration/configmap/#motivation): the store says
    which ConfigMap and why, and the state it held stays readable."""
    from scalebridge.controller.store import StoredTarget, StoreError
    store = provider.state_store(namespace="scalebridge", name="state-big")
    store.save([StoredTarget("web", "h1", {"sizes": [{"time": 1.0, "replicas": 4}]})])
    big = [StoredTarget(f"t{i}", "h", {"recommendations": [[float(t), 10] for t in range(20)]})
           for i in range(4000)]
    with pytest.raises(StoreError) as e:
        store.save(big)
    assert "ConfigMap scalebridge/state-big" in str(e.value) and "Too long" in str(e.value)
    again = provider.state_store(namespace="scalebridge", name="state-big").load_all()
    assert list(again) == ["web"]
