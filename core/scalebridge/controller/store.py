"""Persisted decision state: a small :class:`StateStore` interface and its SQLite
implementation (the embedded default).

One row per target: the policy's content hash (a changed policy starts from
empty state, as the decision protocol says of ``state``), the committed state
(the protocol's ``state`` JSON), a pending *intent* — the size about to be set
and the state as if it were carried out — written before
:meth:`~scalebridge.providers.Target.set_size` and resolved afterwards, the
audit record of the last write carried out (``applied``), and what the target
keeps in the controller's process (``provider_state``: a simulated fleet). A
crash between the intent and its resolution leaves the intent; the next sync
observes the target and commits the intent's state when the size is the
intent's (the decision was carried out), or keeps the committed state
(recommendations and sizes only) when it is not. So a crash at any point
neither loses a carried-out decision nor records one twice. Controller
metadata (the virtual clock's position, how far the audit log is written) is
saved in the same transaction as the rows.

**One writer.** A controller *claims* the store for as long as it runs
(:meth:`StateStore.claim`): the SQLite store takes an exclusive ``flock`` on a
lock file beside the state file and records the holder (host, pid, start
time) in it, as Prometheus' TSDB locks its data directory
(``tsdb/fileutil/flock_unix.go``). The operating system releases the lock when
the holder dies, however it dies; nothing guesses with a timeout. A file anyone can
remove is not all the claim rests on: on Linux the holder also binds an abstract
Unix socket named from the state file's resolved path (no file: it ends with the
process and cannot be deleted), so a second controller is refused even when the
lock file and the state file were deleted under the first; its pid is read from
the socket (``SO_PEERCRED``). :meth:`StateStore.verify` (each sync) notices a
state file or lock file deleted or replaced under the holder. Commands that
change the state of a claimed store (``state reset``, ``pause``, ``resume``)
leave a request for the holder, which carries it out at its next sync.

**Failures.** Every failure of the store — a full disk, a read-only file, a
lock held past :data:`LOCK_WAIT_SECONDS`, a file that is no state file — is a
:class:`StoreError` naming the file and the cause; a row that cannot be read is
returned with its ``problem`` (the column and why), so that it fails its own
target only.

SQLite in WAL mode (https://www.sqlite.org/wal.html): a committed transaction
survives the process being killed; readers (``scalebridge state show``) never
block the controller.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import socket
import sqlite3
import struct
import sys
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

from pydantic_core import from_json, to_json

from ..errors import ScalebridgeError

__all__ = ["StoredTarget", "StateStore", "SQLiteStore", "StoreError", "StoreClaimed", "StoreLost", "Holder", "Pause",
           "open_store", "state_path", "checked_row", "LOCK_WAIT_SECONDS"]

#: how long a store operation waits for a lock another process holds on the database
#: (a ``sqlite3`` shell, ``state reset``) before it fails as a store error
LOCK_WAIT_SECONDS = 5.0


class StoreError(ScalebridgeError):
    """The state store failed: it cannot be opened, read or written (not a state
    file, a full disk, read-only, locked past the wait)."""


@dataclass(frozen=True)
class Holder:
    """Who holds a store's claim: the controller's host, process id and start time."""
    host: str
    pid: int
    started: float

    @classmethod
    def this_process(cls) -> "Holder":
        return cls(socket.gethostname(), os.getpid(), time.time())

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started))
        return f"host {self.host}, pid {self.pid}, since {since}"

    def to_json(self) -> dict:
        return {"host": self.host, "pid": self.pid, "started": self.started}

    @classmethod
    def from_json(cls, data: Any) -> Optional["Holder"]:
        try:
            return cls(str(data["host"]), int(data["pid"]), float(data["started"]))
        except (TypeError, KeyError, ValueError):
            return None


class NotAStateFile(StoreError):
    """The state path names something that is not a state file (another kind of file,
    a directory, a device): the user's mistake, refused as bad input (exit 2)."""


class StoreClaimed(StoreError):
    """Another controller holds the store's claim."""

    def __init__(self, where: str, holder: Optional[Holder]):
        self.where = where
        self.holder = holder
        who = holder.describe() if holder is not None else "a process that did not say who it is"
        super().__init__(f"{where} is held by another scalebridge controller ({who})")


class StoreLost(ScalebridgeError):
    """The holder can no longer be sure which file it writes or that it is the one
    writer (its state file replaced by another file, its lock file taken by another
    process): the controller stops (exit 1) rather than write on."""


