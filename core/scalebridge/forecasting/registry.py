"""Forecasters by name: ``MODELS`` and ``make_forecaster``."""

from __future__ import annotations

from typing import Any, Callable

from .auto import AutoForecaster
from .base import Forecaster
from .guard import GuardedForecaster
from .naive import NaiveForecaster
from .regression import PolynomialForecaster
from .seasonal import SeasonalForecaster


def _linear(**params: Any) -> Forecaster:
    return PolynomialForecaster(degree=1, **params)


def _quadratic(**params: Any) -> Forecaster:
    return PolynomialForecaster(degree=2, **params)


#: name -> factory(**params) -> Forecaster, the built-in models. A plugin's models
#: (the ``scalebridge_register_forecasters`` hook) are looked up in the plugin
#: registry after these; :func:`register_forecaster` adds one in-process.
MODELS: dict[str, Callable[..., Forecaster]] = {
    "naive": NaiveForecaster,
    "linear": _linear,
    "quadratic": _quadratic,
    "seasonal": SeasonalForecaster,
    "auto": AutoForecaster,
}


def register_forecaster(name: str, factory: Callable[..., Forecaster], *, replace: bool = False) -> None:
    """Make ``factory`` available as ``make_forecaster(name, ...)``."""
    if not replace and name in MODELS and MODELS[name] is not factory:
        raise ValueError(f"forecaster {name!r} is already registered")
    MODELS[name] = factory


def make_forecaster(name: str, **params: Any) -> Forecaster:
    """Build the model registered as ``name`` with its keyword ``params``."""
    factory = MODELS.get(name)
    if factory is None:   # one a plugin registered (the scalebridge_register_forecasters hook)
        from .. import registry
        entry = registry.current().forecasters.get(name)
        if entry is None:
            valid = ", ".join(sorted(set(MODELS) | set(registry.current().forecasters)))
            raise ValueError(f"unknown forecaster {name!r}; valid: {valid}")
        factory = entry.obj
    return factory(**params)


def guarded(model: Forecaster | str, **guard_params: Any) -> GuardedForecaster:
    """Wrap a model (or a registry name, default params) in a :class:`GuardedForecaster`."""
    inner = make_forecaster(model) if isinstance(model, str) else model
    return GuardedForecaster(inner, **guard_params)
