"""The audit log: one JSON object per decision, appended as JSON Lines and
flushed after every sync, to a file or standard output (``--audit FILE|-``).

Fields (fixed by the run-config contract): ``time``, ``target``, ``provider``,
``semantics``, ``current_replicas``, ``recommended_replicas``,
``desired_replicas``, ``reason``, ``action`` (``applied``, ``dry_run``,
``unchanged``, ``in_flight``, ``paced``, ``refused``, ``failed``, and the
extension ``standby``: a replica not holding the leader election), ``error``;
extensions: ``error_kind`` (a provider error's kind), ``size`` (what the provider
set, when it clamped the request) and ``note``.
"""
from __future__ import annotations

import sys
import threading
from typing import IO, Iterable, Optional

from pydantic_core import to_json

__all__ = ["AuditLog", "ACTIONS"]

ACTIONS = ("applied", "dry_run", "unchanged", "in_flight", "paced", "refused", "failed", "standby")


class AuditLog:
    def __init__(self, target: str):
        self.target = target
        self._lock = threading.Lock()
        self._own = target != "-"
        self._stream: IO[str] = open(target, "a", encoding="utf-8") if self._own else sys.stdout

    def write(self, records: Iterable[dict]) -> None:
        lines = "".join(to_json(r).decode() + "\n" for r in records)
        if not lines:
            return
        with self._lock:
            self._stream.write(lines)
            self._stream.flush()

    def close(self) -> None:
        with self._lock:
            if self._own:
                self._stream.close()
            else:
                self._stream.flush()


def open_audit(target: Optional[str]) -> Optional[AuditLog]:
    return AuditLog(target) if target else None
