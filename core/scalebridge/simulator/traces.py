"""Load traces: read a ``timestamp,value`` CSV, validate it, resample it to ticks.

File format
-----------
A header line ``timestamp,value``, then one row per sample: a Unix timestamp in
seconds (any resolution, fractions allowed) and a non-negative finite value.
Rows are sorted by strictly increasing timestamp and evenly spaced: the
trace's *resolution* is its dominant (most common) step, and a step larger
than it is a *gap*. A step smaller than the resolution is accepted (the
samples are simply irregular).

A sample's value holds from its timestamp until the next sample's (step-hold);
the last sample holds for one resolution, so a trace covers
``[times[0], times[-1] + resolution)``.

Units
-----
``value`` is in whatever unit the file uses, and ``scale`` multiplies it. The
real traces in ``SOURCES.md`` hold *requests per minute* (the count that
arrived in the minute starting at ``timestamp``); read them with
``scale=1/60`` to get requests per second, and give member capacity in
requests per second to match. ``resample`` averages a rate: it never sums, so
the unit you read with is the unit you get at every tick, whatever the tick.

Errors
------
Every problem raises :class:`TraceError`, whose message starts with
``<file>:<line>:`` (line 1 is the header) and says what would be valid:
missing or wrong header, no data rows, a wrong number of fields, a non-numeric
field, NaN or infinity, a negative value, a timestamp not after the previous
one (unsorted or duplicate), and a gap. A gap is repaired instead of rejected
when ``fill`` is given: ``"zero"`` (missing samples are 0), ``"previous"``
(forward-fill: the sample before the gap holds) or ``"interpolate"`` (linear
between the samples on either side). Missing samples are put on the
resolution's grid after the sample before the gap. ``fill`` repairs gaps only;
recorded zeros (e.g. outages in the NASA trace) are data and are kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

__all__ = ["HEADER", "FILL_MODES", "Trace", "TraceError", "read_trace", "resample"]

HEADER = "timestamp,value"
FILL_MODES = ("zero", "previous", "interpolate")
FillMode = Literal["zero", "previous", "interpolate"]

_STEP_DECIMALS = 6  # steps are compared at microsecond precision


def _slack(resolution: float) -> float:
    """How much longer than the resolution a step may be before it is a gap."""
    return resolution * 1e-9 + 10.0**-_STEP_DECIMALS


#: the largest trace value (before ``scale``): ``simulate --peak``'s bound, so that a
#: replay's sums, means and ratios stay within a float
MAX_VALUE = 1e15


class TraceError(ValueError):
    """A trace file is malformed; ``str(error)`` is ``"<path>:<line>: <problem>"``."""

    def __init__(self, path: str, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        super().__init__(f"{path}:{line}: {problem}")


def dominant_step(times: np.ndarray) -> float:
    """The most common positive step between consecutive ``times`` (their
    resolution); the smallest of equally common steps, so ties err towards
    reporting gaps rather than hiding them."""
    steps = np.round(np.diff(times), _STEP_DECIMALS)
    steps = steps[steps > 0]
    if steps.size == 0:
        raise ValueError("at least two distinct timestamps are needed to infer a resolution")
    values, counts = np.unique(steps, return_counts=True)
    return float(values[np.argmax(counts)])  # np.unique sorts: first is smallest


@dataclass(frozen=True, eq=False)
class Trace:
    """Load samples: ``values[i]`` holds on ``[times[i], times[i+1])``.

    ``resolution`` is the sample spacing (inferred from ``times`` when not
    given); the last sample holds for one resolution, so the trace ends at
    ``end == times[-1] + resolution``.
    """

    times: np.ndarray
    values: np.ndarray
    source: str = "<memory>"
    resolution: float = field(default=0.0)

    def __post_init__(self) -> None:
        times = np.asarray(self.times, dtype=np.float64)
        values = np.asarray(self.values, dtype=np.float64)
        if times.ndim != 1 or times.shape != values.shape or times.size == 0:
            raise ValueError("times and values must be non-empty 1-d arrays of equal length")
        resolution = float(self.resolution) if self.resolution else dominant_step(times)
        if not resolution > 0:
            raise ValueError("resolution must be positive")
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "resolution", resolution)

    def __len__(self) -> int:
        return int(self.times.size)

    @property
    def start(self) -> float:
        """Time of the first sample."""
        return float(self.times[0])

    @property
    def end(self) -> float:
        """End of the last sample's hold: ``times[-1] + resolution``."""
        return float(self.times[-1]) + self.resolution


