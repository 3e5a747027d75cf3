"""Whatever the native input, ``import`` gives a policy or one NativeError naming a field:
never another exception (which would reach a user as a traceback). Inputs are the
documentation examples with one value replaced by an arbitrary JSON value."""
from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings, strategies as st

from scalebridge.engine import load_policy
from scalebridge.errors import RequestError
from scalebridge.translate import NativeError, import_all, render

from .test_documentation_examples import AWS_STEP, AZURE_DAY, FOUR_SIGNALS, MULTIPLE_METRICS

import yaml

SEEDS = {"kubernetes": yaml.safe_load(MULTIPLE_METRICS), "gce": FOUR_SIGNALS, "azure": AZURE_DAY, "aws": AWS_STEP}
SEEDS_RENDERED = {p: render({"name": "web", "min_replicas": 1, "max_replicas": 9,
                             "metrics": [{"type": "resource", "name": "cpu",
                                          "target": {"type": "Utilization", "average_utilization": 50}}],
                             "rules": [{"metric": "cpu", "operator": "GreaterThan", "threshold": 70,
                                        "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]},
                            p)[0] for p in SEEDS}

values = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False) |
                      st.text(max_size=8) | st.sampled_from(["[parameters('x')]", "PT5M", "Utilization", "-1"]),
                      lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                      max_leaves=5)


def _paths(obj, at=()):
    yield at
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, at + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, at + (i,))


def _replace(obj, at, value):
    if not at:
        return value
    obj = copy.deepcopy(obj)
    node = obj
    for k in at[:-1]:
        node = node[k]
    node[at[-1]] = value
    return obj


@st.composite
def mutated(draw):
    provider = draw(st.sampled_from(sorted(SEEDS)))
    seed = draw(st.sampled_from([SEEDS[provider], SEEDS_RENDERED[provider]]))
    at = draw(st.sampled_from(list(_paths(seed))))
    return provider, _replace(seed, at, draw(values))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_import_gives_a_policy_or_one_line_naming_the_field(case):
    provider, doc = case
    text = yaml.safe_dump(doc) if provider == "kubernetes" else json.dumps(doc)
    try:
        results = import_all(text, provider)
    except NativeError as e:
        assert "\n" not in str(e) and str(e).startswith(("$", "--"))
        return
    for policy, _ in results:
        try:
            load_policy(policy)
        except RequestError as e:      # the command reports it as one line, exit 2
            assert "\n" not in str(e)
