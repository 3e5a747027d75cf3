"""Persisted decision state: a small :class:`StateStore` interface and its SQLite
implementation (the embedded default).

One row per target: the policy's content hash (a changed policy starts from
empty state, as the decision protocol says of ``state``), the committed state
(the protocol's ``state`` JSON), and a pending *intent* — the size about to be
set and the state as if it were carried out — written before
:meth:`~scalebridge.providers.Target.set_size` and resolved afterwards. A crash
between the two leaves the intent; the next sync observes the target and
commits the intent's state when the size is the intent's (the decision was
carried out), or keeps the committed state (recommendations and sizes only)
when it is not. So a crash at any point neither loses a carried-out decision
nor records one twice. Controller metadata (the virtual clock's position) is
saved in the same transaction as the rows.

SQLite in WAL mode (https://www.sqlite.org/wal.html): a committed transaction
survives the process being killed; readers (``scalebridge state show``) never
block the controller.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

from pydantic_core import from_json, to_json

from ..errors import ScalebridgeError

__all__ = ["StoredTarget", "StateStore", "SQLiteStore", "StoreError", "open_store"]


class StoreError(ScalebridgeError):
    """The state store cannot be opened or read (not a state file, locked, corrupt)."""


@dataclass
class StoredTarget:
    """One target's persisted row. ``state`` and ``intent_state`` are protocol
    ``state`` objects; ``intent_size`` is None when no write is pending. With a
    pending write, ``state`` is the committed state from before that decision and
    ``intent_state`` the state as if it were carried out."""
    name: str
    policy_hash: str
    state: dict
    intent_size: Optional[int] = None
    intent_state: Optional[dict] = None
    updated_at: float = 0.0
    intent_meta: Optional[dict] = None   #: the intent's sync time and decision (``time``, ``record``)


class StateStore(ABC):
    """Where decision state lives between syncs and across restarts. A shared store
    (several controller replicas) implements the same five methods."""

    @abstractmethod
    def load_all(self) -> dict[str, StoredTarget]:
        """Every target's row, by target name."""

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

    def close(self) -> None:
        """Release the store (default: nothing)."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS targets (
    name TEXT PRIMARY KEY,
    policy_hash TEXT NOT NULL,
    state TEXT NOT NULL,
    intent_size INTEGER,
    intent_state TEXT,
    updated_at REAL NOT NULL,
    intent_meta TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_COLUMNS = "name, policy_hash, state, intent_size, intent_state, updated_at, intent_meta"


class SQLiteStore(StateStore):
    """The embedded store: one SQLite file (stdlib ``sqlite3``, WAL). Thread-safe
    (one connection behind a lock); ``readonly`` opens an existing file without
    creating or changing it."""

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            if readonly:
                if not Path(self.path).is_file():
                    raise StoreError(f"{self.path}: no such state file")
                self._db = sqlite3.connect(f"file:{Path(self.path).resolve()}?mode=ro", uri=True,
                                           check_same_thread=False, isolation_level=None)
            else:
                self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                           timeout=10.0)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
            cols = {r[1] for r in self._db.execute("PRAGMA table_info(targets)")}
            if cols and "intent_meta" not in cols and not readonly:   # a file from before the column
                self._db.execute("ALTER TABLE targets ADD COLUMN intent_meta TEXT")
            self._db.execute(f"SELECT {_COLUMNS} FROM targets LIMIT 0")
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not a scalebridge state file ({e})") from None

    def load_all(self) -> dict[str, StoredTarget]:
        with self._lock:
            try:
                rows = self._db.execute(f"SELECT {_COLUMNS} FROM targets ORDER BY name").fetchall()
            except sqlite3.DatabaseError as e:
                raise StoreError(f"{self.path}: cannot read the state ({e})") from None
        out = {}
        for name, h, state, isize, istate, at, imeta in rows:
            out[name] = StoredTarget(name, h, from_json(state), isize,
                                     from_json(istate) if istate is not None else None, at,
                                     from_json(imeta) if imeta is not None else None)
        return out

    def save(self, rows: Iterable[StoredTarget], meta: Optional[dict[str, Any]] = None) -> None:
        now = time.time()
        params = [(r.name, r.policy_hash, to_json(r.state).decode(), r.intent_size,
                   to_json(r.intent_state).decode() if r.intent_state is not None else None,
                   r.updated_at or now, to_json(r.intent_meta).decode() if r.intent_meta is not None else None)
                  for r in rows]
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(f"INSERT INTO targets ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
                               "ON CONFLICT(name) DO UPDATE SET "
                               "policy_hash=excluded.policy_hash, state=excluded.state, "
                               "intent_size=excluded.intent_size, intent_state=excluded.intent_state, "
                               "updated_at=excluded.updated_at, intent_meta=excluded.intent_meta", params)
                for k, v in (meta or {}).items():
                    db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                               "value=excluded.value", (k, to_json(v).decode()))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def delete(self, name: str) -> bool:
        with self._lock:
            cur = self._db.execute("DELETE FROM targets WHERE name = ?", (name,))
            return cur.rowcount > 0

    def get_meta(self, key: str) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return from_json(row[0]) if row else None

    def names(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT name FROM targets ORDER BY name")]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_store(state: Any, providers: dict, *, override: Optional[str] = None,
               base: Optional[Path] = None) -> StateStore:
    """The store a run uses: ``--state PATH`` (``override``) wins over the
    configuration's ``state:`` — a path, or ``{provider: NAME, ...options}`` naming a
    provider instance whose :meth:`~scalebridge.providers.Provider.state_store`
    makes it — and the embedded default is ``scalebridge-state.db`` in the working
    directory. A relative ``state:`` path is relative to ``base`` (the configuration
    file's directory)."""
    from .config import DEFAULT_STATE_PATH
    if override is not None:
        return SQLiteStore(override)
    if isinstance(state, dict):
        options = dict(state)
        name = options.pop("provider")
        store = providers[name].state_store(**options)
        if store is None:
            raise StoreError(f"state: provider {name!r} keeps no decision state of its own; give `state:` a "
                             "file path (SQLite) instead")
        return store
    if state:
        path = Path(state).expanduser()
        return SQLiteStore(path if path.is_absolute() or base is None else base / path)
    return SQLiteStore(DEFAULT_STATE_PATH)
