"""Daily/weekly seasonal profile scaled to the recent level: ``seasonal``.

Idea: the load at a future instant looks like the load at the same time of
day on recent days (and the same time of week), up to a level change. So

    forecast(T) = ratio × profile(T)

- ``profile(T)``: the median of the bucket means at T − 1 day, …, T − 7 days
  (robust to one odd day, e.g. a flash crowd), blended with the mean at
  T − 1 week and T − 2 weeks once those exist (weekday/weekend shape);
  linearly interpolated between bucket centers.
- ``ratio``: how much busier than its profile the load is right now,
  EWMA(actual) / EWMA(profile at the same instants), half-life
  ``level_half_life_seconds``, clamped to [1/``max_level_ratio``,
  ``max_level_ratio``]. A ratio of smoothed sums, not a mean of ratios, so a
  near-zero profile bucket cannot blow it up. This is the multiplicative level
  correction: "scale the last season by how much busier today is".

Sources for the history lengths: AWS predictive scaling analyses up to the
past 14 days and needs at least 24 hours of data to forecast
(GetPredictiveScalingForecast API reference; Application Auto Scaling user
guide, "How predictive scaling works"); Compute Engine requires 3 days of
history before it generates predictions, which are based on daily and weekly
patterns (cloud.google.com/compute/docs/autoscaler/predictive-autoscaling).
Hence 14 days of buckets kept, and 3 days before the guard trusts it.

Why not Holt-Winters: with minute data a daily season is 1440 (weekly 10080)
seasonal states updated by exponential smoothing, which needs full seasons to
initialise, double seasonality (Taylor 2003) to see weekends, and tuned
smoothing constants; a flash crowd leaks into the seasonal states for weeks.
The median profile forgets a one-off event once it leaves the window, needs no
tuning, and its state is a bounded ring of bucket sums. (The level ratio is
the one exponentially smoothed part, as Holt-Winters' level is.)

Cost: ``observe`` and ``forecast`` are O(1) (plus O(horizon / bucket) for the
peak); the profile of a bucket is computed once (a median of ≤ 7 numbers) and
cached while it is near ``now``. Memory: one slot per bucket over
``history_seconds`` + one season (5-minute buckets: 4320 slots).
"""

from __future__ import annotations

import math

from .base import DAY, MINUTE, WEEK, Forecast, check_horizon, in_order, unavailable

DEFAULT_BUCKET_SECONDS = 5 * MINUTE
#: AWS predictive scaling looks at up to 14 days of history.
DEFAULT_HISTORY_SECONDS = 14 * DAY
#: Compute Engine needs 3 days of history before predicting.
DEFAULT_MIN_HISTORY_SECONDS = 3 * DAY
#: Half-life of the level ratio. Short, because the level is what a
#: minutes-ahead forecast mostly needs: of 1–15 minutes, 2 minutes was best at a
#: 2-minute lead on two of the shared traces and 0.15 points off on the third
#: (README.md).
DEFAULT_LEVEL_HALF_LIFE_SECONDS = 2 * MINUTE

NEAR_BUCKETS = 6
"""How far (in buckets, 30 minutes at 5-minute buckets) the profile looks for filled
buckets around a time whose own two are empty — samples coarser than a bucket."""
_MISSING = object()