@dataclass
class StoredTarget:
    """One target's persisted row. ``state`` and ``intent_state`` are protocol
    ``state`` objects; ``intent_size`` is None when no write is pending. With a
    pending write, ``state`` is the committed state from before that decision and
    ``intent_state`` the state as if it were carried out. ``applied`` is the last
    write carried out (``time``, ``record``), kept so that its audit record can be
    written after a crash; ``provider_state`` what the target keeps in the
    controller's process (:meth:`~scalebridge.providers.Target.snapshot`).
    ``problem`` says why a row could not be read (its other fields are then empty)."""
    name: str
    policy_hash: str
    state: dict
    intent_size: Optional[int] = None
    intent_state: Optional[dict] = None
    updated_at: float = 0.0
    intent_meta: Optional[dict] = None   #: the intent's sync time and decision (``time``, ``record``)
    applied: Optional[dict] = None
    provider_state: Optional[dict] = None
    problem: Optional[str] = None


@dataclass(frozen=True)
class Pause:
    """A target paused by ``scalebridge pause``: since when, and the size to hold
    (None: whatever size it has)."""
    name: str
    replicas: Optional[int]
    since: float


class StateStore(ABC):
    """Where decision state lives between syncs and across restarts. A shared store
    (several controller replicas) implements the same methods."""

    #: how error messages name the store (a file path, ``ConfigMap ns/name``)
    where: str = "the state store"

    @abstractmethod
    def load_all(self) -> dict[str, StoredTarget]:
        """Every target's row, by target name (a row that cannot be read carries its
        ``problem``)."""

    @abstractmethod
    def save(self, rows: Iterable[StoredTarget], meta: Optional[dict[str, Any]] = None) -> None:
        """Write ``rows`` (replacing each target's row) and ``meta`` atomically: all or none."""

    @abstractmethod
    def delete(self, name: str) -> bool:
        """Forget one target's row; False when it had none."""

    @abstractmethod
    def get_meta(self, key: str) -> Any:
        """Controller metadata saved with :meth:`save` (None when absent)."""

    def load(self, name: str) -> Optional[StoredTarget]:
        """One target's row, or None."""
        return self.load_all().get(name)

    def claim(self, holder: Holder) -> Optional[Holder]:
        """Take the exclusive claim of a controller that writes this store, for as
        long as the store is open: None when taken, else the holder it is held by
        (or a :class:`Holder` that could not be read: still held). Default: a store
        without a claim of its own (one writer comes from the leader election)."""
        return None

    def holder(self) -> Optional[Holder]:
        """Who holds the claim now, or None."""
        return None

    # -- requests to the holder, and pauses -------------------------------------------------
    def request_reset(self, name: str) -> None:
        """Ask the controller holding the store to forget ``name``'s state at its next sync."""
        raise StoreError(f"{self.where}: this store takes no requests")

    def take_resets(self) -> list[str]:
        """The targets whose reset was requested since the last call (each once)."""
        return []

    def set_pause(self, name: str, replicas: Optional[int], since: float) -> None:
        raise StoreError(f"{self.where}: this store keeps no pauses")

    def clear_pause(self, name: str) -> bool:
        raise StoreError(f"{self.where}: this store keeps no pauses")

    def pauses(self) -> dict[str, Pause]:
        """The paused targets, by name."""
        return {}

    def verify(self) -> list[str]:
        """Called each sync by the holder: what happened to the store's files under it
        — ``"deleted"`` (the state file is gone: the caller rewrites it from memory
        with :meth:`recreate`), ``"lock"`` (the lock file was deleted or replaced: it
        is locked again here). Raises :class:`StoreLost` when the holder must stop.
        Default: nothing to check."""
        return []

    def recreate(self) -> None:
        """A new, empty state file where the deleted one was (default: nothing)."""

    def close(self) -> None:
        """Release the store and its claim (default: nothing)."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS targets (
    name TEXT PRIMARY KEY,
    policy_hash TEXT NOT NULL,
    state TEXT NOT NULL,
    intent_size INTEGER,
    intent_state TEXT,
    updated_at REAL NOT NULL,
    intent_meta TEXT,
    applied TEXT,
    provider_state TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS resets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS pauses (name TEXT PRIMARY KEY, replicas INTEGER, since REAL NOT NULL);
"""
_COLUMNS = "name, policy_hash, state, intent_size, intent_state, updated_at, intent_meta, applied, provider_state"
#: columns added since the first state files, each added to an older file when it is opened to write
_ADDED = ("intent_meta", "applied", "provider_state")