def read_trace(
    path: str | os.PathLike[str], *, scale: float = 1.0, fill: FillMode | None = None
) -> Trace:
    """Read and validate a ``timestamp,value`` CSV; values are multiplied by ``scale``.

    ``fill`` repairs gaps (``"zero"``, ``"previous"``, ``"interpolate"``);
    without it a gap raises :class:`TraceError` naming its line. See the module
    docstring for the format, the units and every error.
    """
    if fill is not None and fill not in FILL_MODES:
        raise ValueError(f"fill must be one of {FILL_MODES} or None, not {fill!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number, not {scale!r}")
    name = os.fspath(path)
    from ..inputfile import MAX_TRACE_BYTES, InputFileError, read_bytes
    try:
        data = read_bytes(name, limit=MAX_TRACE_BYTES)
    except InputFileError as e:
        raise TraceError(name, 1, e.reason) from None
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as bad:
        line = data[: bad.start].count(b"\n") + 1
        raise TraceError(name, line, "not UTF-8 text; expected a 'timestamp,value' CSV") from None
    _check_header(name, lines)
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()  # trailing blank lines are harmless
    if len(lines) < 2:
        raise TraceError(name, 2, "no data rows after the header; expected rows '<unix seconds>,<value>'")
    rows = _parse_rows(name, lines)
    times, values = rows[:, 0], rows[:, 1]
    _check_values(name, times, values)
    if times.size < 2:
        raise TraceError(name, 2, "only one data row; at least two are needed to infer the resolution")
    resolution = _check_order(name, times, gaps_allowed=fill is not None)
    if fill is not None:
        times, values = _fill_gaps(times, values, resolution, fill)
    values = values * scale
    if scale > 1:
        _check_values(name, times, values)   # the bound holds for the scaled load too
    return Trace(times, values, source=name, resolution=resolution)


def _check_header(name: str, lines: list[str]) -> None:
    if not lines or not "".join(lines).strip():
        raise TraceError(name, 1, f"empty file; expected the header '{HEADER}' and data rows")
    header = lines[0].replace(" ", "").strip().lower()
    if header == HEADER:
        return
    try:
        [float(x) for x in lines[0].split(",")]
    except ValueError:
        raise TraceError(name, 1, f"header must be '{HEADER}', got {_shown(lines[0])}") from None
    raise TraceError(name, 1, f"missing header '{HEADER}'; the first line is data: {_shown(lines[0])}")


def _shown(line: str, limit: int = 80) -> str:
    """A line of the file as a message quotes it: at most ``limit`` characters."""
    return repr(line) if len(line) <= limit else repr(line[:limit]) + f"… ({len(line):,} characters)"


def _parse_rows(name: str, lines: list[str]) -> np.ndarray:
    """Parse data rows into an (n, 2) float array; fast path, exact diagnosis on failure."""
    body = lines[1:]
    # fast path: every row one comma, every field converted by numpy in one call (each
    # field as float() reads it, as from a list of rows, at half the cost)
    if all(line.count(",") == 1 for line in body):
        try:
            return np.array(",".join(body).split(","), dtype=np.float64).reshape(-1, 2)
        except ValueError:
            pass
    rows = np.empty((len(lines) - 1, 2))
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        if not line.strip():
            raise TraceError(name, number, "blank line; expected '<unix seconds>,<value>'")
        if len(fields) != 2:
            problem = f"expected 2 fields 'timestamp,value', got {len(fields)}: {_shown(line)}"
            raise TraceError(name, number, problem)
        for column, (label, text) in enumerate(zip(("timestamp", "value"), fields)):
            try:
                rows[number - 2, column] = float(text)
            except ValueError:
                raise TraceError(name, number, f"{label} is not a number: {_shown(text.strip())}") from None
    return rows


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _check_values(name: str, times: np.ndarray, values: np.ndarray) -> None:
    """NaN/inf anywhere, negative values: report the earliest offending row."""
    problems: list[tuple[int, str]] = []
    for label, column in (("timestamp", times), ("value", values)):
        row = _first(~np.isfinite(column))
        if row is not None:
            problems.append((row, f"{label} must be a finite number, got {float(column[row])!r}"))
    row = _first(values < 0)
    if row is not None:
        problems.append((row, f"value must be non-negative, got {float(values[row]):g}"))
    row = _first(np.isfinite(values) & (values > MAX_VALUE))
    if row is not None:   # sums, means and ratios of such values overflow a float
        problems.append((row, f"value must be at most {MAX_VALUE:g}, got {float(values[row]):g}"))
    if problems:
        row, problem = min(problems)
        raise TraceError(name, row + 2, problem)