class SeasonalForecaster:
    """Seasonal-naive profile (median of past days, mean of past weeks) × recent level."""

    name: str
    min_history_seconds: float

    def __init__(
        self,
        bucket_seconds: float = DEFAULT_BUCKET_SECONDS,
        history_seconds: float = DEFAULT_HISTORY_SECONDS,
        season_seconds: float = DAY,
        week_seconds: float | None = WEEK,
        daily_refs: int = 7,
        weekly_refs: int = 2,
        weekly_weight: float = 0.5,
        level_half_life_seconds: float = DEFAULT_LEVEL_HALF_LIFE_SECONDS,
        max_level_ratio: float = 10.0,
        min_history_seconds: float = DEFAULT_MIN_HISTORY_SECONDS,
        name: str = "seasonal",
    ) -> None:
        if not bucket_seconds > 0:
            raise ValueError(f"bucket_seconds must be > 0, got {bucket_seconds!r}")
        for p in [season_seconds] + ([week_seconds] if week_seconds else []):
            if not (p > 0 and p / bucket_seconds == round(p / bucket_seconds)):
                raise ValueError(f"season {p!r}s is not a positive multiple of bucket_seconds={bucket_seconds!r}")
        if history_seconds < season_seconds:
            raise ValueError("history_seconds must cover at least one season")
        if not 0.0 <= weekly_weight <= 1.0:
            raise ValueError(f"weekly_weight must be in [0, 1], got {weekly_weight!r}")
        if not level_half_life_seconds > 0:
            raise ValueError(f"level_half_life_seconds must be > 0, got {level_half_life_seconds!r}")
        if not max_level_ratio >= 1.0:
            raise ValueError(f"max_level_ratio must be >= 1, got {max_level_ratio!r}")
        self.name = name
        self.min_history_seconds = float(min_history_seconds)
        self.bucket_seconds = float(bucket_seconds)
        self._season = int(round(season_seconds / bucket_seconds))
        self._week = int(round(week_seconds / bucket_seconds)) if week_seconds else 0
        self._daily_refs = max(1, int(daily_refs))
        self._weekly_refs = max(0, int(weekly_refs)) if self._week else 0
        self._weekly_weight = float(weekly_weight)
        self._tau = level_half_life_seconds / math.log(2.0)
        self._max_ratio = float(max_level_ratio)
        # One extra season of slots so a bucket up to a season ahead still
        # finds its reference ``history_seconds`` back.
        self._n = int(history_seconds // bucket_seconds) + self._season
        self._sum = [0.0] * self._n
        self._cnt = [0] * self._n
        self._id = [-1] * self._n
        self._cur = -1  # id of the newest bucket (-1: nothing seen)
        self._last_t = -math.inf
        self._cache: dict[int, float | None] = {}
        self._lvl_t = -math.inf
        self._lvl_ready = False
        self._lvl_actual = 0.0  # EWMA of the samples ...
        self._lvl_profile = 0.0  # ... and of the profile at the same instants
        self._recent = math.nan  # EWMA of the samples (fallback level)

    # -- storage -------------------------------------------------------------

    def _mean(self, b: int) -> float | None:
        slot = b % self._n
        if self._id[slot] == b and self._cnt[slot]:
            return self._sum[slot] / self._cnt[slot]
        return None

    def observe(self, t: float, value: float) -> None:
        """Add a sample to its bucket and to the level; non-finite is ignored."""
        self._last_t = in_order(self._last_t, t)
        if not math.isfinite(value):
            return
        b = int(t // self.bucket_seconds)
        slot = b % self._n
        if self._id[slot] != b:
            self._id[slot] = b
            self._sum[slot] = 0.0
            self._cnt[slot] = 0
        self._sum[slot] += value
        self._cnt[slot] += 1
        if b != self._cur:
            self._cur = b
            for key in [k for k in self._cache if k < b - 1]:
                del self._cache[key]
        self._update_level(t, value)

    def _update_level(self, t: float, value: float) -> None:
        """Exponentially weighted actual and profile at the same instants."""
        a = -math.expm1(-(t - self._lvl_t) / self._tau)  # 1.0 on the first sample
        self._lvl_t = t
        self._recent = value if math.isnan(self._recent) else self._recent + a * (value - self._recent)
        p = self._at(t)
        if p is None:
            return
        if not self._lvl_ready:
            self._lvl_actual, self._lvl_profile, self._lvl_ready = value, p, True
        else:
            self._lvl_actual += a * (value - self._lvl_actual)
            self._lvl_profile += a * (p - self._lvl_profile)

    # -- model ---------------------------------------------------------------

    def _profile(self, b: int) -> float | None:
        """Seasonal reference for bucket ``b``; None if no past season covers it."""
        cached = self._cache.get(b, _MISSING)
        if cached is not _MISSING:
            return cached  # type: ignore[return-value]
        mean = self._mean
        daily = [m for k in range(1, self._daily_refs + 1) if (m := mean(b - k * self._season)) is not None]
        weekly = [m for k in range(1, self._weekly_refs + 1) if (m := mean(b - k * self._week)) is not None]
        p: float | None
        if daily:
            daily.sort()
            mid = len(daily) // 2
            p = daily[mid] if len(daily) % 2 else 0.5 * (daily[mid - 1] + daily[mid])
            if weekly:
                w = self._weekly_weight
                p = (1.0 - w) * p + w * (sum(weekly) / len(weekly))
        else:
            p = sum(weekly) / len(weekly) if weekly else None
        if b - self._season < self._cur:  # every reference bucket is complete
            self._cache[b] = p
        return p

    def _at(self, t: float) -> float | None:
        """Profile at time ``t``, interpolated between bucket centers — the two around
        ``t``, or, when samples are coarser than a bucket (every 15 minutes into 5-minute
        buckets) and both are empty, the nearest filled ones within ``NEAR_BUCKETS``."""
        pos = t / self.bucket_seconds - 0.5
        b0 = math.floor(pos)
        p0 = self._profile(b0)
        p1 = self._profile(b0 + 1)
        if p0 is None and p1 is None:
            left = right = None
            for k in range(1, NEAR_BUCKETS + 1):
                if left is None and (p := self._profile(b0 - k)) is not None:
                    left = (b0 - k, p)
                if right is None and (p := self._profile(b0 + 1 + k)) is not None:
                    right = (b0 + 1 + k, p)
                if left is not None and right is not None:
                    break
            if left is None or right is None:
                return None if left is None and right is None else (left or right)[1]
            return left[1] + (right[1] - left[1]) * (pos - left[0]) / (right[0] - left[0])
        if p0 is None:
            return p1
        if p1 is None:
            return p0
        return p0 + (p1 - p0) * (pos - b0)

    def _ratio(self) -> float:
        """Recent level relative to the profile, clamped; NaN before any profile."""
        if not self._lvl_ready:
            return math.nan
        if self._lvl_profile <= 0.0:
            return 1.0
        r = self._lvl_actual / self._lvl_profile
        return min(max(r, 1.0 / self._max_ratio), self._max_ratio)

    def forecast(self, now: float, horizon_seconds: float) -> Forecast:
        """ratio × profile over ``(now, now + horizon_seconds]``."""
        check_horizon(horizon_seconds)
        if self._cur < 0:
            return unavailable(now, horizon_seconds, f"{self.name}: no samples yet", self.name)
        at = now + horizon_seconds
        ratio = self._ratio()
        end = self._at(at)
        if math.isnan(ratio) or end is None:
            # No season to learn from yet: hold the recent level, flagged.
            level = self._recent
            reason = f"{self.name}: no history one season before t={at:g}"
            return Forecast(level, level, at, at, False, reason, self.name)
        value = ratio * end
        peak, peak_at = value, at
        start = self._at(now)
        if start is not None and ratio * start > peak:
            peak, peak_at = ratio * start, now
        bs = self.bucket_seconds
        b = math.floor(now / bs - 0.5) + 1  # first bucket center after now
        center = (b + 0.5) * bs
        while center < at:
            p = self._profile(b)
            if p is not None and ratio * p > peak:
                peak, peak_at = ratio * p, center
            b += 1
            center += bs
        return Forecast(value, peak, peak_at, at, True, None, self.name)
