"""Polynomial regression over a sliding time window: ``linear`` and ``quadratic``.

Source: a published websocket autoscaler ("如何使用Kubernetes创建自定义Pod水平扩展器",
how to build a custom Kubernetes pod autoscaler): it first extrapolated a straight line through the last 5
``websocketConnectionCount`` values, found that poor when the count grows or
falls exponentially, and moved to a degree-2 polynomial regression over recent
history to predict the count once new pods have started.

Cost: O(1) per sample. The window keeps running power sums of the (scaled)
sample times and of value × time^k, adds a sample on ``observe`` and subtracts
it when it leaves the window; ``forecast`` solves the 3×3 normal equations in
closed form. Times are taken relative to an origin inside the window and
divided by the window length, so the sums stay well conditioned over a 30-day
replay; the origin is moved (and the sums rebuilt from the window, O(window))
once per window length, i.e. amortized O(1).

The fit is evaluated in centered coordinates (sample-mean time at 0), where
the normal equations are best conditioned. A window whose samples are too few
or too close together for the requested degree falls back to the lower degree
and says so in ``reason``.

Optional damping (``damping_seconds = τ``) replaces the horizon h by
τ·(1 − e^(−h/τ)): near-term extrapolation is unchanged, far extrapolation
flattens (the idea of Gardner & McKenzie's damped trend). Off by default.
"""

from __future__ import annotations

import math
from collections import deque

from .base import MINUTE, Forecast, check_horizon, in_order, unavailable

#: Default window per degree. The websocket autoscaler fitted the last 5 samples (its loop
#: ran every 10 s), on smooth connection counts. Per-minute request counts are
#: noisier: at a 2-minute lead on the shared traces the line was best over
#: 15–30 minutes and the degree-2 fit needed 30 minutes to stop its curvature
#: from following noise (README.md). Pass ``window_seconds`` for smooth
#: signals such as connection counts, where a few minutes react faster.
DEFAULT_WINDOW_SECONDS = {0: 15 * MINUTE, 1: 15 * MINUTE, 2: 30 * MINUTE}

# Minimum spread of sample times (as a fraction of the window) needed to fit a
# slope / a curvature without the power sums losing their precision.
_MIN_SPREAD = (0.0, 1e-4, 1e-3)


