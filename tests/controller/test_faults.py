"""The controller on a provider failing 30% of its calls (throttling with and
without Retry-After, timeouts — with the write lost or carried out —, 5xx,
conflicts) over 10,000 syncs of its targets, on a virtual clock, in-process:

- no lost state: every write the provider carried out is in the persisted state
  (its scale event and ``last_scale``), even when its reply was lost; what is
  persisted is what the controller holds;
- no write stacked on one in flight;
- throttled and failing targets back off: after the n-th consecutive retryable
  failure a target is not called again for half of ``period × 2^(n-1)`` (the
  equal-jitter floor), and a ``Retry-After`` holds the whole provider (no call to
  any of its targets before it ends); the calls are counted;
- every failure is in the audit log (``failed`` with the kind) and in
  ``scalebridge_provider_errors_total{provider,kind}``;
- targets of a healthy provider decide exactly as they do without the flaky one.

The controller's backoff: ``scalebridge.controller.backoff`` (equal jitter,
https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/);
the error kinds: ``scalebridge.providers.ErrorKind``.
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from scalebridge.controller.backoff import Backoff
from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import BACKOFF_CAP_PERIODS, build_controller
from scalebridge.controller.metrics import Metrics
from scalebridge.controller.store import SQLiteStore
from scalebridge.providers import ErrorKind
from scalebridge.testing.fake import DEFAULT_START
from scalebridge.testing.pytest_plugin import FAKE_TYPE, write_run_config

PERIOD = 15.0
TICKS = 1000
FLAKY = 10                       # 10 targets × 1,000 ticks: 10,000 syncs on the failing provider
HEALTHY = 2
KINDS = ["throttled", "throttled_retry_after", "timeout", "applied_timeout", "5xx", "conflict"]
ERROR_KIND = {"throttled": ErrorKind.THROTTLED, "throttled_retry_after": ErrorKind.THROTTLED,
              "timeout": ErrorKind.TRANSIENT, "applied_timeout": ErrorKind.TRANSIENT, "5xx": ErrorKind.TRANSIENT,
              "conflict": ErrorKind.CONFLICT}
RETRY_AFTER = 40.0
POLICY = {"min_replicas": 1, "max_replicas": 30,
          "metrics": [{"type": "resource", "name": "cpu", "target": {"type": "Utilization",
                                                                     "average_utilization": 60}}]}


def _load(k: int) -> dict:
    # a day-like swing compressed into ~1.4 h: scale-ups and stabilized scale-downs every cycle
    return {"base": 4.0 + k % 3, "amplitude": 3.0, "period": 5000.0 + 700 * k, "phase": 300.0 * k}


def _targets(prefix: str, n: int, provider: str, semantics: list[str]) -> list[dict]:
    return [{"name": f"{prefix}-{k}", "provider": provider, "policy": "web", "semantics": semantics[k % len(semantics)],
             "ref": {"name": f"{prefix}-{k}", "size": 3, "load": _load(k)}} for k in range(n)]


def _lost_writes(c, fakes) -> list[str]:
    """Targets whose last carried-out write is not the controller's ``last_scale`` (a
    write the provider made that the state forgot, or a scale the state holds that
    the provider never made). A write whose outcome is still pending is not checked."""
    out = []
    for run in c.runs:
        if run.intent_size is not None:
            continue
        history = fakes[run.spec.provider_key].history(run.spec.name)
        last = run.decider.state.last_scale
        expected = history[-1][0] if history else None
        got = last.get("time") if last else None
        if got != expected:
            out.append(f"{run.spec.name}: last write at {expected}, last_scale at {got}")
    return out


def _run(tmp_path, name: str, providers: dict, targets: list[dict]):
    config = write_run_config(tmp_path / f"{name}.yaml", targets, providers=providers, policies={"web": POLICY},
                              sync_period_seconds=PERIOD)
    metrics = Metrics()
    state = tmp_path / f"{name}.db"
    audit = tmp_path / f"{name}.jsonl"
    c = build_controller(str(config), clock=VirtualClock(DEFAULT_START), state=str(state), audit=str(audit),
                         metrics=metrics, seed=7, workers=4)
    lost: list[str] = []
    unpersisted: list[str] = []
    try:
        fakes = dict(c.runtime.providers)
        for k in range(TICKS):
            c.sync(DEFAULT_START + PERIOD * k)
            lost += [f"tick {k}: {why}" for why in _lost_writes(c, fakes)]
            if k % 100 == 99:
                rows = SQLiteStore(state, readonly=True).load_all()
                for r in c.runs:    # what is on disk is what the controller holds: the state, or the intent
                    row = rows[r.spec.name]
                    if (row.intent_size, row.intent_state) != (r.intent_size, r.intent_state) or \
                            (r.intent_size is None and row.state != r.decider.state.to_protocol()):
                        unpersisted.append(f"tick {k}: {r.spec.name}")
    finally:
        c.close()
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    return fakes, records, metrics, (lost, unpersisted), state


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    semantics = ["scalebridge", "kubernetes", "gce", "aws", "azure"]
    # the flaky provider stands for a cloud (its targets synced on the worker pool), the
    # healthy one is in process (synced on the controller's thread): a sync mixes both
    providers = {"flaky": {"type": FAKE_TYPE, "settle_observes": 3, "log_calls": True, "blocking": True,
                           "faults": {"rate": 0.3, "seed": 20261201, "kinds": KINDS, "retry_after": RETRY_AFTER}},
                 "healthy": {"type": FAKE_TYPE, "settle_observes": 3, "log_calls": True}}
    healthy = _targets("healthy", HEALTHY, "healthy", ["scalebridge", "kubernetes"])
    faulty = _run(tmp, "faulty", providers, _targets("flaky", FLAKY, "flaky", semantics) + healthy)
    alone = _run(tmp, "alone", {"healthy": providers["healthy"]}, healthy)
    return faulty, alone


def test_the_flaky_provider_failed_about_30_percent_of_its_calls_of_every_kind(runs):
    (fakes, records, *_), _ = runs
    flaky = fakes["flaky"]
    calls = flaky.count()
    assert 0.27 < len(flaky.faults_raised) / calls < 0.33
    assert {f.kind for f in flaky.faults_raised} == set(KINDS)
    assert {f.call for f in flaky.faults_raised} >= {"observe", "read_metrics", "set_size"}
    assert sum(1 for r in records if r["target"].startswith("flaky")) >= 5000   # syncs that were due


def test_every_failure_is_in_the_audit_log_and_the_error_counter(runs):
    (fakes, records, metrics, *_), _ = runs
    flaky = fakes["flaky"]
    failed = {(r["target"], r["time"]): r for r in records if r["action"] == "failed"}
    for f in flaky.faults_raised:
        rec = failed.get((f.target, f.now))
        assert rec is not None, f"the {f.kind} fault on {f.target}'s {f.call} at {f.now} is not in the audit log"
        assert rec["error_kind"] == ERROR_KIND[f.kind].value and rec["error"]
    assert len(failed) == len(flaky.faults_raised)            # no failure without its fault, none twice
    by_kind = Counter(ERROR_KIND[f.kind].value for f in flaky.faults_raised)
    for kind, n in by_kind.items():
        assert metrics.registry.get_sample_value("scalebridge_provider_errors_total",
                                                 {"provider": "flaky", "kind": kind}) == n
    assert metrics.registry.get_sample_value("scalebridge_provider_errors_total",
                                             {"provider": "healthy", "kind": "throttled"}) is None


def test_no_write_is_stacked_on_one_in_flight(runs):
    (fakes, records, *_), _ = runs
    assert fakes["flaky"].stacked_writes == [] and fakes["healthy"].stacked_writes == []
    assert sum(1 for r in records if r["action"] == "in_flight") > 50     # the case did come up
    assert fakes["flaky"].applied_writes() > 100


def test_failing_targets_back_off_and_honour_retry_after(runs):
    (fakes, records, *_), _ = runs
    flaky = fakes["flaky"]
    fault_at = {(f.target, f.now): f for f in flaky.faults_raised}
    calls_at: dict[str, list[float]] = defaultdict(list)
    for now, target, _call, _outcome in flaky.call_log:
        if not calls_at[target] or calls_at[target][-1] != now:
            calls_at[target].append(now)
    floor = Backoff(PERIOD, PERIOD * BACKOFF_CAP_PERIODS)
    checked_retry_after = checked_long = 0
    for target, times in calls_at.items():
        failures = 0
        for t, nxt in zip(times, times[1:] + [None]):
            f = fault_at.get((target, t))
            if f is None:                  # a sync that decided: the failure count starts again
                failures = 0
                continue
            if f.call == "set_size":       # a failed write comes after a decision
                failures = 0
            if ERROR_KIND[f.kind] not in (ErrorKind.THROTTLED, ErrorKind.TRANSIENT):
                continue
            failures += 1
            if nxt is None:
                continue
            least = min(floor.cap, floor.base * 2 ** (failures - 1)) / 2
            assert nxt - t >= least - 1e-6, f"{target}: called {nxt - t:g} s after failure {failures} at {t}"
            if f.retry_after:
                assert nxt - t >= f.retry_after, f"{target}: called {nxt - t:g} s after a Retry-After of {f.retry_after}"
                checked_retry_after += 1
            checked_long += least > PERIOD
    assert checked_retry_after > 100 and checked_long > 20
    # a throttled provider is held as a whole: no call to any of its targets inside a Retry-After
    for f in flaky.faults_raised:
        if f.retry_after:
            inside = [c for c in flaky.call_log if f.now < c[0] < f.now + f.retry_after]
            assert inside == [], f"{len(inside)} calls inside the Retry-After of {f.retry_after} s from {f.now}"
    # counted: each flaky target was called at fewer ticks than it had (it sat out its backoffs)
    for target, times in calls_at.items():
        assert len(times) < TICKS * 0.85, f"{target} was called at {len(times)} of {TICKS} ticks"
    healthy_ticks = {t for now, t_name, *_ in fakes["healthy"].call_log for t in [now]}
    assert len(healthy_ticks) == TICKS


def test_no_carried_out_write_is_lost_from_the_state(runs):
    (fakes, records, metrics, (lost, unpersisted), state_path), _ = runs
    flaky = fakes["flaky"]
    lost_replies = [f for f in flaky.faults_raised if f.kind == "applied_timeout" and f.call == "set_size"]
    assert len(lost_replies) > 5, "too few writes had their reply lost"
    for f in lost_replies:    # the provider did carry them out …
        assert f.now in {t for t, _ in flaky.history(f.target)}
    assert lost == []         # … and the state holds each, as it holds every other write, once
    assert unpersisted == []


def test_the_healthy_provider_s_targets_decide_as_without_the_flaky_one(runs):
    (fakes, records, *_), (alone_fakes, alone_records, *_rest) = runs

    def decisions(recs):
        return [(r["target"], r["time"], r["current_replicas"], r["desired_replicas"], r["action"])
                for r in sorted(recs, key=lambda r: (r["target"], r["time"])) if r["target"].startswith("healthy")]
    got, expected = decisions(records), decisions(alone_records)
    assert len(expected) == HEALTHY * TICKS
    assert got == expected
    for k in range(HEALTHY):
        name = f"healthy-{k}"
        assert fakes["healthy"].history(name) == alone_fakes["healthy"].history(name)
    assert not any(r["action"] in ("failed", "paced") for r in records if r["target"].startswith("healthy"))
