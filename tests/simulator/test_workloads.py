"""Synthetic workloads (scalebridge.simulator.workloads): deterministic, well-formed, the
advertised shapes.

Source: docs/simulation.md (--workload)."""
from __future__ import annotations

import numpy as np
import pytest

from scalebridge.simulator.traces import resample, Trace
from scalebridge.simulator.workloads import make_workload, WORKLOADS


HOUR = 3600


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_same_seed_same_output(name: str) -> None:
    first, second = make_workload(name, seed=7), make_workload(name, seed=7)
    assert np.array_equal(first.values, second.values) and np.array_equal(first.times, second.times)


@pytest.mark.parametrize("name", ["diurnal", "flash_crowd", "exponential_growth"])
def test_noisy_workloads_depend_on_the_seed(name: str) -> None:
    assert not np.array_equal(make_workload(name, seed=1).values, make_workload(name, seed=2).values)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
@pytest.mark.parametrize("tick", [5, 15, 60])
def test_well_formed(name: str, tick: float) -> None:
    trace = make_workload(name, tick_seconds=tick, duration_seconds=24 * HOUR, peak=250)
    assert isinstance(trace, Trace) and trace.resolution == tick
    assert trace.times.size == 24 * HOUR // tick and trace.times[0] == 0
    np.testing.assert_array_equal(np.diff(trace.times), tick)
    assert np.isfinite(trace.values).all() and trace.values.min() >= 0
    assert 0.5 * 250 < trace.values.max() < 1.3 * 250
    assert trace.source.startswith(f"workload:{name}")
    assert np.array_equal(resample(trace, tick), trace.values)  # usable like a read trace


def test_default_durations() -> None:
    durations = {name: make_workload(name).end for name in WORKLOADS}
    assert durations["flash_crowd"] == 6 * HOUR
    assert all(HOUR <= d <= 7 * 24 * HOUR for d in durations.values())


def test_flash_crowd_surges_about_tenfold_then_decays() -> None:
    trace = make_workload("flash_crowd", peak=1000, noise=0)
    t, v = trace.times, trace.values
    assert np.allclose(v[t < 2 * HOUR], 100)
    assert v.max() == pytest.approx(1000)
    assert t[np.argmax(v)] <= 2 * HOUR + 120
    assert v[t == 2 * HOUR + 120 + 1800][0] == pytest.approx(100 + 900 / 2)
    assert v[-1] < 110


def test_exponential_growth_grows_exponentially_then_plateaus_and_declines() -> None:
    trace = make_workload("exponential_growth", noise=0, peak=1000, doubling_seconds=1800)
    t, v = trace.times, trace.values
    assert v[t == 1800][0] / v[0] == pytest.approx(2, rel=0.02)  # doubling while small
    assert v[t == 7 * HOUR][0] > 0.99 * 1000  # plateau
    assert v[-1] < 0.5 * v[t == 8 * HOUR][0]  # decline
    steady = make_workload("exponential_growth", noise=0, decline_at_seconds=None)
    assert np.all(np.diff(steady.values) >= 0)


def test_step_up_and_down() -> None:
    v = make_workload(
        "step", tick_seconds=60, peak=400, base=0.5, up_at_seconds=600, down_at_seconds=1200
    ).values
    assert v[:10].tolist() == [200] * 10 and v[10:20].tolist() == [400] * 10 and v[20] == 200
    assert make_workload("step", down_at_seconds=None).values[-1] == 1000


def test_sawtooth_ramps_and_drops() -> None:
    v = make_workload("sawtooth", tick_seconds=60, peak=100, low=0.0, period_seconds=600).values
    np.testing.assert_allclose(v[:12], [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 0, 10])


def test_diurnal_peaks_at_peak_hour_and_dips_weekly() -> None:
    trace = make_workload("diurnal", noise=0, peak=1000, trough=0.2, peak_hour=15)
    t, v = trace.times, trace.values
    assert t[np.argmax(v)] % (24 * HOUR) == 15 * HOUR and v.min() == pytest.approx(200)
    week = make_workload("diurnal", noise=0, duration_seconds=7 * 24 * HOUR, weekly_dip=0.5)
    saturday_peak = week.values[week.times == (5 * 24 + 15) * HOUR][0]
    assert saturday_peak == pytest.approx(500)


def test_make_workload_errors() -> None:
    with pytest.raises(ValueError, match="flash_crowd"):
        make_workload("tsunami")
    with pytest.raises(TypeError):
        make_workload("step", surge=3)
    with pytest.raises(ValueError):
        make_workload("step", tick_seconds=0)