def _disk_full(path: str) -> bool:
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def _read_only(path: str) -> bool:
    where = path if os.path.exists(path) else os.path.dirname(os.path.abspath(path)) or "."
    try:
        if os.statvfs(where).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    return not os.access(where, os.W_OK)


def _describe(e: BaseException, path: Optional[str] = None) -> str:
    """What an SQLite or OS error means for an operator (SQLite reports some
    failures of a full disk as a plain I/O error: the free space tells)."""
    text = str(e)
    low = text.lower()
    if "full" in low or getattr(e, "errno", None) == errno.ENOSPC or \
            (path is not None and "i/o" in low and _disk_full(path)):
        return f"the disk is full ({text})"
    if "readonly" in low or "read-only" in low or getattr(e, "errno", None) in (errno.EROFS, errno.EACCES) or \
            (path is not None and "unable to open" in low and _read_only(path)):
        return f"it is read-only ({text})"
    if "locked" in low or "busy" in low:
        return f"another process has held it locked for more than {LOCK_WAIT_SECONDS:g} s ({text})"
    return text


def _parse(column: str, text: Optional[str], kind: type, nullable: bool) -> Any:
    if text is None:
        if nullable:
            return None
        raise ValueError(f"column {column}: empty")
    try:
        value = from_json(text)
    except ValueError as e:
        raise ValueError(f"column {column}: not JSON ({e})") from None
    if value is None and nullable:
        return None
    if not isinstance(value, kind):
        raise ValueError(f"column {column}: expected a JSON {'object' if kind is dict else kind.__name__}, "
                         f"got {type(value).__name__}")
    return value


def _row(name: Any, h: Any, state: Any, isize: Any, istate: Any, at: Any, imeta: Any, applied: Any,
         pstate: Any) -> StoredTarget:
    try:
        if not isinstance(h, str):
            raise ValueError(f"column policy_hash: expected text, got {type(h).__name__}")
        if isize is not None and (type(isize) is not int or isize < 0):
            raise ValueError(f"column intent_size: expected a count, got {isize!r}")
        return StoredTarget(str(name), h, _parse("state", state, dict, False), isize,
                            _parse("intent_state", istate, dict, True), float(at or 0.0),
                            _parse("intent_meta", imeta, dict, True), _parse("applied", applied, dict, True),
                            _parse("provider_state", pstate, dict, True))
    except (ValueError, TypeError) as e:
        return StoredTarget(str(name), h if isinstance(h, str) else "", {}, problem=str(e))


def checked_row(name: str, row: Any) -> StoredTarget:
    """A target's row from already parsed JSON values (a store keeping rows as one
    JSON document, such as the Kubernetes ConfigMap store), checked as the SQLite
    store checks its columns: a malformed one carries its ``problem``."""
    if not isinstance(row, dict):
        return StoredTarget(name, "", {}, problem=f"expected a JSON object, got {type(row).__name__}")
    dumped = {k: (to_json(row[k]).decode() if row.get(k) is not None else None)
              for k in ("state", "intent_state", "intent_meta", "applied", "provider_state")}
    at = row.get("updated_at", 0.0)
    return _row(name, row.get("policy_hash"), dumped["state"], row.get("intent_size"), dumped["intent_state"],
                at if isinstance(at, (int, float)) else 0.0, dumped["intent_meta"], dumped["applied"],
                dumped["provider_state"])


def _dump(value: Optional[dict]) -> Optional[str]:
    return to_json(value).decode() if value is not None else None


