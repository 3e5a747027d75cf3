"""benchmarks/frontier.py --leave-one-out (issue #30): each group's candidate is chosen on
the other groups only — the left-out group's own results can be anything and the choice
does not move — and a generator's seeds are one group, so no seed is chosen on its twin."""

import importlib.util
import itertools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def frontier():
    spec = importlib.util.spec_from_file_location("frontier_benchmark", ROOT / "benchmarks" / "frontier.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WIDS = ["trace_a", "trace_b", "gen@0", "gen@1", "other@0", "other@1"]
GROUPS = ["trace_a", "trace_b", "gen", "other"]
CANDIDATES = ["x", "y", "z"]


def test_a_generators_seeds_are_one_group(frontier):
    assert {frontier.group_of(w) for w in WIDS} == set(GROUPS)
    assert frontier.group_of("flash_crowd@2") == "flash_crowd" and frontier.group_of("nasa_http") == "nasa_http"
    assert {frontier.group_of(w) for w in frontier.loo_workloads() if "@" in w} == set(frontier.LOO_GENERATORS)


def test_the_left_out_groups_own_scores_never_move_its_choice(frontier):
    base = {(w, c): 1.0 + 0.1 * i + 0.01 * j for (i, w), (j, c) in
            itertools.product(enumerate(WIDS), enumerate(CANDIDATES))}
    base.update({("trace_b", "y"): 0.5, ("gen@0", "z"): 0.2, ("gen@1", "z"): 0.2})
    folds = frontier.select_folds(base, WIDS, CANDIDATES, GROUPS)
    for g in GROUPS:
        for c in CANDIDATES:                       # make the left-out group love each candidate in turn
            scores = {k: (-100.0 if k[1] == c else 100.0) if frontier.group_of(k[0]) == g else v
                      for k, v in base.items()}
            assert frontier.select_folds(scores, WIDS, CANDIDATES, GROUPS)[g] == folds[g]


def test_the_choice_is_the_best_mean_over_the_other_groups(frontier):
    scores = {(w, c): 1.0 for w in WIDS for c in CANDIDATES}
    scores.update({("gen@0", "z"): 0.0, ("gen@1", "z"): 0.0})          # z wins only on gen
    folds = frontier.select_folds(scores, WIDS, CANDIDATES, GROUPS)
    assert folds["gen"]["chosen"] == "x"                                 # a tie elsewhere: by name
    assert all(folds[g]["chosen"] == "z" for g in GROUPS if g != "gen")


def test_the_score_penalises_being_more_often_short_than_the_hpa_at_60(frontier):
    reactive = {"reactive": [{"underprovisioned_fraction": f, "instance_hours": h}
                             for f, h in ((0.001, 100.0), (0.01, 80.0), (0.02, 70.0), (0.05, 60.0))]}
    at = frontier._scored({"instance_hours": 72.0, "underprovisioned_fraction": 0.001,
                           "oracle_instance_hours": 50.0, "fallback_share": 0.0}, reactive)
    riskier = frontier._scored({"instance_hours": 72.0, "underprovisioned_fraction": 0.004,
                                "oracle_instance_hours": 50.0, "fallback_share": 0.0}, reactive)
    assert at["safe"] and at["score"] == at["ratio"] == pytest.approx(0.72)
    assert not riskier["safe"] and riskier["score"] > riskier["ratio"]


def test_every_candidate_and_screened_setting_is_a_valid_predictive_block(frontier):
    """Each override is a predictive key the policy validates (a misspelt key or a bad value
    would otherwise replay the example under another name)."""
    example = frontier._policy(frontier.DEFAULT_POLICY, {}).predictive
    for name, overrides in {**frontier.CANDIDATES, **frontier.SCREENED}.items():
        spec = frontier._policy(frontier.DEFAULT_POLICY, overrides).predictive
        assert set(overrides) <= set(type(spec).model_fields), name
        assert all(getattr(spec, k) == v for k, v in overrides.items()), name
        assert name == "example" or spec != example, name


def test_every_built_in_generator_is_a_group(frontier):
    """Issue #30: the leave-one-out runs over every shared trace and every built-in generator."""
    from scalebridge.simulator.workloads import WORKLOADS
    assert set(frontier.LOO_GENERATORS) == set(WORKLOADS)
