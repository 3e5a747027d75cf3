"""Load forecasting for predictive scaling: streaming models, a guard, evaluation.

Every model implements :class:`Forecaster` (``observe(t, value)``,
``forecast(now, horizon_seconds) -> Forecast``); time always comes in as an
argument. See README.md in this directory for the models and their accuracy
on the shared traces.
"""

from .auto import AutoForecaster
from .base import DAY, HOUR, MINUTE, WEEK, Forecast, Forecaster, OutOfOrderError
from .evaluate import forecast_series, mape, mape_at_lead
from .guard import GuardedForecaster
from .registry import MODELS, guarded, make_forecaster, register_forecaster
from .naive import NaiveForecaster
from .regression import PolynomialForecaster
from .seasonal import SeasonalForecaster

__all__ = [
    "DAY", "HOUR", "MINUTE", "WEEK",
    "MODELS", "AutoForecaster", "Forecast", "Forecaster", "GuardedForecaster", "NaiveForecaster",
    "OutOfOrderError", "PolynomialForecaster", "SeasonalForecaster",
    "forecast_series", "guarded", "make_forecaster", "mape", "mape_at_lead",
    "register_forecaster",
]