class PolynomialForecaster:
    """Least-squares polynomial (degree 0, 1 or 2) over the last ``window_seconds``.

    ``linear`` is ``degree=1``; ``quadratic`` (the websocket autoscaler's model) is ``degree=2``.
    Samples ``t`` in ``(latest − window_seconds, latest]`` are fitted.
    """

    __slots__ = (
        "name", "degree", "window_seconds", "damping_seconds", "min_history_seconds",
        "_ts", "_ys", "_origin", "_inv_w", "_last_t",
        "_n", "_s1", "_s2", "_s3", "_s4", "_sy", "_s1y", "_s2y",
    )

    def __init__(
        self,
        degree: int = 2,
        window_seconds: float | None = None,
        damping_seconds: float | None = None,
        name: str | None = None,
        min_history_seconds: float | None = None,
    ) -> None:
        if degree not in (0, 1, 2):
            raise ValueError(f"degree must be 0, 1 or 2, got {degree!r}")
        if window_seconds is None:
            window_seconds = DEFAULT_WINDOW_SECONDS[degree]
        if not (window_seconds > 0 and math.isfinite(window_seconds)):
            raise ValueError(f"window_seconds must be > 0, got {window_seconds!r}")
        if damping_seconds is not None and not damping_seconds > 0:
            raise ValueError(f"damping_seconds must be > 0 or None, got {damping_seconds!r}")
        self.degree = degree
        self.window_seconds = float(window_seconds)
        self.damping_seconds = None if damping_seconds is None else float(damping_seconds)
        self.name = name or ("constant", "linear", "quadratic")[degree]
        # Trust a fit once half a window of history is in.
        self.min_history_seconds = (
            self.window_seconds / 2 if min_history_seconds is None else float(min_history_seconds)
        )
        self._ts: deque[float] = deque()
        self._ys: deque[float] = deque()
        self._origin = 0.0
        self._inv_w = 1.0 / self.window_seconds
        self._last_t = -math.inf
        self._reset_sums()

    # -- streaming -----------------------------------------------------------

    def _reset_sums(self) -> None:
        self._n = 0
        self._s1 = self._s2 = self._s3 = self._s4 = 0.0
        self._sy = self._s1y = self._s2y = 0.0

    def _add(self, t: float, y: float, sign: int) -> None:
        u = (t - self._origin) * self._inv_w
        u2 = u * u
        self._n += sign
        self._s1 += sign * u
        self._s2 += sign * u2
        self._s3 += sign * u2 * u
        self._s4 += sign * u2 * u2
        self._sy += sign * y
        self._s1y += sign * u * y
        self._s2y += sign * u2 * y

    def _rebuild(self, origin: float) -> None:
        self._origin = origin
        self._reset_sums()
        for t, y in zip(self._ts, self._ys):
            self._add(t, y, 1)

    def observe(self, t: float, value: float) -> None:
        """Add a sample; non-finite values are ignored, older-than-last raises."""
        self._last_t = in_order(self._last_t, t)
        if not math.isfinite(value):
            return
        ts, ys = self._ts, self._ys
        cutoff = t - self.window_seconds
        while ts and ts[0] <= cutoff:
            self._add(ts.popleft(), ys.popleft(), -1)
        ts.append(t)
        ys.append(value)
        if len(ts) == 1:
            self._origin = t
            self._reset_sums()
            self._add(t, value, 1)
        elif (t - self._origin) > 2.0 * self.window_seconds:
            self._rebuild(ts[0])
        else:
            self._add(t, value, 1)

    # -- fitting -------------------------------------------------------------

    def _fit(self) -> tuple[float, float, float, float, int]:
        """Return ``(a, b, c, m1, degree)``: y ≈ a + b·x + c·x², x = u − m1."""
        n = self._n
        inv = 1.0 / n
        m1 = self._s1 * inv
        ybar = self._sy * inv
        degree = self.degree
        spread = (self._ts[-1] - self._ts[0]) * self._inv_w
        while degree > 0 and (n <= degree or spread < _MIN_SPREAD[degree]):
            degree -= 1
        if degree == 0:
            return ybar, 0.0, 0.0, m1, 0
        e2 = self._s2 * inv
        c2 = e2 - m1 * m1
        sxy = self._s1y * inv - m1 * ybar
        if c2 <= 0.0:
            return ybar, 0.0, 0.0, m1, 0
        if degree == 2:
            e3 = self._s3 * inv
            e4 = self._s4 * inv
            m1sq = m1 * m1
            c3 = e3 - 3.0 * m1 * e2 + 2.0 * m1sq * m1
            c4 = e4 - 4.0 * m1 * e3 + 6.0 * m1sq * e2 - 3.0 * m1sq * m1sq
            sx2y = self._s2y * inv - 2.0 * m1 * self._s1y * inv + m1sq * ybar
            k = c4 - c2 * c2
            det = c2 * k - c3 * c3
            if det > 1e-9 * c2 * c2 * c2:
                r = sx2y - c2 * ybar
                b = (sxy * k - c3 * r) / det
                c = (c2 * r - c3 * sxy) / det
                return ybar - c * c2, b, c, m1, 2
        return ybar, sxy / c2, 0.0, m1, 1

    def _effective(self, s: float) -> float:
        tau = self.damping_seconds
        return s if tau is None else tau * -math.expm1(-s / tau)

    def forecast(self, now: float, horizon_seconds: float) -> Forecast:
        """Evaluate the fitted polynomial over ``(now, now + horizon_seconds]``."""
        check_horizon(horizon_seconds)
        if self._n == 0:
            return unavailable(now, horizon_seconds, f"{self.name}: no samples yet", self.name)
        a, b, c, m1, degree = self._fit()
        w = self.window_seconds
        x0 = (now - self._origin) * self._inv_w - m1
        h_eff = self._effective(horizon_seconds)
        x1 = x0 + h_eff * self._inv_w
        v0 = a + (b + c * x0) * x0
        value = a + (b + c * x1) * x1
        at = now + horizon_seconds
        peak, peak_at = (value, at) if value >= v0 else (v0, now)
        if c < 0.0:
            xv = -b / (2.0 * c)
            if x0 < xv < x1:
                vv = a + (b + c * xv) * xv
                if vv > peak:
                    s_eff = (xv - x0) * w
                    tau = self.damping_seconds
                    s = s_eff if tau is None else -tau * math.log1p(-s_eff / tau)
                    peak, peak_at = vv, now + s
        if degree < self.degree:
            reason = (
                f"{self.name}: {self._n} sample(s) spanning "
                f"{self._ts[-1] - self._ts[0]:g}s fit only degree {degree}"
            )
            return Forecast(value, peak, peak_at, at, False, reason, self.name)
        if horizon_seconds > w:
            # a curve fitted over w seconds says little about what comes after several w:
            # a ±5% wiggle over 20 minutes extrapolated 6 hours was 77x the largest load seen
            reason = f"{self.name}: a {horizon_seconds:g}s horizon is longer than the {w:g}s window it is fitted over"
            return Forecast(value, peak, peak_at, at, False, reason, self.name)
        return Forecast(value, peak, peak_at, at, True, None, self.name)
