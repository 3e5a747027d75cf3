"""The audit log: one JSON object per decision, appended as JSON Lines and
flushed after every sync, to a file or standard output (``--audit FILE|-``).

Fields (fixed by the run-config contract): ``time``, ``target``, ``provider``,
``semantics``, ``current_replicas``, ``recommended_replicas``,
``desired_replicas``, ``reason``, ``action`` (``applied``, ``dry_run``,
``unchanged``, ``in_flight``, ``paced``, ``refused``, ``failed``, ``paused`` (a
paused target: no decision; its ``note`` says who paused it), and the extension
``standby``: a replica not holding the leader election), ``error``;
extensions: ``error_kind`` (a provider error's kind, or ``store``), ``size`` (what
the provider set, when it clamped the request), ``note``, ``fallback`` (with a policy's ``fallback``: whether it applies), and
``recovered: true`` on
the record of a write carried out by a controller that died before auditing it;
action ``shadow`` and the ``shadow`` object on a shadow target's records (never written;
the comparison with the native autoscaler, :mod:`scalebridge.controller.shadow`).

An audit log that cannot be written (a closed pipe, a full disk) raises
:class:`AuditError`: the controller persists its state and stops (exit 1), since a
controller whose decisions go unrecorded is not one to leave running.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import IO, Iterable, Optional

from pydantic_core import to_json

from ..errors import ScalebridgeError
from ..secrets import redact

__all__ = ["AuditLog", "AuditError", "ACTIONS"]


class AuditError(ScalebridgeError):
    """The audit log cannot be written."""

ACTIONS = ("applied", "dry_run", "unchanged", "in_flight", "paced", "refused", "failed", "standby", "paused",
           "shadow")


class AuditLog:
    def __init__(self, target: str):
        self.target = target
        self._lock = threading.Lock()
        self._own = target != "-"
        self._broken = False
        try:
            self._stream: IO[str] = open(target, "a", encoding="utf-8") if self._own else sys.stdout
        except OSError as e:
            raise AuditError(f"--audit {target}: {e.strerror or e}") from None

    @property
    def where(self) -> str:
        return "standard output" if not self._own else self.target

    def write(self, records: Iterable[dict]) -> None:
        lines = "".join(to_json(r).decode() + "\n" for r in records)
        if not lines:
            return
        lines = redact(lines)
        with self._lock:
            if self._broken:
                raise AuditError(f"{self.where}: already failed")
            try:
                self._stream.write(lines)
                self._stream.flush()
            except (OSError, ValueError) as e:
                self._broken = True
                self._detach()
                raise AuditError(f"{self.where}: {getattr(e, 'strerror', None) or e}") from None

    def _detach(self) -> None:
        """After a failure, nothing more goes to the broken stream — not even the
        interpreter's flush at exit (a closed pipe would print a traceback then)."""
        try:
            if self._own:
                self._stream.close()
            else:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                os.close(devnull)
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        with self._lock:
            if self._broken:
                return
            try:
                if self._own:
                    self._stream.close()
                else:
                    self._stream.flush()
            except (OSError, ValueError):
                self._broken = True
                self._detach()


def open_audit(target: Optional[str]) -> Optional[AuditLog]:
    return AuditLog(target) if target else None
