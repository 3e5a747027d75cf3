"""Reading, validating, repairing and resampling load traces (scalebridge.simulator.traces).

Source: docs/simulation.md (--trace, --fill, --tick)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scalebridge.simulator.traces import read_trace, resample, Trace, TraceError


TRACES = Path(os.environ.get("SCALEBRIDGE_TRACES", "/work/shared/traces"))


REAL = {  # file: (rows, total requests) from SOURCES.md
    "worldcup98_day46-78.csv": (47_520, 1_134_664_721),
    "nasa_http_1995-07-01_27.csv": (38_880, 1_864_593),
    "azure_llm_code_2024-05-10_16.csv": (10_080, 16_803_517),
}


needs_traces = pytest.mark.skipif(not TRACES.is_dir(), reason=f"real traces not found in {TRACES}")


def csv(tmp_path: Path, text: str, name: str = "load.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1") if "\xff" in text else text.encode())
    return path


def rows(*pairs: tuple[object, object]) -> str:
    return "timestamp,value\n" + "".join(f"{t},{v}\n" for t, v in pairs)


def error(path: Path, **kwargs: object) -> TraceError:
    with pytest.raises(TraceError) as caught:
        read_trace(path, **kwargs)
    return caught.value


@pytest.mark.parametrize(
    "text, line, words",
    [
        (rows((0, 1), (60, 2), (180, 3), (240, 4)), 4, ["gap", "fill="]),
        (rows((0, 1), (60, 2), (120, 3), (90, 4)), 5, ["not sorted"]),
        (rows((0, 1), (60, 2), (60, 3), (120, 4)), 4, ["duplicate"]),
        (rows((0, 1), (60, -2), (120, 3)), 3, ["non-negative"]),
        (rows((0, 1), (60, 2), (120, "nan")), 4, ["finite"]),
        (rows((0, 1), (60, "inf"), (120, 3)), 3, ["finite"]),
        (rows((0, 1), ("inf", 2)), 3, ["finite"]),
        ("0,1\n60,2\n", 1, ["missing header", "timestamp,value"]),
        ("time,value\n0,1\n60,2\n", 1, ["header must be", "timestamp,value"]),
        ("", 1, ["empty file"]),
        ("\n\n", 1, ["empty file"]),
        ("timestamp,value\n", 2, ["no data rows"]),
        (rows((0, 1), (60, "lots"), (120, 3)), 3, ["value is not a number", "lots"]),
        (rows((0, 1), ("noon", 2)), 3, ["timestamp is not a number"]),
        (rows((0, 1), (60, "")), 3, ["value is not a number"]),
        ("timestamp,value\n0,1\n60\n120,3\n", 3, ["expected 2 fields"]),
        ("timestamp,value\n0,1\n60,2,7\n120,3\n", 3, ["expected 2 fields"]),
        ("timestamp,value\n0,1\n\n120,3\n", 3, ["blank line"]),
        (rows((0, 1)), 2, ["only one data row"]),
        ("timestamp,value\n0,1\n60,\xff\n", 3, ["not UTF-8"]),
    ],
    ids=[
        "gap", "unsorted", "duplicate", "negative", "nan", "inf", "inf-timestamp",
        "missing-header", "wrong-header", "empty", "blank-file", "header-only",
        "non-numeric", "non-numeric-timestamp", "empty-field", "too-few-fields",
        "too-many-fields", "blank-line", "single-row", "not-utf8",
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, text: str, line: int, words: list[str]) -> None:
    path = csv(tmp_path, text)
    caught = error(path)
    message = str(caught)
    assert message.startswith(f"{path}:{line}: "), message
    assert caught.line == line and caught.path == str(path)
    for word in words:
        assert word in message


def test_rows_with_consistently_one_field_are_not_reshaped_into_pairs(tmp_path: Path) -> None:
    assert error(csv(tmp_path, "timestamp,value\n0\n60\n120\n180\n")).line == 2


def test_error_line_numbers_hold_deep_in_a_large_file(tmp_path: Path) -> None:
    body = [f"{60 * i},{i % 7}" for i in range(50_000)]
    body[41_234] = f"{60 * 41_234},-3"
    path = csv(tmp_path, "timestamp,value\n" + "\n".join(body) + "\n")
    assert error(path).line == 41_234 + 2


def test_earliest_value_problem_is_reported(tmp_path: Path) -> None:
    path = csv(tmp_path, rows((0, 1), (60, 2), (120, -1), (180, "nan")))
    assert error(path).line == 4


def test_gap_message_says_where_and_how_many(tmp_path: Path) -> None:
    path = csv(tmp_path, rows((0, 1), (60, 2), (300, 3), (360, 4), (600, 5)))
    message = str(error(path))
    assert "240 s between 60 (line 3) and 300" in message
    assert "resolution is 60 s" in message and "1 more gap" in message


def test_header_tolerates_bom_spaces_case_and_trailing_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffTimestamp, Value\r\n0,1\r\n60,2\r\n\r\n\r\n".encode())
    trace = read_trace(path)
    assert trace.values.tolist() == [1, 2] and trace.source == str(path)


def test_invalid_arguments(tmp_path: Path) -> None:
    path = csv(tmp_path, rows((0, 1), (60, 2)))
    with pytest.raises(ValueError, match="fill"):
        read_trace(path, fill="mean")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scale"):
        read_trace(path, scale=0)


def test_reads_values_scale_and_resolution(tmp_path: Path) -> None:
    trace = read_trace(csv(tmp_path, rows((100, 60), (160, 120), (220, 0))), scale=1 / 60)
    assert trace.times.dtype == np.float64 and trace.values.dtype == np.float64
    np.testing.assert_allclose(trace.values, [1, 2, 0])
    assert trace.resolution == 60 and trace.start == 100 and trace.end == 280 and len(trace) == 3


def test_fractional_timestamps(tmp_path: Path) -> None:
    trace = read_trace(csv(tmp_path, rows(*((1e9 + 0.1 * i, i) for i in range(50)))))
    assert trace.resolution == pytest.approx(0.1)


def test_irregular_finer_steps_are_not_gaps(tmp_path: Path) -> None:
    trace = read_trace(csv(tmp_path, rows((0, 1), (60, 2), (90, 3), (120, 4), (180, 5), (240, 6))))
    assert trace.resolution == 60 and len(trace) == 6


@pytest.mark.parametrize(
    "fill, expected",
    [("zero", [4, 0, 0, 10, 1]), ("previous", [4, 4, 4, 10, 1]), ("interpolate", [4, 6, 8, 10, 1])],
)
def test_fill_modes(tmp_path: Path, fill: str, expected: list[float]) -> None:
    trace = read_trace(csv(tmp_path, rows((0, 4), (180, 10), (240, 1))), fill=fill)  # type: ignore[arg-type]
    assert trace.times.tolist() == [0, 60, 120, 180, 240]
    assert trace.values.tolist() == expected


def test_fill_gap_not_a_multiple_of_the_resolution(tmp_path: Path) -> None:
    text = rows((0, 1), (60, 1), (120, 1), (270, 5), (330, 5))
    trace = read_trace(csv(tmp_path, text), fill="previous")
    assert trace.times.tolist() == [0, 60, 120, 180, 240, 270, 330]
    assert trace.values.tolist() == [1, 1, 1, 1, 1, 5, 5]


def test_fill_applies_scale_to_inserted_samples(tmp_path: Path) -> None:
    trace = read_trace(csv(tmp_path, rows((0, 60), (60, 60), (180, 120))), fill="previous", scale=0.5)
    assert trace.values.tolist() == [30, 30, 30, 60]


def test_fill_does_not_hide_other_errors(tmp_path: Path) -> None:
    assert error(csv(tmp_path, rows((0, 1), (60, 2), (60, 3))), fill="zero").line == 4


@needs_traces
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_traces(name: str) -> None:
    count, total = REAL[name]
    trace = read_trace(TRACES / name, scale=1 / 60)
    assert len(trace) == count and trace.resolution == 60
    assert trace.values.sum() * 60 == pytest.approx(total, rel=1e-12)
    per_second = resample(trace, 15)
    assert per_second.size == 4 * count
    assert per_second.sum() * 15 == pytest.approx(total, rel=1e-12)


TRACE = Trace(np.array([0.0, 60, 120]), np.array([6.0, 12, 3]), resolution=60)


def test_finer_ticks_repeat_values() -> None:
    assert resample(TRACE, 15).tolist() == [6] * 4 + [12] * 4 + [3] * 4


def test_coarser_ticks_average() -> None:
    assert resample(TRACE, 120).tolist() == [9, 3]  # the last tick spans only one sample
    assert resample(TRACE, 180).tolist() == [7]


def test_unaligned_ticks_weight_by_time() -> None:
    np.testing.assert_allclose(resample(TRACE, 45), [6, (15 * 6 + 30 * 12) / 45, (30 * 12 + 15 * 3) / 45, 3])


def test_window() -> None:
    assert resample(TRACE, 30, start=30, end=150).tolist() == [6, 12, 12, 3]
    with pytest.raises(ValueError, match="inside the trace"):
        resample(TRACE, 15, start=-15)
    with pytest.raises(ValueError, match="inside the trace"):
        resample(TRACE, 15, end=200)
    with pytest.raises(ValueError, match="tick_seconds"):
        resample(TRACE, 0)


def test_exact_values_survive_large_timestamps() -> None:
    trace = Trace(1.7e9 + 60 * np.arange(1000.0), np.arange(1000.0) * 0.1, resolution=60)
    assert np.array_equal(resample(trace, 15), np.repeat(trace.values, 4))


@settings(max_examples=200)
@given(
    values=st.lists(st.floats(0, 1e6), min_size=1, max_size=40),
    resolution=st.sampled_from([1.0, 10.0, 60.0, 300.0]),
    tick=st.sampled_from([1.0, 7.0, 15.0, 60.0, 90.0, 3600.0]),
)
def test_resampling_preserves_the_integral(values: list[float], resolution: float, tick: float) -> None:
    trace = Trace(1e9 + resolution * np.arange(len(values)), np.array(values), resolution=resolution)
    load = resample(trace, tick)
    span = trace.end - trace.start
    assert load.size == int(np.ceil(span / tick - 1e-9))
    durations = np.full(load.size, tick)
    durations[-1] = span - tick * (load.size - 1)
    total = float(np.sum(values)) * resolution
    assert float(load @ durations) == pytest.approx(total, rel=1e-9, abs=1e-6)
    assert load.min() >= min(values) - 1e-9 * max(values) and load.max() <= max(values) * (1 + 1e-12)