class SQLiteStore(StateStore):
    """The embedded store: one SQLite file (stdlib ``sqlite3``, WAL). Thread-safe
    (one connection behind a lock); ``readonly`` opens an existing file without
    creating or changing it."""

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = str(path)
        self.where = self.path
        self.readonly = readonly
        self._lock = threading.Lock()
        self._claim_fd: Optional[int] = None
        self._claim_sock: Optional[socket.socket] = None
        self._ident: Optional[tuple[int, int]] = None
        self._open(readonly)

    def _open(self, readonly: bool) -> None:
        try:
            if Path(self.path).exists() and not Path(self.path).is_file():
                raise NotAStateFile(f"{self.path}: not a state file (not a regular file)")
            if readonly:
                if not Path(self.path).is_file():
                    raise StoreError(f"{self.path}: no such state file")
                self._db = sqlite3.connect(f"file:{Path(self.path).resolve()}?mode=ro", uri=True,
                                           check_same_thread=False, isolation_level=None,
                                           timeout=LOCK_WAIT_SECONDS)
            else:
                if not Path(self.path).exists():
                    # a file deleted under the controller that holds it: creating one here would
                    # replace its state under it (it would stop); say who holds it instead
                    holder = _peer_holder(self.path)
                    if holder is not None and holder.pid != os.getpid():
                        raise StoreClaimed(self.path, holder)
                self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                           timeout=LOCK_WAIT_SECONDS)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
                cols = {r[1] for r in self._db.execute("PRAGMA table_info(targets)")}
                for col in _ADDED:   # a file from before the column
                    if col not in cols:
                        self._db.execute(f"ALTER TABLE targets ADD COLUMN {col} TEXT")
            self._columns = {r[1] for r in self._db.execute("PRAGMA table_info(targets)")}
            self._db.execute(f"SELECT {self._select()} FROM targets LIMIT 0")
            self._ident = _file_ident(self.path)
        except StoreError:
            raise
        except sqlite3.DatabaseError as e:
            if "not a database" in str(e) or "malformed" in str(e) or "no such" in str(e):
                raise NotAStateFile(f"{self.path}: not a scalebridge state file ({e})") from None
            if not readonly:
                # another controller writing the file as this one opens it (its lock file
                # deleted, say): say who holds it, not the race's I/O error
                holder = _peer_holder(self.path)
                if holder is not None and holder.pid != os.getpid():
                    raise StoreClaimed(self.path, holder) from None
            raise StoreError(f"{self.path}: cannot open the state file: {_describe(e, self.path)}") from None

    def _select(self) -> str:
        return ", ".join(c if c in self._columns else "NULL" for c in _COLUMNS.split(", "))

    def _fail(self, what: str, e: BaseException) -> StoreError:
        return StoreError(f"{self.path}: cannot {what}: {_describe(e, self.path)}")

    # -- rows ---------------------------------------------------------------------------------
    def load_all(self) -> dict[str, StoredTarget]:
        with self._lock:
            try:
                rows = self._db.execute(f"SELECT {self._select()} FROM targets ORDER BY name").fetchall()
            except sqlite3.Error as e:
                raise self._fail("read the state", e) from None
        return {row[0]: _row(*row) for row in rows}

    def save(self, rows: Iterable[StoredTarget], meta: Optional[dict[str, Any]] = None) -> None:
        now = time.time()
        params = [(r.name, r.policy_hash, to_json(r.state).decode(), r.intent_size, _dump(r.intent_state),
                   r.updated_at or now, _dump(r.intent_meta), _dump(r.applied), _dump(r.provider_state))
                  for r in rows]
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as e:
                raise self._fail("write the state", e) from None
            try:
                db.executemany(f"INSERT INTO targets ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                               "ON CONFLICT(name) DO UPDATE SET "
                               "policy_hash=excluded.policy_hash, state=excluded.state, "
                               "intent_size=excluded.intent_size, intent_state=excluded.intent_state, "
                               "updated_at=excluded.updated_at, intent_meta=excluded.intent_meta, "
                               "applied=excluded.applied, provider_state=excluded.provider_state", params)
                for k, v in (meta or {}).items():
                    db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                               "value=excluded.value", (k, to_json(v).decode()))
                db.execute("COMMIT")
            except BaseException as e:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if isinstance(e, (sqlite3.Error, OSError)):
                    raise self._fail("write the state", e) from None
                raise

    def _write(self, what: str, sql: str, args: tuple) -> int:
        with self._lock:
            try:
                return self._db.execute(sql, args).rowcount
            except sqlite3.Error as e:
                raise self._fail(what, e) from None

    def delete(self, name: str) -> bool:
        return self._write("forget a target's state", "DELETE FROM targets WHERE name = ?", (name,)) > 0

    def get_meta(self, key: str) -> Any:
        with self._lock:
            try:
                row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as e:
                raise self._fail("read the state", e) from None
        if row is None:
            return None
        try:
            return from_json(row[0])
        except ValueError:
            return None

    def names(self) -> list[str]:
        with self._lock:
            try:
                return [r[0] for r in self._db.execute("SELECT name FROM targets ORDER BY name")]
            except sqlite3.Error as e:
                raise self._fail("read the state", e) from None

    # -- the claim ----------------------------------------------------------------------------
    @property
    def lock_path(self) -> str:
        """The lock file beside the state file."""
        return self.path + ".lock"

    def claim(self, holder: Holder) -> Optional[Holder]:
        if self._claim_fd is not None:
            return None
        sock = _bind_claim(self.path)
        if sock is _HELD:   # held, whatever became of the lock file
            return _peer_holder(self.path) or Holder("?", 0, 0.0)
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            _close_sock(sock)
            raise StoreError(f"{self.lock_path}: cannot create the state's lock file: {_describe(e)}") from None
        # a reader (`state show`) holds a shared lock for a moment: try a few times before
        # saying another controller holds it
        for attempt in range(5):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    _close_sock(sock)
                    raise StoreError(f"{self.lock_path}: cannot lock the state: {_describe(e)}") from None
                time.sleep(0.05 * (attempt + 1))
        else:
            current = _read_holder(fd)
            os.close(fd)
            _close_sock(sock)
            return current or Holder("?", 0, 0.0)
        try:
            _record_holder(fd, holder)
        except OSError as e:
            os.close(fd)
            _close_sock(sock)
            raise StoreError(f"{self.lock_path}: cannot record the state's holder: {_describe(e)}") from None
        self._claim_fd = fd
        self._claim_sock = sock
        self._holder = holder
        return None

    def verify(self) -> list[str]:
        if self.readonly:
            return []
        said: list[str] = []
        sock = self._claim_sock
        if sock is not None:   # the connections `holder()` made: closed unread
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:
                    break
                conn.close()
        now = _file_ident(self.path)
        if now is None:
            said.append("deleted")
        elif now != self._ident:
            self._replaced = True   # its -wal and -shm beside the new file are the old file's: gone at close
            raise StoreLost(f"{self.path}: the state file was replaced by another file while the controller ran; "
                            "stopping rather than write over it (the next start reads the file now there)")
        fd = self._claim_fd
        if fd is not None:
            st = os.fstat(fd)
            if _file_ident(self.lock_path) != (st.st_dev, st.st_ino):
                self._relock()
                said.append("lock")
        return said

    def _relock(self) -> None:
        """The lock file deleted or replaced under the holder: lock the one at the path
        now, or stop when another process holds it."""
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise StoreLost(f"{self.lock_path}: the state's lock file was deleted and cannot be created again: "
                            f"{_describe(e)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            other = _read_holder(fd)
            os.close(fd)
            who = other.describe() if other is not None else "a process that did not say who it is"
            raise StoreLost(f"{self.lock_path}: the state's lock file was replaced and is now held by another "
                            f"process ({who}): stopping, so that one controller writes the state") from None
        try:
            _record_holder(fd, self._holder)
        except OSError:
            pass   # the lock is what counts; the record only names the holder
        old, self._claim_fd = self._claim_fd, fd
        if old is not None:
            os.close(old)

    def recreate(self) -> None:
        with self._lock:
            try:
                self._db.close()   # its last connection: SQLite removes the -wal and -shm of the deleted file
            except sqlite3.Error:
                pass
            for leftover in (self.path + "-wal", self.path + "-shm", self.path + "-journal"):
                if not os.path.exists(self.path):
                    try:
                        os.unlink(leftover)   # a stale log must not be replayed into the new file
                    except OSError:
                        pass
            self._open(False)

    def holder(self) -> Optional[Holder]:
        if self._claim_fd is not None:
            return _read_holder(self._claim_fd)
        try:
            fd = os.open(self.lock_path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:   # no lock file: a holder may have had it deleted under it
            return _peer_holder(self.path)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:   # held exclusively: by a controller
                return _read_holder(fd) or Holder("?", 0, 0.0)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return _peer_holder(self.path)   # a holder whose lock file was replaced under it
        finally:
            os.close(fd)

    # -- requests and pauses ------------------------------------------------------------------
    def request_reset(self, name: str) -> None:
        self._write("record the reset", "INSERT INTO resets (name, at) VALUES (?, ?)", (name, time.time()))

    def take_resets(self) -> list[str]:
        if "resets" not in self._tables():
            return []
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                names = [r[0] for r in db.execute("SELECT name FROM resets ORDER BY id")]
                if names:
                    db.execute("DELETE FROM resets")
                db.execute("COMMIT")
            except sqlite3.Error as e:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise self._fail("read the requested resets", e) from None
        return list(dict.fromkeys(names))

    def set_pause(self, name: str, replicas: Optional[int], since: float) -> None:
        self._write("record the pause", "INSERT INTO pauses (name, replicas, since) VALUES (?, ?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET replicas=excluded.replicas, since=excluded.since",
                    (name, replicas, since))

    def clear_pause(self, name: str) -> bool:
        return self._write("record the resume", "DELETE FROM pauses WHERE name = ?", (name,)) > 0

    def pauses(self) -> dict[str, Pause]:
        if "pauses" not in self._tables():
            return {}
        with self._lock:
            try:
                rows = self._db.execute("SELECT name, replicas, since FROM pauses ORDER BY name").fetchall()
            except sqlite3.Error as e:
                raise self._fail("read the pauses", e) from None
        return {n: Pause(n, r if type(r) is int else None, float(s or 0.0)) for n, r, s in rows}

    def _tables(self) -> set[str]:
        if not self.readonly:
            return {"resets", "pauses"}
        tables = getattr(self, "_known_tables", None)
        if tables is None:
            with self._lock:
                tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            self._known_tables = tables
        return tables

    def close(self) -> None:
        with self._lock:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            if self._claim_fd is not None:
                os.close(self._claim_fd)   # the claim ends with it
                self._claim_fd = None
            _close_sock(self._claim_sock)
            self._claim_sock = None
            if getattr(self, "_replaced", False):
                # SQLite leaves the write-ahead log of a file replaced under it; a reader of
                # the new file would replay the old file's pages from it
                for leftover in (self.path + "-wal", self.path + "-shm"):
                    try:
                        os.unlink(leftover)
                    except OSError:
                        pass


def _file_ident(path: str) -> Optional[tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _record_holder(fd: int, holder: Holder) -> None:
    body = json.dumps(holder.to_json()).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, body, 0)


_HELD = object()


def _claim_name(path: str) -> bytes:
    """The abstract socket name of a state path (Linux: a name in no file system,
    released when its process ends)."""
    where = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))
    return b"\0scalebridge-state:" + hashlib.sha256(where.encode()).hexdigest()[:48].encode()


