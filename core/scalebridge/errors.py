"""Errors that reach a user as one clear line, never as a traceback."""
from __future__ import annotations

from typing import Iterable, Sequence


def json_path(loc: Iterable[object], root: str = "$") -> str:
    """``("observations", "members", 0, "ready")`` → ``$.observations.members[0].ready``."""
    out = root
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            s = str(part)
            out += f".{s}" if s.replace("_", "").replace("-", "").isalnum() else f"[{s!r}]"
    return out


class ScalebridgeError(Exception):
    """Base class for errors meant for a user."""


class RequestError(ScalebridgeError):
    """A malformed decision request: exit status 2, one line naming the JSON path."""

    def __init__(self, path: Sequence[object] | str, message: str):
        self.path = path if isinstance(path, str) else json_path(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


class PolicyError(ScalebridgeError):
    """One or more problems in a policy file, each with its location."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))
