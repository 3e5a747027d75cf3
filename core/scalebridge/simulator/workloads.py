"""Synthetic workloads: seeded, deterministic load shapes sampled at a tick.

Every generator takes keyword arguments only — ``seed``, ``duration_seconds``,
``tick_seconds``, ``peak`` and its own shape parameters — and returns a
:class:`~scalebridge.simulator.traces.Trace` with one sample per tick
(``times = k * tick_seconds`` from 0, ``resolution = tick_seconds``), so it
can go wherever a resampled real trace goes. Values are a non-negative rate in
the caller's unit (say requests per second); ``peak`` is the shape's nominal
maximum before noise. Noise is multiplicative Gaussian drawn from
``numpy.random.default_rng(seed)``: the same arguments give the same array.

Use :func:`make_workload` (or :data:`WORKLOADS`) to pick one by name.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .traces import Trace

__all__ = [
    "WORKLOADS",
    "diurnal",
    "exponential_growth",
    "flash_crowd",
    "make_workload",
    "sawtooth",
    "step",
]

HOUR = 3600.0
DAY = 24 * HOUR


Shape = Callable[..., np.ndarray]
"""A workload's noiseless load, ``shape(t, peak, **params)``, at the times ``t`` for the nominal ``peak``."""


def _grid(duration_seconds: float, tick_seconds: float) -> np.ndarray:
    if not (tick_seconds > 0 and duration_seconds >= tick_seconds):
        raise ValueError("need tick_seconds > 0 and duration_seconds >= tick_seconds")
    return np.arange(int(np.ceil(duration_seconds / tick_seconds - 1e-9))) * float(tick_seconds)


def _generator(*, default_duration: float, default_noise: float) -> Callable[[Shape], Callable[..., Trace]]:
    """The generator of a workload from its :data:`Shape`: the shape sampled on
    the tick grid, seeded multiplicative noise applied, clipped at zero, wrapped
    as a Trace. It takes ``seed``, ``duration_seconds``, ``tick_seconds``,
    ``peak``, ``noise`` and the shape's own parameters, as keywords."""
    def wrap(shape: Shape) -> Callable[..., Trace]:
        name = shape.__name__

        def generate(*, seed: int = 0, duration_seconds: float = default_duration, tick_seconds: float = 15,
                     peak: float = 1000.0, noise: float = default_noise, **params: Any) -> Trace:
            t = _grid(duration_seconds, tick_seconds)
            load = shape(t, peak, **params)
            if noise:
                load = load * (1.0 + noise * np.random.default_rng(seed).standard_normal(t.size))
            return Trace(t, np.maximum(load, 0.0), source=f"workload:{name}(seed={seed})", resolution=tick_seconds)

        generate.__name__ = generate.__qualname__ = name
        generate.__doc__ = shape.__doc__
        return generate
    return wrap


@_generator(default_duration=3 * DAY, default_noise=0.05)
def diurnal(t: np.ndarray, peak: float, *, trough: float = 0.2, peak_hour: float = 15.0,
            weekly_dip: float = 0.0) -> np.ndarray:
    """Daily sine between ``trough * peak`` and ``peak``, highest at ``peak_hour``.

    ``weekly_dip`` (0..1) lowers days 5 and 6 of each week (a weekend, when
    time 0 is a Monday) by that fraction, ramping over an hour at each edge;
    give ``duration_seconds`` of a week or more to see it.
    """
    phase = 2 * np.pi * (t - peak_hour * HOUR) / DAY
    shape = peak * (trough + (1 - trough) * (1 + np.cos(phase)) / 2)
    if weekly_dip:
        day = (t % (7 * DAY)) / DAY
        weekend = np.clip(np.minimum(day - 5, 7 - day) * 24, 0, 1)  # 1-hour ramps
        shape = shape * (1 - weekly_dip * weekend)
    return shape