def _bind_claim(path: str) -> Any:
    """A listening socket bound to the state's claim name; :data:`_HELD` when another
    process has it; None where there are no abstract sockets (the lock file only)."""
    if not sys.platform.startswith("linux"):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(_claim_name(path))
        sock.listen(16)
        sock.setblocking(False)
    except OSError as e:
        sock.close()
        return _HELD if e.errno == errno.EADDRINUSE else None
    return sock


def _peer_holder(path: str) -> Optional[Holder]:
    """The process holding the state's claim socket, or None when none does."""
    if not sys.platform.startswith("linux"):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        try:
            sock.connect(_claim_name(path))
        except BlockingIOError:   # its backlog is full: it is there
            return Holder(socket.gethostname(), 0, 0.0)
        except OSError:
            return None
        pid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                  struct.calcsize("3i")))[0]
    finally:
        sock.close()
    try:
        started = os.stat(f"/proc/{pid}").st_ctime
    except OSError:
        started = 0.0
    return Holder(socket.gethostname(), pid, started)


def _close_sock(sock: Any) -> None:
    if isinstance(sock, socket.socket):
        sock.close()


def _read_holder(fd: int) -> Optional[Holder]:
    try:
        return Holder.from_json(json.loads(os.pread(fd, 4096, 0) or b"null"))
    except (OSError, ValueError):
        return None


