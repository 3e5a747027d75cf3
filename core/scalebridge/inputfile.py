"""Reading the files a user names, bounded: a policy, a run configuration, a scenario,
a native configuration or a trace must be a regular file of at most a known size, so
that ``/dev/zero``, a FIFO nobody writes or a runaway file ends in one line instead of
a hang or an exhausted memory (docs/run.md, "Operating it safely").

A FIFO is opened without blocking and refused (opening one for reading waits for a
writer); standard input (``-``) is read through the same bound. Callers turn
:class:`InputFileError` into their own error type (a policy's, a trace's…), so the
message reads as every other problem with that file."""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

#: a policy, a run configuration, a scenario or a native configuration: a few MB is
#: thousands of targets (a 10,000-target run configuration is under 2 MB)
MAX_CONFIG_BYTES = 16 << 20
#: a trace: a year of 15-s samples as ``timestamp,value`` is about 45 MB
MAX_TRACE_BYTES = 256 << 20

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


class InputFileError(Exception):
    """A file that cannot be read as the project reads its inputs; ``str()`` is the
    reason, without the path (the caller names the file its own way)."""

    def __init__(self, path: str, reason: str):
        super().__init__(reason)
        self.path = path
        self.reason = reason


def _megabytes(n: int) -> str:
    return f"{n / (1 << 20):g} MB"


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path: str | os.PathLike[str], *, limit: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (``-``: standard input,
    read up to the same bound)."""
    name = os.fspath(path)
    if name == "-":
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise InputFileError(name, f"standard input is larger than {_megabytes(limit)}")
        return data
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise InputFileError(name, f"cannot read: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputFileError(name, "cannot read: Is a directory")
        if not stat.S_ISREG(st.st_mode):
            kind = _kind(st.st_mode)
            raise InputFileError(name, f"{kind}, not a regular file" if kind != "not a regular file" else kind)
        if st.st_size > limit:
            raise InputFileError(name, f"larger than {_megabytes(limit)} ({_megabytes(st.st_size)})")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:   # a file that grows while it is read is bounded too
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise InputFileError(name, f"larger than {_megabytes(limit)}")
        return b"".join(chunks)
    except OSError as e:
        raise InputFileError(name, f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], *, limit: int = MAX_CONFIG_BYTES) -> str:
    """The UTF-8 text of :func:`read_bytes` (a leading byte-order mark dropped)."""
    try:
        return read_bytes(path, limit=limit).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputFileError(os.fspath(path), "not a UTF-8 text file") from None


def check_stream(path: str | os.PathLike[str]) -> None:
    """Refuse, before it is opened, a file a streaming reader (``decide FILE``) cannot
    read to an end: a directory or a device. A FIFO or a pipe (``decide <(cmd)``) is a
    stream and is allowed."""
    name = os.fspath(path)
    try:
        mode = Path(name).stat().st_mode
    except OSError:
        return   # the open names the problem
    if stat.S_ISDIR(mode):
        raise InputFileError(name, "Is a directory")
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        raise InputFileError(name, f"{_kind(mode)}, not a file of requests")