def _check_order(name: str, times: np.ndarray, *, gaps_allowed: bool) -> float:
    """Strictly increasing timestamps, no gap unless allowed; returns the resolution."""
    steps = np.diff(times)
    row = _first(steps <= 0)  # row + 1 is the offending sample
    if row is not None:
        kind = "duplicate timestamp" if steps[row] == 0 else "timestamps not sorted"
        raise TraceError(
            name,
            row + 3,
            f"{kind}: {times[row + 1]:.17g} does not come after {times[row]:.17g} "
            f"(line {row + 2}); timestamps must strictly increase",
        )
    resolution = dominant_step(times)
    gaps = np.flatnonzero(steps > resolution + _slack(resolution))
    if gaps.size and not gaps_allowed:
        row = int(gaps[0])
        more = f" ({gaps.size - 1} more gap(s) after it)" if gaps.size > 1 else ""
        raise TraceError(
            name,
            row + 3,
            f"gap: {steps[row]:.17g} s between {times[row]:.17g} (line {row + 2}) and "
            f"{times[row + 1]:.17g}, the resolution is {resolution:.17g} s{more}; "
            f"pass fill='zero', 'previous' or 'interpolate' to repair gaps",
        )
    return resolution


def _fill_gaps(
    times: np.ndarray, values: np.ndarray, resolution: float, fill: FillMode
) -> tuple[np.ndarray, np.ndarray]:
    """Insert samples on the resolution grid inside every gap."""
    steps = np.diff(times)
    missing = np.ceil((steps - _slack(resolution)) / resolution).astype(np.int64) - 1
    missing = np.maximum(missing, 0)  # samples to insert after each sample
    if not missing.any():
        return times, values
    owner = np.repeat(np.arange(steps.size), missing)  # the sample before each inserted one
    offset = np.arange(owner.size) - np.repeat(np.cumsum(missing) - missing, missing) + 1
    new_times = times[owner] + offset * resolution
    if fill == "zero":
        new_values = np.zeros(owner.size)
    elif fill == "previous":
        new_values = values[owner]
    else:
        new_values = np.interp(new_times, times, values)
    order = np.argsort(np.concatenate([times, new_times]), kind="stable")
    return np.concatenate([times, new_times])[order], np.concatenate([values, new_values])[order]


def resample(
    trace: Trace, tick_seconds: float, start: float | None = None, end: float | None = None
) -> np.ndarray:
    """The load at each tick ``[start + k*tick, start + (k+1)*tick)`` of ``[start, end)``.

    Each tick gets the time-weighted mean of the step-hold trace over its
    interval: a tick inside one sample's hold repeats that sample's value
    exactly (ticks finer than the trace repeat values), a tick spanning
    several samples averages them (coarser ticks average), and a final partial
    tick averages over its shorter span. The integral is preserved:
    ``sum(load[:-1]) * tick + load[-1] * last_span`` equals the trace's integral
    over ``[start, end)``. ``start`` and ``end`` default to the trace's span
    and must lie within it. There are ``ceil((end - start) / tick)`` ticks.
    """
    if not tick_seconds > 0:
        raise ValueError(f"tick_seconds must be positive, not {tick_seconds!r}")
    lo = trace.start if start is None else float(start)
    hi = trace.end if end is None else float(end)
    if not trace.start <= lo < hi <= trace.end:
        raise ValueError(
            f"resample window [{lo}, {hi}) must be non-empty and inside the trace's span "
            f"[{trace.start}, {trace.end})"
        )
    count = max(1, int(np.ceil((hi - lo) / tick_seconds - 1e-9)))
    bounds = lo + np.arange(count + 1) * float(tick_seconds)
    bounds[-1] = hi
    edges = np.append(trace.times, trace.end)
    # the common case, ticks no longer than the samples and aligned with them: every tick
    # lies inside one sample's hold (no edge strictly inside it), so it repeats that value
    held = np.searchsorted(edges, bounds[:-1], side="right") - 1
    if np.all(edges[held + 1] >= bounds[1:]):
        return trace.values[held]
    inner = edges[(edges > lo) & (edges < hi)]
    points = np.union1d(bounds, inner)  # every piece lies inside one tick and one sample
    sample = np.searchsorted(edges, points[:-1], side="right") - 1
    area = trace.values[sample] * np.diff(points)
    first = np.searchsorted(points, bounds[:-1])
    load = np.add.reduceat(area, first) / np.diff(bounds)
    pieces = np.diff(np.append(first, area.size))
    whole = pieces == 1  # one sample covers the tick: repeat its value exactly
    load[whole] = trace.values[sample[first[whole]]]
    return load
