"""The audit log: one JSON object per decision, appended as JSON Lines and
flushed after every sync, to a file or standard output (``--audit FILE|-``).

Fields (fixed by the run-config contract): ``time``, ``target``, ``provider``,
``semantics``, ``current_replicas``, ``recommended_replicas``,
``desired_replicas``, ``reason``, ``action`` (``applied``, ``dry_run``,
``unchanged``, ``in_flight``, ``paced``, ``refused``, ``failed``, ``paused`` (a
paused target: no decision; its ``note`` says who paused it), and the extension
``standby``: a replica not holding the leader election), ``error``;
extensions: ``error_kind`` (a provider error's kind, or ``store``), ``size`` (what
the provider set, when it clamped the request), ``note``, ``fallback`` (with a policy's ``fallback``: whether it applies),
``throttled`` (a throttled answer or a sync held back by one: the server's
``retry_after``, ``held_seconds``, ``operation``), ``standby_replicas`` (members in a
standby or warm pool the decision left out: neither capacity nor failures; absent when
none), and ``recovered: true`` on
the record of a write carried out by a controller that died before auditing it.

**Always valid JSON Lines.** A file is written through one descriptor opened with
``O_APPEND``, each sync's records in one ``write``; a write cut short (a full disk,
``EFBIG``, an I/O error) is cut back to the last whole record
(``ftruncate``), so no reader ever sees half of one. A file that ends in a torn
record all the same (a crash in the middle of a write, a disk that filled under an
older version) is repaired when it is opened: the torn bytes are dropped, with a
warning naming the file, how many bytes and from which offset. :func:`read_records`
reads a file back, naming the file and line of anything that is not a record.

**Rotation.** With ``max_bytes`` (``--audit-max-bytes``, default 100 MiB; 0: never)
a file about to grow past it is renamed ``FILE.1`` (``FILE.1`` to ``FILE.2`` … up
to ``keep``, ``--audit-keep``, default 5; the oldest dropped) and a new ``FILE``
started; a sync's records never straddle two files. For logrotate instead (its
``create`` or rename rotation), :meth:`AuditLog.reopen` (SIGUSR1) reopens ``FILE``
at the next write.

An audit log that cannot be written (a closed pipe, a full disk) raises
:class:`AuditError`: the controller persists its state and stops (exit 1), since a
controller whose decisions go unrecorded is not one to leave running.
"""
from __future__ import annotations

import errno
import json
import logging
import os
import sys
import threading
from typing import IO, Iterable, Iterator, Optional

from pydantic_core import to_json

from ..errors import ScalebridgeError
from ..secrets import redact
from .logs import log

__all__ = ["AuditLog", "AuditError", "ACTIONS", "read_records", "DEFAULT_MAX_BYTES", "DEFAULT_KEEP"]

#: a file about to grow past this is rotated (150 targets at a 15-s period write about
#: 7 MiB an hour: a file is about half a day of them)
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
#: rotated files kept (``FILE.1`` … ``FILE.5``)
DEFAULT_KEEP = 5
#: how far back from the end a torn tail is looked for when a file is opened
_TAIL = 1 << 20


class AuditError(ScalebridgeError):
    """The audit log cannot be written."""

ACTIONS = ("applied", "dry_run", "unchanged", "in_flight", "paced", "refused", "failed", "standby", "paused")


def _strerror(e: BaseException) -> str:
    return getattr(e, "strerror", None) or str(e)


