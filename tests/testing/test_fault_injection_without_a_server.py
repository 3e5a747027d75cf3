"""The conformance suite's fault injection for a provider without a server: a plugin author
whose provider keeps its sizes in a JSON file had to put ``fail_next`` in the production class,
because the suite's hook assumed a server to ask for a fault. ``FailNext`` (in the test only)
makes the file store's next read or write raise what a file system raises, inside the provider,
and the suite checks the provider maps it as it would any real failure."""
from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from scalebridge.providers import (Capability, ErrorKind, Observation, Provider, ProviderError, RefError,
                                   SizeChange, Target)
from scalebridge.testing import FailNext, check_provider


class JsonStore:
    """Sizes in one JSON file: {"web": 3}."""

    def __init__(self, path: Path):
        self.path = path

    def read(self) -> dict:
        return json.loads(self.path.read_text())

    def write(self, sizes: dict) -> None:
        self.path.write_text(json.dumps(sizes))


def _mapped(operation: str, e: OSError) -> ProviderError:
    kind = {errno.ENOENT: ErrorKind.NOT_FOUND, errno.EACCES: ErrorKind.FORBIDDEN,
            errno.EWOULDBLOCK: ErrorKind.CONFLICT}.get(e.errno, ErrorKind.TRANSIENT)
    return ProviderError(kind, f"{operation}: {e.strerror}", operation=operation)


class FileTarget(Target):
    """The production class: no fault injection anywhere in it."""

    def __init__(self, store: JsonStore, name: str):
        self.store, self.name = store, name

    def observe(self, now: float) -> Observation:
        try:
            size = self.store.read()[self.name]
        except OSError as e:
            raise _mapped("read", e) from None
        return Observation(current_replicas=size, status_replicas=size,
                           members=[{"name": f"{self.name}-{i}", "ready": True} for i in range(size)])

    def set_size(self, size: int) -> SizeChange:
        try:
            sizes = self.store.read()
            sizes[self.name] = size
            self.store.write(sizes)
        except OSError as e:
            raise _mapped("write", e) from None
        return SizeChange(size)


class FileProvider(Provider):
    name = "file"
    semantics = "kubernetes"
    capabilities = frozenset()
    ref_keys = frozenset({"name"})
    path_options = frozenset({"path"})
    blocking = False

    def __init__(self, path: str):
        self.store = JsonStore(Path(path))

    def target(self, ref):
        if not isinstance(ref.get("name"), str):
            raise RefError("ref.name", "required: the key of the target's size in the file")
        return FileTarget(self.store, ref["name"])


ERRORS = {ErrorKind.NOT_FOUND: lambda: FileNotFoundError(errno.ENOENT, "No such file or directory"),
          ErrorKind.FORBIDDEN: lambda: PermissionError(errno.EACCES, "Permission denied"),
          ErrorKind.CONFLICT: lambda: BlockingIOError(errno.EWOULDBLOCK, "the file is locked by another writer"),
          ErrorKind.TRANSIENT: lambda: OSError(errno.EIO, "Input/output error")}


@pytest.fixture
def sizes(tmp_path) -> Path:
    path = tmp_path / "sizes.json"
    path.write_text(json.dumps({"web": 3}))
    return path


def test_a_file_provider_passes_the_fault_checks_with_its_faults_injected_from_its_test(sizes):
    assert not hasattr(FileTarget, "fail_next") and not hasattr(FileProvider, "fail_next")
    provoke = FailNext({"observe": "store.read", "set_size": "store.write"}, ERRORS)
    report = check_provider(FileProvider(str(sizes)), {"name": "web"}, provoke=provoke, fault_kinds=provoke.kinds)
    assert sorted(report.provoked) == sorted((call, kind.value) for call in ("observe", "set_size")
                                             for kind in ERRORS)
    assert [(call, kind) for call, kind, _ in provoke.provoked] == report.provoked      # each raised inside
    assert "faults: observe failing as forbidden" in report.passed
    assert json.loads(sizes.read_text()) == {"web": 3}        # the seam undone: the store works again


def test_a_provider_that_lets_the_file_error_escape_is_named(sizes):
    class Leaky(FileTarget):
        def observe(self, now):
            size = self.store.read()[self.name]           # no mapping: an OSError crosses the contract
            return Observation(current_replicas=size, status_replicas=size)

    class LeakyProvider(FileProvider):
        def target(self, ref):
            return Leaky(self.store, ref["name"])

    provoke = FailNext({"observe": "store.read"}, ERRORS)
    with pytest.raises(AssertionError, match=r"faults: observe failing as not_found: raised builtins.FileNotFoundError"):
        check_provider(LeakyProvider(str(sizes)), {"name": "web"}, provoke=provoke, fault_kinds=provoke.kinds)


def test_a_seam_the_call_never_uses_is_undone_and_reported(sizes):
    """A seam the provoked call does not go through (observe never writes) is a call that
    succeeded: reported, and the seam does not stay armed for the resize checks after it."""
    provoke = FailNext({"observe": "store.write"}, {ErrorKind.TRANSIENT: ERRORS[ErrorKind.TRANSIENT]})
    with pytest.raises(AssertionError) as e:
        check_provider(FileProvider(str(sizes)), {"name": "web"}, provoke=provoke, fault_kinds=provoke.kinds)
    assert "faults: observe failing as transient: the call succeeded" in str(e.value)
    assert "set_size" not in str(e.value)           # the resize checks after it wrote through an intact store
    assert provoke.provoked == []


def test_kinds_and_calls_it_has_no_entry_for_are_skipped_and_a_bad_call_is_refused(sizes):
    provoke = FailNext({"observe": "store.read"}, {ErrorKind.NOT_FOUND: ERRORS[ErrorKind.NOT_FOUND]})
    report = check_provider(FileProvider(str(sizes)), {"name": "web"}, provoke=provoke)
    assert report.provoked == [("observe", "not_found")]
    assert "faults: observe throttled (the hook cannot provoke it)" in report.skipped
    assert "faults: set_size not_found (the hook cannot provoke it)" in report.skipped
    with pytest.raises(ValueError, match="no such call"):
        FailNext({"observ": "store.read"}, ERRORS)
