"""Pacing per provider instance (token buckets, as client-go's
``flowcontrol.NewTokenBucketRateLimiter``), pending changes coalesced to the latest
desired size, exponential backoff with jitter honouring Retry-After, and no write
stacked on one in flight — on a manual clock."""
from __future__ import annotations

from scalebridge.controller.backoff import Backoff
from scalebridge.controller.clock import VirtualClock
from scalebridge.controller.loop import build_controller
from scalebridge.controller.pacing import TokenBucket
from scalebridge.testing.fake import DEFAULT_START

from .conftest import FAKE


def test_a_token_bucket_refills_at_its_rate_up_to_its_burst():
    b = TokenBucket(rate=0.5, burst=2, now=0.0)
    assert [b.take(0.0) for _ in range(3)] == [True, True, False]
    assert not b.take(1.0)          # half a token
    assert b.take(2.0)              # one token after 2 s at 0.5/s
    assert b.available(100.0) == 2  # never more than the burst


def test_a_held_bucket_gives_nothing_until_then():
    b = TokenBucket(rate=10, burst=5, now=0.0)
    b.hold(30.0)
    assert not b.take(29.9)
    assert b.take(30.1)


def test_backoff_doubles_with_jitter_and_honours_retry_after():
    a, b = Backoff(15, 300, seed=7), Backoff(15, 300, seed=7)
    delays = [a.delay(n) for n in range(1, 8)]
    assert delays == [b.delay(n) for n in range(1, 8)], "seedable: the same seed, the same delays"
    for n, d in enumerate(delays, start=1):
        full = min(300, 15 * 2 ** (n - 1))
        assert full / 2 <= d <= full
    assert Backoff(15, 300, seed=1).delay(1, retry_after=120) == 120


def _controller(write_config, tmp_path, targets, **fake):
    path = write_config(targets, providers={"fake": {"type": FAKE, **fake}})
    return build_controller(str(path), state=str(tmp_path / "s.db"), clock=VirtualClock(DEFAULT_START), seed=3)


def test_writes_are_paced_per_provider_and_coalesce_to_the_latest_size(write_config, tmp_path):
    targets = [{"name": f"t{i}", "ref": {"name": f"t{i}", "size": 2, "load": 3.0}} for i in range(4)]
    c = _controller(write_config, tmp_path, targets,
                    pacing={"writes_per_second": 1 / 30, "write_burst": 2, "reads_per_second": 100, "read_burst": 100})
    try:
        fake = c.runtime.providers["fake"]
        first = c.sync()
        assert sorted(r["action"] for r in first.records) == ["applied", "applied", "paced", "paced"]
        paced = [r["target"] for r in first.records if r["action"] == "paced"]
        # the paced targets' load changes before their turn: the write they get is the latest size
        for name in paced:
            fake.set_load(name, 6.0)
        c.clock.advance(15)          # half a token: nothing more may be written
        second = c.sync()
        assert {r["target"]: r["action"] for r in second.records if r["target"] in paced} == \
            {paced[0]: "paced", paced[1]: "paced"}
        c.clock.advance(15)          # one token: the target paced longest goes first
        third = c.sync()
        applied = [r for r in third.records if r["action"] == "applied"]
        assert len(applied) == 1 and applied[0]["target"] in paced
        was = {r["target"]: r["desired_replicas"] for r in first.records}[applied[0]["target"]]
        # the size written is this sync's decision (load 6: the neutral semantics' default scale-up
        # limit, max(100 %, 4 pods) per 15 s as the HPA's, gives 2 + 4), not the paced one (5)
        assert (was, applied[0]["desired_replicas"]) == (5, 6)
        assert fake.history(applied[0]["target"]) == [(DEFAULT_START + 30, 6)]
        assert sum(fake.writes(n) for n in paced) == 1, "one write per paced target, never a queue of them"
        # a paced decision was not carried out: no scale event recorded for it
        assert c.store.load(paced[1]).state["scale_up_events"] == []
    finally:
        c.close()


def test_no_write_is_stacked_on_one_in_flight(write_config, tmp_path):
    c = _controller(write_config, tmp_path, [{"name": "web", "ref": {"name": "web", "size": 2, "load": 3.0}}],
                    settle_observes=3)
    try:
        fake = c.runtime.providers["fake"]
        actions = []
        for k in range(6):
            if k == 1:
                fake.set_load("web", 9.0)   # wants more while the first write is still settling
            actions.append(c.sync().records[0]["action"])
            c.clock.advance(15)
        assert actions[0] == "applied"
        assert actions[1:4] == ["in_flight"] * 3
        assert actions[4] == "applied"
        assert fake.stacked_writes == []
    finally:
        c.close()


def test_a_throttled_target_backs_off_and_the_others_keep_syncing(write_config, tmp_path):
    targets = [{"name": "busy", "ref": {"name": "busy", "load": 0.6}},
               {"name": "calm", "ref": {"name": "calm", "load": 0.6}}]
    c = _controller(write_config, tmp_path, targets)
    try:
        fake = c.runtime.providers["fake"]
        fake.inject("throttled", target="busy", call="observe", times=3)
        observed = []
        for _ in range(40):   # 10 minutes of 15 s syncs
            c.sync()
            observed.append(fake.count("observe", "busy"))
            c.clock.advance(15)
        assert fake.count("observe", "calm") == 40
        # three failures back off 15, 30 and 60 s (with jitter): far fewer calls than syncs at first
        calls_in_first_two_minutes = observed[7]
        assert calls_in_first_two_minutes <= 5
        assert fake.count("observe", "busy") >= 30, "synced again every period once it recovered"
    finally:
        c.close()


def test_retry_after_holds_the_whole_provider_instance(write_config, tmp_path):
    targets = [{"name": "a", "ref": {"name": "a", "load": 0.6}}, {"name": "b", "ref": {"name": "b", "load": 0.6}}]
    c = _controller(write_config, tmp_path, targets, pacing={"reads_per_second": 100, "read_burst": 100})
    c.runs.sort(key=lambda r: r.spec.name)
    try:
        fake = c.runtime.providers["fake"]
        fake.inject("throttled_retry_after", target="a", call="observe", retry_after=60)
        first = c.sync()
        assert {r["target"]: r["action"] for r in first.records}["a"] == "failed"
        reads = fake.count("observe")
        for _ in range(3):      # 45 s: inside the 60 s the provider asked for
            c.clock.advance(15)
            rep = c.sync()
            assert {r["action"] for r in rep.records} <= {"paced"}
        assert fake.count("observe") == reads, "no call to a provider that said Retry-After"
        c.clock.advance(30)
        assert {r["action"] for r in c.sync().records} == {"unchanged"}
    finally:
        c.close()