class AuditLog:
    def __init__(self, target: str, *, max_bytes: int = DEFAULT_MAX_BYTES, keep: int = DEFAULT_KEEP):
        self.target = target
        self.max_bytes = max(0, int(max_bytes))
        self.keep = max(1, int(keep))
        self._lock = threading.Lock()
        self._own = target != "-"
        self._broken = False
        self._reopen = False
        self._fd: Optional[int] = None
        self._size = 0
        self._stream: Optional[IO[str]] = None
        #: what opening repaired: (bytes dropped, from offset), or None
        self.repaired: Optional[tuple[int, int]] = None
        if self._own:
            self._open()
        else:
            self._stream = sys.stdout

    @property
    def where(self) -> str:
        return "standard output" if not self._own else self.target

    # -- the file -----------------------------------------------------------------------------
    def _open(self) -> None:
        try:
            fd = os.open(self.target, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise AuditError(f"--audit {self.target}: {_strerror(e)}") from None
        try:
            self._size = os.fstat(fd).st_size
            self._repair(fd)
        except OSError as e:
            os.close(fd)
            raise AuditError(f"--audit {self.target}: {_strerror(e)}") from None
        self._fd = fd

    def _repair(self, fd: int) -> None:
        """Drop a torn record at the end of the file (no final newline, or a last line
        that is no JSON object), with a warning."""
        size = self._size
        if size == 0:
            return
        start = max(0, size - _TAIL)
        tail = os.pread(fd, size - start, start)
        keep = len(tail)
        if not tail.endswith(b"\n"):
            cut = tail.rfind(b"\n")
            keep = cut + 1 if cut >= 0 else 0
        else:   # whole lines: is the last one a record?
            prev = tail.rfind(b"\n", 0, len(tail) - 1)
            if not _is_record(tail[prev + 1:-1]):
                keep = prev + 1
        if keep == len(tail):
            return
        if keep == 0 and start > 0:   # no newline in the last MiB: keep the file, a reader names the line
            return
        dropped = len(tail) - keep
        os.ftruncate(fd, start + keep)
        self._size = start + keep
        self.repaired = (dropped, start + keep)
        log(logging.WARNING, "the audit log ended in a torn record (a write cut short by a full disk or a crash): "
                             "dropped it", file=self.target, bytes_dropped=dropped, offset=start + keep)

    def _rotate(self) -> None:
        """``FILE`` → ``FILE.1`` (… → ``FILE.keep``), a new ``FILE``. A rotation that
        fails is said, and the current file kept."""
        assert self._fd is not None
        try:
            for k in range(self.keep - 1, 0, -1):
                older = f"{self.target}.{k}"
                if os.path.exists(older):
                    os.replace(older, f"{self.target}.{k + 1}")
            os.replace(self.target, f"{self.target}.1")
        except OSError as e:
            log(logging.WARNING, "the audit log could not be rotated: writing on", file=self.target,
                error=_strerror(e))
            return
        os.close(self._fd)
        self._fd = None
        self._open()

    # -- writing ------------------------------------------------------------------------------
    def write(self, records: Iterable[dict]) -> None:
        lines = "".join(to_json(r).decode() + "\n" for r in records)
        if not lines:
            return
        lines = redact(lines)
        with self._lock:
            if self._broken:
                raise AuditError(f"{self.where}: already failed")
            if not self._own:
                try:
                    assert self._stream is not None
                    self._stream.write(lines)
                    self._stream.flush()
                except (OSError, ValueError) as e:
                    self._broken = True
                    self._detach()
                    raise AuditError(f"{self.where}: {_strerror(e)}") from None
                return
            data = lines.encode("utf-8")
            if self._reopen:
                self._reopen = False
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None
                self._open()
            elif self.max_bytes and self._size > 0 and self._size + len(data) > self.max_bytes:
                self._rotate()
            self._append(data)

    def _append(self, data: bytes) -> None:
        """``data`` (whole records) appended whole, or cut back to its last whole record."""
        fd = self._fd
        assert fd is not None
        at = self._size
        done = 0
        try:
            while done < len(data):
                n = os.write(fd, data[done:])
                if n <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += n
        except OSError as e:
            whole = data.rfind(b"\n", 0, done) + 1 if done else 0
            try:
                os.ftruncate(fd, at + whole)   # no half record left for a reader
                self._size = at + whole
            except OSError:
                pass   # the next start repairs it
            self._broken = True
            self._detach()
            lost = data[whole:].count(b"\n")
            raise AuditError(f"{self.where}: {_strerror(e)} ({lost} record{'s' if lost != 1 else ''} of this sync "
                             "not written; the file ends with its last whole record)") from None
        self._size = at + done

    def reopen(self) -> None:
        """Reopen the file at the next write (SIGUSR1: logrotate has moved it away)."""
        self._reopen = True

    def _detach(self) -> None:
        """After a failure, nothing more goes to the broken stream — not even the
        interpreter's flush at exit (a closed pipe would print a traceback then)."""
        try:
            if self._own:
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None
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
                    if self._fd is not None:
                        os.close(self._fd)
                        self._fd = None
                else:
                    assert self._stream is not None
                    self._stream.flush()
            except (OSError, ValueError):
                self._broken = True
                self._detach()


def _is_record(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def read_records(path: str) -> Iterator[dict]:
    """The records of an audit file, in order. Anything that is not a record — a
    torn last line, a line that is no JSON object — raises :class:`AuditError`
    naming the file and the line: a reader skips nothing silently."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise AuditError(f"{path}: {_strerror(e)}") from None
    with f:
        for n, line in enumerate(f, start=1):
            if not line.endswith(b"\n"):
                raise AuditError(f"{path}:{n}: a torn record at the end of the file ({len(line)} bytes, no "
                                 "newline): a write cut short; the controller drops it when it next opens the file")
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise AuditError(f"{path}:{n}: not a JSON record ({e})") from None
            if not isinstance(rec, dict):
                raise AuditError(f"{path}:{n}: not a JSON object")
            yield rec


def open_audit(target: Optional[str], **options) -> Optional[AuditLog]:
    return AuditLog(target, **options) if target else None
