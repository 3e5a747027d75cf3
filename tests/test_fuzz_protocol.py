"""A seeded mutator over the example requests (examples/requests/*.json) and the example
policy (examples/policies/web.yaml): dropped, duplicated and retyped keys, swapped
values, extreme numbers, deep nesting, odd unicode — for every built-in semantics.

Every outcome is a response or a ``scalebridge.errors`` error (never another exception);
with no profile and the current size inside [min, max], the desired size stays inside;
no call takes more than a second. The protocol's promise: docs/protocol.md (malformed
requests, limits).

``SCALEBRIDGE_FUZZ_CASES=10000`` runs that many cases per semantics (the suite runs
``DEFAULT_CASES``); ``SCALEBRIDGE_FUZZ_SEED`` picks another seed."""
from __future__ import annotations

import copy
import json
import os
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scalebridge import decide
from scalebridge.engine import BUILTIN_SEMANTICS, parse_request
from scalebridge.errors import ScalebridgeError, SemanticsFailure
from scalebridge.policyfile import load_policy_file

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CASES = 300
CASES = int(os.environ.get("SCALEBRIDGE_FUZZ_CASES", DEFAULT_CASES))
SEED = int(os.environ.get("SCALEBRIDGE_FUZZ_SEED", 21))
MAX_SECONDS = 1.0

EXTREME = [0, -1, 1, 2**63 - 1, -(2**63 - 1), 2**63, 10**30, 1e100, -1e100, 1e308, -1e308, 1e-300, 5e-324,
           float("nan"), float("inf"), -float("inf"), 0.1, 253402300799, 253402300800, -62135596801,
           "1e99", "1e100", "1e-99", "-1", "0", "1Ei", "1e999999999", "9" * 41, ".5m", "1.5Gi", "PT5M",
           "1e400", "-0"]
UNICODE = ["", "\x00", "\ufeff", "\u202e", "𝔠𝔭𝔲", "\udfff", "é", "cpu\n", "\u0000cpu", "💥" * 50, " " * 3]
OTHER_TYPES: list[Any] = [None, True, False, [], {}, [1, 2], {"a": 1}, "x", 3, 2.5]


def _seeds() -> list[dict]:
    out = [json.loads(p.read_text()) for p in sorted((ROOT / "examples/requests").glob("*.json"))]
    web = load_policy_file(ROOT / "examples/policies/web.yaml").model_dump(mode="json", exclude_unset=True)
    for r in list(out):
        out.append({**copy.deepcopy(r), "policy": copy.deepcopy(web)})
    return out


SEEDS = _seeds()


def _paths(x: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(x, dict):
        for k, v in x.items():
            out += _paths(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out += _paths(v, path + (i,))
    return out


def _get(x: Any, path: tuple) -> Any:
    for p in path:
        x = x[p]
    return x


def _set(x: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(x, path[:-1])[path[-1]] = value
    return x


def mutate(req: dict, rng: random.Random) -> Any:
    """``req`` (a copy) with one to three mutations."""
    x: Any = copy.deepcopy(req)
    if rng.random() < 0.4:   # numbers only: the request stays well-formed more often, the arithmetic is tried
        leaves = [p for p in _paths(x) if p and type(_get(x, p)) in (int, float)]
        for path in rng.sample(leaves, min(len(leaves), rng.randint(1, 3))):
            x = _set(x, path, rng.choice(EXTREME[:21]))
        return x
    for _ in range(rng.randint(1, 3)):
        paths = _paths(x)
        path = rng.choice(paths)
        op = rng.randrange(8)
        if op == 0 and path:                                   # drop a key (or a list item)
            parent = _get(x, path[:-1])
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif isinstance(parent, list) and path[-1] < len(parent):
                parent.pop(path[-1])
        elif op == 1 and path:                                 # duplicate: a key under a near name, an item twice
            parent = _get(x, path[:-1])
            if isinstance(parent, dict):
                parent[str(path[-1]) + rng.choice(["", "_", "s"])] = copy.deepcopy(parent[path[-1]])
            elif isinstance(parent, list):
                parent.insert(path[-1], copy.deepcopy(parent[path[-1]]))
        elif op == 2:                                          # retype
            x = _set(x, path, copy.deepcopy(rng.choice(OTHER_TYPES)))
        elif op == 3 and len(paths) > 2:                       # swap two values
            other = rng.choice(paths)
            if path and other and path[:len(other)] != other and other[:len(path)] != path:
                a, b = _get(x, path), _get(x, other)
                x = _set(x, path, copy.deepcopy(b))
                x = _set(x, other, copy.deepcopy(a))
        elif op in (4, 5):                                     # extreme numbers (and quantity strings)
            x = _set(x, path, rng.choice(EXTREME))
        elif op == 6:                                          # deep nesting
            v: Any = _get(x, path)
            for _ in range(rng.choice([5, 60, 250, 400])):
                v = [v] if rng.random() < 0.5 else {"k": v}
            return _set(x, path, v)   # the last mutation: the mutator's own copies stay shallow
        else:                                                  # odd unicode, in a value or a key
            s = rng.choice(UNICODE)
            parent = _get(x, path[:-1]) if path else None
            if isinstance(parent, dict) and rng.random() < 0.5:
                parent[s + str(path[-1])] = parent.pop(path[-1])
            else:
                x = _set(x, path, s if rng.random() < 0.5 else s + str(_get(x, path)))
    return x


def _bounds(req: Any):
    """(min, max) the desired size must stay inside, or None when the check does not apply."""
    try:
        env, policy = parse_request(req)
    except ScalebridgeError:
        return None
    if policy.profiles or policy.min_replicas is None or policy.max_replicas is None:
        return None
    if not policy.min_replicas <= env.current_replicas <= policy.max_replicas:
        return None
    return policy.min_replicas, policy.max_replicas


def fuzz(semantics: str, cases: int, seed: int) -> Counter:
    rng = random.Random(f"{seed}:{semantics}")
    seen: Counter = Counter()
    for i in range(cases):
        req = mutate(rng.choice(SEEDS), rng)
        t = time.perf_counter()
        try:
            resp = decide(req, semantics)
        except SemanticsFailure as e:
            pytest.fail(f"case {i}: a semantics failed on {json.dumps(req, default=str)[:2000]}: {e}")
        except ScalebridgeError:
            seen["refused"] += 1
            outcome = None
        except Exception as e:   # noqa: BLE001 - the point of the test
            pytest.fail(f"case {i}: {type(e).__name__}: {e} on {json.dumps(req, default=str)[:2000]}")
        else:
            seen["decided"] += 1
            outcome = resp
        took = time.perf_counter() - t
        assert took < MAX_SECONDS, f"case {i}: {took:.2f} s on {json.dumps(req, default=str)[:2000]}"
        if outcome is not None:
            b = _bounds(req)
            if b is not None:
                seen["bounds checked"] += 1
                assert b[0] <= outcome["desired_replicas"] <= b[1], \
                    f"case {i}: {outcome['desired_replicas']} outside {b} on {json.dumps(req, default=str)[:2000]}"
    return seen


@pytest.mark.parametrize("semantics", BUILTIN_SEMANTICS)
def test_mutated_requests_are_decided_or_refused_within_bounds_and_a_second(semantics):
    seen = fuzz(semantics, CASES, SEED)
    assert seen["decided"] + seen["refused"] == CASES
    # the mutator reaches both outcomes (a mutator that only breaks requests tests little)
    assert seen["decided"] > CASES // 20 and seen["refused"] > CASES // 20, seen
    print(f"{semantics}: {dict(seen)}")
