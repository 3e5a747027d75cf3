"""Shared series for the forecasting tests."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pytest

DAY = 86400.0
EPOCH = 1_767_225_600.0  # 2026-01-01T00:00Z: absolute epoch times, as in production


def _daily(t: np.ndarray | float) -> np.ndarray | float:
    x = 2 * math.pi * (np.asarray(t) - EPOCH) / DAY
    return 1000 + 500 * np.sin(x) + 200 * np.sin(2 * x + 1)


@pytest.fixture
def daily_pattern() -> Callable[[np.ndarray | float], np.ndarray | float]:
    """A smooth positive daily pattern (UTC days): 1000 ± 500 (fundamental) ± 200 (harmonic)."""
    return _daily
