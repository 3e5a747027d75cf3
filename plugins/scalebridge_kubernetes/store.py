"""A Kubernetes-native store of decision state: one ConfigMap per controller
(``state: {provider: kubernetes, namespace: scalebridge, name: scalebridge-state}``),
so that every replica reads the state the leader wrote and a new leader
continues the old one's stabilization windows, rate-policy periods and
cooldowns.

The ConfigMap's ``data`` holds two JSON documents: ``targets`` (each target's
row: policy hash, committed state, pending intent) and ``meta``. Every write is
a PUT carrying the ``resourceVersion`` last read
(https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions);
on 409 the store re-reads the ConfigMap, re-applies its rows and tries again
(up to six attempts, transient failures after a short pause). With leader election on the same provider, only the leader
writes: a follower's saves are dropped (it decides every sync but carries
nothing out). A ConfigMap holds at most 1 MiB
(https://kubernetes.io/docs/concepts/configuration/configmap/#motivation): a few
thousand targets with 5-minute windows.
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterable, Optional

from scalebridge.controller.store import StateStore, StoredTarget, StoreError, checked_row
from scalebridge.providers import ErrorKind, ProviderError

#: attempts of one write (conflicts re-read; transient failures pause 10 ms, 20 ms, 40 ms …)
ATTEMPTS = 6


class ConfigMapStore(StateStore):
    """Decision state in the ConfigMap ``namespace``/``name``. ``may_write`` (when
    given) says whether this replica may write now (the leader)."""

    def __init__(self, client: Any, namespace: str, name: str, *, may_write: Optional[Callable[[], bool]] = None):
        self.client, self.namespace, self.name = client, namespace, name
        self.where = f"ConfigMap {namespace}/{name}"
        self.may_write = may_write
        self._rv: Optional[str] = None
        self._targets: dict[str, dict] = {}
        self._meta: dict[str, Any] = {}
        self._read = False
        self.writes = 0
        self.dropped = 0

    def _where(self) -> str:
        return f"ConfigMap {self.namespace}/{self.name}"

    def _get(self) -> None:
        try:
            self._get_or_raise()
        except ProviderError as e:
            raise StoreError(f"{self._where()}: {e}") from None

    def _get_or_raise(self) -> None:
        c = self.client
        try:
            cm = c.call("get configmaps", c.core.read_namespaced_config_map, self.name, self.namespace)
        except ProviderError as e:
            if e.kind is ErrorKind.NOT_FOUND:
                self._rv, self._targets, self._meta, self._read = None, {}, {}, True
                return
            raise
        data = cm.data or {}
        try:
            self._targets = json.loads(data.get("targets") or "{}")
            self._meta = json.loads(data.get("meta") or "{}")
        except ValueError as e:
            raise StoreError(f"{self._where()}: not a scalebridge state ConfigMap ({e})") from None
        self._rv = cm.metadata.resource_version
        self._read = True

    def _put(self) -> None:
        c = self.client
        k8s = c.k8s
        body = k8s.V1ConfigMap(api_version="v1", kind="ConfigMap",
                               metadata=k8s.V1ObjectMeta(name=self.name, namespace=self.namespace,
                                                         resource_version=self._rv,
                                                         labels={"app.kubernetes.io/managed-by": "scalebridge"}),
                               data={"targets": json.dumps(self._targets, sort_keys=True, separators=(",", ":")),
                                     "meta": json.dumps(self._meta, sort_keys=True, separators=(",", ":"))})
        if self._rv is None:
            cm = c.call("create configmaps", c.core.create_namespaced_config_map, self.namespace, body)
        else:
            cm = c.call("update configmaps", c.core.replace_namespaced_config_map, self.name, self.namespace, body)
        self._rv = cm.metadata.resource_version
        self.writes += 1

    def _modify(self, change: Callable[[], None]) -> None:
        """Read (when needed), change, write; a conflict re-reads, a transient or
        throttled failure is retried after a short pause (up to :data:`ATTEMPTS`)."""
        last: Optional[ProviderError] = None
        for attempt in range(ATTEMPTS):
            try:
                if not self._read:
                    self._get_or_raise()
                change()
                self._put()
                return
            except ProviderError as e:
                last = e
                if e.kind is ErrorKind.CONFLICT:
                    self._read = False      # changed underneath (or created meanwhile): read it again
                elif e.retryable:
                    time.sleep(min(0.01 * 2 ** attempt, e.retry_after or 1.0))
                else:
                    break
        raise StoreError(f"{self._where()}: {last}")

    # -- StateStore --------------------------------------------------------------------
    def load_all(self) -> dict[str, StoredTarget]:
        self._get()
        return {name: checked_row(name, row) for name, row in sorted(self._targets.items())}

    def save(self, rows: Iterable[StoredTarget], meta: Optional[dict[str, Any]] = None) -> None:
        rows = list(rows)
        if self.may_write is not None and not self.may_write():
            self.dropped += 1
            return
        now = time.time()

        def change() -> None:
            for r in rows:
                self._targets[r.name] = {"policy_hash": r.policy_hash, "state": r.state,
                                         "intent_size": r.intent_size, "intent_state": r.intent_state,
                                         "intent_meta": r.intent_meta, "applied": r.applied,
                                         "provider_state": r.provider_state, "updated_at": r.updated_at or now}
            self._meta.update(meta or {})
        self._modify(change)

    def delete(self, name: str) -> bool:
        self._get()
        if name not in self._targets:
            return False
        self._modify(lambda: self._targets.pop(name, None))
        return True

    def get_meta(self, key: str) -> Any:
        if not self._read:
            self._get()
        return self._meta.get(key)

    def names(self) -> list[str]:
        self._get()
        return sorted(self._targets)
