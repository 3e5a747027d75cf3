"""Secrets kept out of configuration files and out of every output.

- ``${NAME}`` in a string value of a run configuration expands from the
  environment (``$${`` is a literal ``${``), as Prometheus' and the Kubernetes
  kubelet's configuration files do for ``$(VAR)``; an unset variable is a
  configuration error naming it (:func:`expand`).
- A secret option of a provider (``Provider.secret_options``: ``credential.client_secret``)
  also takes ``<option>_file``: the file's content, less one trailing newline — a
  Kubernetes Secret mounted as a file (:func:`read_secret_file`).
- Every value known to be secret — given at a secret key, read from a
  ``*_file``, or expanded from a variable whose name says it is one — is
  remembered for this process, and every line scalebridge writes (errors, logs,
  audit records, ``observe``, ``validate``) goes through :func:`redact`, which
  replaces it with ``***`` — in each of its encodings: as written, in a ``repr``, in
  JSON, URL-quoted (:func:`encodings`). Messages about a secret key name the key and the
  type it got, never its value (:func:`shown`).
"""
from __future__ import annotations

import json
import os
import re
import threading
from urllib.parse import quote, quote_plus
from pathlib import Path
from typing import Any, Callable, Optional

__all__ = ["expand", "is_secret_key", "remember", "encodings", "forget_all", "redact", "read_secret_file", "shown", "MASK",
           "MAX_SECRET_FILE_BYTES"]

MASK = "***"
#: a secret file larger than this is not a secret (a key file is a few KiB)
MAX_SECRET_FILE_BYTES = 64 * 1024
#: words in a key (or an environment variable's name) that make its value a secret
SECRET_WORDS = ("secret", "password", "passwd", "token", "credential", "private_key", "api_key", "apikey",
                "authorization", "auth_header")
#: shorter than this, a value is not masked: masking a short word ("secret") would garble
#: messages, and a credential that short is guessed, not leaked
_MIN_LEN = 8

_lock = threading.Lock()
_secrets: set[str] = set()
_remembered: set[str] = set()
_pattern: Optional[re.Pattern] = None
_REF = re.compile(r"\$\$\{|\$\{([^}]*)\}?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def is_secret_key(key: Any) -> bool:
    """Whether a key (``client_secret``, ``bearer_token``, ``Authorization``) holds a secret."""
    if type(key) is str:   # a run configuration asks about the same few keys 100,000 times
        known = _SECRET_KEYS.get(key)
        if known is not None:
            return known
    k = str(key).lower().replace("-", "_")
    answer = any(w in k for w in SECRET_WORDS)
    if type(key) is str and len(_SECRET_KEYS) < 4096:
        _SECRET_KEYS[key] = answer
    return answer


_SECRET_KEYS: dict[str, bool] = {}


def encodings(value: str) -> set[str]:
    """The forms ``value`` takes in an output: itself, as Python's ``repr`` and JSON
    write it inside quotes (``\\``, ``\\"``, ``\\u00e9``), a repr inside a JSON log
    line, and URL-quoted (``%5C``,
    ``%22``, a space as ``%20`` or ``+``)."""
    in_repr = {repr(value)[1:-1], repr('"' + value)[2:-1]}   # as repr quotes it alone, and beside a "
    in_json = {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    forms = {value, *in_repr, *in_json, *(json.dumps(r)[1:-1] for r in in_repr),   # a repr in a JSON log line
             quote(value, safe=""), quote(value), quote_plus(value, safe="")}
    return {f for f in forms if len(f) >= _MIN_LEN}


def remember(value: Any) -> None:
    """Mask ``value`` — in each of its :func:`encodings` — in every output of this
    process from now on."""
    global _pattern
    if not isinstance(value, str) or len(value) < _MIN_LEN:
        return
    with _lock:
        if value in _remembered:
            return
        _remembered.add(value)
        _secrets.update(encodings(value))
        _pattern = re.compile("|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True)))


def forget_all() -> None:
    """Forget every remembered secret (each ``scalebridge`` command starts afresh)."""
    global _pattern
    with _lock:
        _secrets.clear()
        _remembered.clear()
        _pattern = None


def redact(text: str) -> str:
    """``text`` with every remembered secret replaced by ``***``."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def shown(key: Any, value: Any) -> str:
    """How a message shows ``value`` of ``key``: itself, or only its type when the
    key holds a secret (``a string``, ``a list``)."""
    if is_secret_key(key) or (isinstance(value, str) and redact(value) != value):
        return _kind(value)
    return repr(value)


def _kind(value: Any) -> str:
    names = {str: "a string", int: "a number", float: "a number", bool: "true or false", list: "a list",
             dict: "a mapping", type(None): "nothing"}
    return names.get(type(value), type(value).__name__)


def read_secret_file(path: str | os.PathLike) -> str:
    """A secret kept in a file: its text, less one trailing newline. Raises
    ValueError saying what is wrong (never the content)."""
    p = Path(path).expanduser()
    try:
        if not p.is_file():
            raise ValueError(f"{p}: no such file" if not p.exists() else f"{p}: not a regular file")
        if p.stat().st_size > MAX_SECRET_FILE_BYTES:
            raise ValueError(f"{p}: larger than {MAX_SECRET_FILE_BYTES // 1024} KiB, not a secret")
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{p}: not UTF-8 text") from None
    except OSError as e:
        raise ValueError(f"{p}: {e.strerror or e}") from None
    if text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    if not text:
        raise ValueError(f"{p}: empty")
    remember(text)
    return text


def expand(data: Any, problem: Callable[[tuple, str], None], loc: tuple = (),
           environ: Optional[dict] = None) -> Any:
    """``data`` (a parsed YAML document) with ``${NAME}`` in every string value
    expanded from ``environ`` (default: the process environment) and ``$${`` made a
    literal ``${``. Each unset variable or malformed reference is
    ``problem(loc, message)``; the value at that place is left as written. A value
    expanded from a variable whose name, or whose key, says it is a secret is
    remembered (:func:`remember`), as is any value at a secret key."""
    env = os.environ if environ is None else environ
    if isinstance(data, dict):
        return {k: expand(v, problem, loc + (k,), env) for k, v in data.items()}
    if isinstance(data, list):
        return [expand(v, problem, loc + (i,), env) for i, v in enumerate(data)]
    if not isinstance(data, str):
        return data
    secret_key = bool(loc) and isinstance(loc[-1], str) and is_secret_key(loc[-1])
    if "$" not in data:
        if secret_key:
            remember(data)
        return data
    bad: list[str] = []
    secret = secret_key

    def sub(m: re.Match) -> str:
        nonlocal secret
        if m.group(0) == "$${":
            return "${"
        name = m.group(1)
        if not m.group(0).endswith("}"):
            bad.append("a `${` with no closing `}` (write `$${` for a literal `${`)")
            return m.group(0)
        if not _NAME.match(name or ""):
            bad.append(f"`${{{name}}}` is not a variable reference (a name of letters, digits and _; "
                       "write `$${` for a literal `${`)")
            return m.group(0)
        if name not in env:
            bad.append(f"the environment variable {name} is not set")
            return m.group(0)
        if is_secret_key(name):
            secret = True
        return env[name]

    out = _REF.sub(sub, data)
    for message in bad:
        problem(loc, message)
    if secret:
        remember(out)
    return out if not bad else data
