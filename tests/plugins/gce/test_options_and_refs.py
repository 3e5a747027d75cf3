"""The gce provider's options and ``ref`` as run-config.md lists them; every error
names its key (a RefError, which ``scalebridge validate`` reports with file and line)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from scalebridge.providers import RefError


def _provider(**options):
    from scalebridge_gce.provider import GceProvider
    return GceProvider(**options)


@pytest.mark.parametrize("options, key", [
    ({"compute_endpoint": "ftp://127.0.0.1:1"}, "compute_endpoint"),
    ({"compute_endpoint": "http://127.0.0.1:1/compute/v1"}, "compute_endpoint"),
    ({"compute_endpoint": "http://compute.example.com"}, "compute_endpoint"),   # plain http off loopback
    ({"monitoring_endpoint": "127.0.0.1"}, "monitoring_endpoint"),
    ({"monitoring_endpoint": "monitoring.example.com:443", "monitoring_insecure": True}, "monitoring_insecure"),
    ({"monitoring_insecure": True}, "monitoring_insecure"),
    ({"monitoring_endpoint": "127.0.0.1:1", "monitoring_insecure": "yes"}, "monitoring_insecure"),
    ({"credentials": "/nonexistent/key.json"}, "credentials"),
    ({"credentials": 3}, "credentials"),
    ({"project": "Bad Project"}, "project"),
    ({"timeout_seconds": 0}, "timeout_seconds"),
    ({"operation_wait_seconds": -1}, "operation_wait_seconds"),
    ({"region_name": "x"}, "region_name"),
])
def test_a_bad_option_names_its_key(options, key):
    with pytest.raises(RefError) as e:
        _provider(**options)
    assert e.value.key == key


def test_loopback_plaintext_is_accepted():
    p = _provider(project="p-1234", compute_endpoint="http://127.0.0.1:8080", monitoring_endpoint="localhost:9090",
                  monitoring_insecure=True, credentials="anonymous")
    assert p.clients.compute_endpoint == "http://127.0.0.1:8080"


@pytest.mark.parametrize("ref, key", [
    ({"instance_group_manager": "web"}, "ref.zone"),
    ({"zone": "europe-west1-b", "region": "europe-west1", "instance_group_manager": "web"}, "ref.zone"),
    ({"zone": "europe-west1-b"}, "ref.instance_group_manager"),
    ({"zone": "europe-west1-b", "instance_group_manager": "Web_1"}, "ref.instance_group_manager"),
    ({"region": "Europe West", "instance_group_manager": "web"}, "ref.region"),
    ({"zone": "europe-west1-b", "instance_group_manager": "web", "asg": "x"}, "ref.asg"),
    ({"zone": "europe-west1-b", "instance_group_manager": "web", "project": 7}, "ref.project"),
])
def test_a_bad_ref_names_its_key(ref, key):
    with pytest.raises(RefError) as e:
        _provider(project="test-project").target(ref)
    assert e.value.key == key


def test_a_ref_without_any_project_says_where_to_give_one():
    with pytest.raises(RefError) as e:
        _provider().target({"zone": "europe-west1-b", "instance_group_manager": "web"})
    assert e.value.key == "ref.project" and "option project" in e.value.message


def test_ref_project_overrides_the_option():
    t = _provider(project="a-project").target({"project": "b-project", "region": "europe-west1",
                                               "instance_group_manager": "api"})
    assert t.name == "b-project/regions/europe-west1/api"


def test_the_plugin_and_provider_import_no_sdk():
    code = ("import sys, scalebridge_gce, scalebridge_gce.provider, scalebridge_gce.metrics;"
            "print(sorted(m for m in sys.modules if m.startswith(('google', 'grpc'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_provider_is_registered_through_the_entry_point():
    from scalebridge.registry import provider_factory
    from scalebridge_gce.provider import GceProvider
    assert provider_factory("gce") is GceProvider
