"""Structured logs of the controller on standard error: ``--log-format text``
(``time level message key=value …``) or ``json`` (one object per line, with the
same keys), through the standard ``logging`` module under ``scalebridge``.

Everything else that logs in the process — the SDKs (azure-identity, azure-core,
botocore, google-auth, the kubernetes client, urllib3), Python's warnings — goes
through the same handler at :data:`SDK_LEVEL`, and so does every line scalebridge
prints itself (:func:`scalebridge.cliargs.say`): under ``json`` every line on
stderr is one JSON object. Every line is masked for secrets
(:func:`scalebridge.secrets.redact`).
"""
from __future__ import annotations

import logging
import sys
import time
from typing import Any

from pydantic_core import to_json

from .. import cliargs
from ..secrets import redact

__all__ = ["configure", "log", "SDK_LEVEL", "QUIET_LOGGERS"]

LOGGER = logging.getLogger("scalebridge.controller")
#: the level at which other libraries' records are shown
SDK_LEVEL = logging.WARNING
#: libraries whose warnings repeat an error the controller reports itself (a target's
#: failed sync names the credential chain's failure): shown from ERROR up.
#: azure-identity logs each credential of DefaultAzureCredential's chain at WARNING on
#: every failed token request (https://learn.microsoft.com/azure/developer/python/sdk/azure-sdk-logging)
QUIET_LOGGERS = {"azure.identity": logging.ERROR, "azure.core.pipeline.policies.http_logging_policy": logging.ERROR}


def _fields(record: logging.LogRecord) -> dict:
    fields = getattr(record, "fields", None)
    if fields is None:   # another library's record: say whose
        fields = {"logger": record.name}
    return fields


class _Text(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = _fields(record)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        extra = " ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
        message = record.getMessage()
        if record.exc_info and getattr(record, "fields", None) is None:
            message += " " + " ".join(self.formatException(record.exc_info).split())
        return redact(f"{stamp}Z {record.levelname.lower()} {message}" + (f" {extra}" if extra else ""))


class _Json(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": record.created, "level": record.levelname.lower(),
                               "message": record.getMessage()}
        out.update({k: v for k, v in _fields(record).items() if v is not None})
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return redact(to_json(out, fallback=str).decode())


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
    root = logging.getLogger()   # other libraries' records, through the same handler
    root.handlers[:] = [h for h in root.handlers if not isinstance(h, _Stderr)] + [handler]
    root.setLevel(SDK_LEVEL)
    for name, lvl in QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(lvl)
    logging.captureWarnings(True)
    cliargs.SAY_HOOK = _say_json if fmt == "json" else None


def unconfigure() -> None:
    """Undo :func:`configure`'s process-wide parts (an embedding program, tests)."""
    cliargs.SAY_HOOK = None
    root = logging.getLogger()
    root.handlers[:] = [h for h in root.handlers if not isinstance(h, _Stderr)]


def _say_json(command: str, text: str) -> None:
    LOGGER.log(logging.ERROR, text, extra={"fields": {"command": f"scalebridge {command}"}})


def log(level: int, message: str, **fields: Any) -> None:
    if LOGGER.isEnabledFor(level):
        LOGGER.log(level, message, extra={"fields": fields})