def open_store(state: Any, providers: dict, *, override: Optional[str] = None,
               base: Optional[Path] = None, readonly: bool = False) -> StateStore:
    """The store a run uses: ``--state PATH`` (``override``) wins over the
    configuration's ``state:`` — a path, or ``{provider: NAME, ...options}`` naming a
    provider instance whose :meth:`~scalebridge.providers.Provider.state_store`
    makes it — and the embedded default is ``scalebridge-state.db`` in the working
    directory. A relative ``state:`` path is relative to ``base`` (the configuration
    file's directory)."""
    if override is not None:
        return SQLiteStore(override, readonly=readonly)
    if isinstance(state, dict):
        options = dict(state)
        name = options.pop("provider")
        store = providers[name].state_store(**options)
        if store is None:
            raise StoreError(f"state: provider {name!r} keeps no decision state of its own; give `state:` a "
                             "file path (SQLite) instead")
        return store
    return SQLiteStore(state_path(state, base), readonly=readonly)


def state_path(state: Optional[str], base: Optional[Path] = None) -> Path:
    """The SQLite file a configuration's ``state:`` names (relative to ``base``), or
    the embedded default in the working directory."""
    from .configfile import DEFAULT_STATE_PATH
    if not state:
        return Path(DEFAULT_STATE_PATH)
    path = Path(state).expanduser()
    return path if path.is_absolute() or base is None else base / path