@_generator(default_duration=6 * HOUR, default_noise=0.03)
def flash_crowd(t: np.ndarray, peak: float, *, surge: float = 10.0, at_seconds: float = 2 * HOUR,
                rise_seconds: float = 120.0, half_life_seconds: float = 1800.0) -> np.ndarray:
    """A flat baseline of ``peak / surge``, a linear rise to ``peak`` over
    ``rise_seconds`` starting at ``at_seconds``, then exponential decay back to
    the baseline with ``half_life_seconds``."""
    base = peak / surge
    since = t - at_seconds
    rise = np.clip(since / max(rise_seconds, 1e-9), 0, 1)
    decay = np.exp2(-np.maximum(since - rise_seconds, 0) / half_life_seconds)
    return base + (peak - base) * rise * decay


@_generator(default_duration=12 * HOUR, default_noise=0.01)
def exponential_growth(t: np.ndarray, peak: float, *, initial: float = 0.01, doubling_seconds: float = 1800.0,
                       decline_at_seconds: float | None = 8 * HOUR,
                       decline_half_life_seconds: float = 2 * HOUR) -> np.ndarray:
    """Long-lived connections (the websocket story): logistic growth from
    ``initial * peak`` that doubles every ``doubling_seconds`` while small and
    plateaus at ``peak``; from ``decline_at_seconds`` (None: never) it decays
    towards ``initial * peak`` with ``decline_half_life_seconds``."""
    rate = np.log(2) / doubling_seconds
    shape = peak / (1 + (1 / initial - 1) * np.exp(-rate * t))
    if decline_at_seconds is not None:
        floor = initial * peak
        level = peak / (1 + (1 / initial - 1) * np.exp(-rate * decline_at_seconds))
        late = t >= decline_at_seconds
        fade = np.exp2(-(t[late] - decline_at_seconds) / decline_half_life_seconds)
        shape[late] = floor + (level - floor) * fade
    return shape


@_generator(default_duration=4 * HOUR, default_noise=0.0)
def step(t: np.ndarray, peak: float, *, base: float = 0.25, up_at_seconds: float = 1 * HOUR,
         down_at_seconds: float | None = 3 * HOUR) -> np.ndarray:
    """``base * peak``, then ``peak`` on ``[up_at_seconds, down_at_seconds)``
    (None: stays up)."""
    high = t >= up_at_seconds
    if down_at_seconds is not None:
        high &= t < down_at_seconds
    return np.where(high, peak, base * peak)


@_generator(default_duration=6 * HOUR, default_noise=0.0)
def sawtooth(t: np.ndarray, peak: float, *, low: float = 0.2, period_seconds: float = HOUR) -> np.ndarray:
    """A linear ramp from ``low * peak`` to ``peak`` over each
    ``period_seconds``, then an instant drop back (batch jobs, cron bursts)."""
    return peak * (low + (1 - low) * ((t % period_seconds) / period_seconds))


WORKLOADS: dict[str, Callable[..., Trace]] = {
    "diurnal": diurnal,
    "flash_crowd": flash_crowd,
    "exponential_growth": exponential_growth,
    "step": step,
    "sawtooth": sawtooth,
}


def make_workload(
    name: str,
    *,
    seed: int = 0,
    duration_seconds: float | None = None,
    tick_seconds: float = 15,
    peak: float | None = None,
    **params: Any,
) -> Trace:
    """Generate the workload ``name``; ``None`` keeps the generator's default
    duration and peak, and ``params`` go to the generator (unknown ones raise
    ``TypeError``)."""
    try:
        generator = WORKLOADS[name]
    except KeyError:
        raise ValueError(f"unknown workload {name!r}; choose one of {sorted(WORKLOADS)}") from None
    if duration_seconds is not None:
        params["duration_seconds"] = duration_seconds
    if peak is not None:
        params["peak"] = peak
    return generator(seed=seed, tick_seconds=tick_seconds, **params)
