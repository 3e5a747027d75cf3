"""Structured logs of the controller on standard error: ``--log-format text``
(``time level message key=value …``) or ``json`` (one object per line, with the
same keys), through the standard ``logging`` module under ``scalebridge``."""
from __future__ import annotations

import logging
import sys
import time
from typing import Any

from pydantic_core import to_json

__all__ = ["configure", "log"]

LOGGER = logging.getLogger("scalebridge.controller")


class _Text(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", {})
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        extra = " ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
        return f"{stamp}Z {record.levelname.lower()} {record.getMessage()}" + (f" {extra}" if extra else "")


class _Json(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": record.created, "level": record.levelname.lower(),
                               "message": record.getMessage()}
        out.update({k: v for k, v in getattr(record, "fields", {}).items() if v is not None})
        return to_json(out, fallback=str).decode()


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the record."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def configure(fmt: str = "text", level: int = logging.INFO) -> None:
    handler = _Stderr()
    handler.setFormatter(_Json() if fmt == "json" else _Text())
    LOGGER.handlers[:] = [handler]
    LOGGER.setLevel(level)
    LOGGER.propagate = False


def log(level: int, message: str, **fields: Any) -> None:
    if LOGGER.isEnabledFor(level):
        LOGGER.log(level, message, extra={"fields": fields})
