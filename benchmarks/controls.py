#!/usr/bin/env python3
"""The neutral controls' cost, and the CEL implementations they could use.

1. CEL (core/scalebridge/cel.py says why cel-expr-python): for each implementation
   installed — ``cel-expr-python`` (cel-cpp), ``common-expression-language``
   (cel-rust), ``cel-python`` (pure Python) — the time to import it, to compile, and
   to evaluate KEDA's count example and an average, and a few CEL numeric rules
   (int/uint/double kept apart, errors on overflow and division by zero); the two
   not installed are skipped (``pip install common-expression-language cel-python``
   in a scratch virtualenv to compare);
2. decisions per second through ``Decider.step`` (what ``simulate`` and the
   controller run) for one policy under each semantics, without the controls' keys
   and with a formula, with ``fallback``, in the activation phase, with KEDA 2.20's
   per-metric fallback in a formula (``failover``) and with ``invalid_values_as_zero``.

    .venv/bin/python benchmarks/controls.py [--evals 20000] [--decisions 5000]
"""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import time

COUNT = "[a, b, c].filter(x, x > 1.0).size() > 1 ? 5.0 : 0.0"
AVERAGE = "(a + b) / 2.0"
DATA = {"a": 2.0, "b": 3.0, "c": 0.0}
CHECKS = [("7 / 2", 3), ("-7 / 2", -3), ("7 / 2.0", "error"), ("1u + 1", "error"), ("1 / 0", "error"),
          ("9223372036854775807 + 1", "error"), ("2u - 3u", "error"), ("0.0 / 0.0 != 0.0 / 0.0", True)]


def _import_ms(module: str) -> float:
    out = subprocess.run([sys.executable, "-c", f"import time; t = time.perf_counter(); import {module}; "
                          "print((time.perf_counter() - t) * 1000)"], capture_output=True, text=True)
    return float(out.stdout.strip()) if out.returncode == 0 else float("nan")


def _cxx():
    from cel_expr_python import cel
    env = cel.NewEnv(variables={k: cel.Type.DOUBLE for k in DATA})

    def compile_(e):
        return env.compile(e)

    def run(p):
        return p.eval(data=DATA).value()

    def check(e):
        try:
            v = cel.NewEnv().compile(e).eval()
        except Exception:   # noqa: BLE001 - the checker refuses it
            return "error"
        return "error" if v.type() == cel.Type.ERROR else v.value()
    return "cel_expr_python.cel", compile_, run, check


def _rust():
    import cel

    def check(e):
        try:
            return cel.evaluate(e, {})
        except Exception:   # noqa: BLE001
            return "error"
    return "cel", cel.compile, lambda p: p.execute(DATA), check


def _pure():
    import celpy
    env = celpy.Environment()
    act = {k: celpy.celtypes.DoubleType(v) for k, v in DATA.items()}

    def check(e):
        try:
            v = env.program(env.compile(e)).evaluate({})
        except Exception:   # noqa: BLE001
            return "error"
        if isinstance(v, Exception):
            return "error"
        return {"IntType": int, "UintType": int, "DoubleType": float, "BoolType": bool}.get(type(v).__name__, str)(v)
    return "celpy", lambda e: env.program(env.compile(e)), lambda p: p.evaluate(act), check


def cel_table(evals: int) -> None:
    print(f"{'implementation':28} {'import ms':>9} {'compile µs':>10} {'count µs':>9} {'average µs':>10}  checks")
    for dist, make in (("cel-expr-python", _cxx), ("common-expression-language", _rust), ("cel-python", _pure)):
        try:
            module, compile_, run, check = make()
        except ImportError:
            print(f"{dist:28} not installed")
            continue
        t = time.perf_counter()
        for _ in range(200):
            compile_(COUNT)
        comp = (time.perf_counter() - t) / 200 * 1e6
        per = []
        for expr in (COUNT, AVERAGE):
            p = compile_(expr)
            n = evals if dist != "cel-python" else max(1, evals // 100)
            t = time.perf_counter()
            for _ in range(n):
                run(p)
            per.append((time.perf_counter() - t) / n * 1e6)
        bad = [e for e, want in CHECKS if not (check(e) == want and type(check(e)) is type(want))]
        print(f"{dist:28} {_import_ms(module):9.1f} {comp:10.1f} {per[0]:9.1f} {per[1]:10.1f}  "
              f"{len(CHECKS) - len(bad)}/{len(CHECKS)}" + (f" (wrong: {', '.join(bad)})" if bad else ""))


def decisions(n: int) -> None:
    from scalebridge.engine import BUILTIN_SEMANTICS, Decider
    q = {"type": "external", "name": "queue", "target": {"type": "AverageValue", "average_value": 10}}
    rules = [{"metric": "queue", "operator": "GreaterThan", "threshold": 40, "time_window_seconds": 60,
              "action": {"direction": "Increase", "type": "ChangeCount", "value": 1}}]
    base = {"min_replicas": 1, "max_replicas": 50, "metrics": [q], "rules": rules}
    variants = {
        "plain": base,
        "formula": {**base, "metrics": [{**q, "name": "raw"},
                                        {"type": "formula", "name": "queue", "expression": "raw * 1.0",
                                         "target": q["target"]}]},
        "fallback": {**base, "fallback": {"replicas": 4}},
        "activation": {**base, "min_replicas": 0, "metrics": [{**q, "activation_threshold": 1}]},
        # KEDA 2.20: the scalingModifiers fallback (a nullable formula), a negative value read as 0
        "failover": {**base, "fallback": {"replicas": 4, "behavior": "formula"},
                     "metrics": [{**q, "name": "raw"}, {"type": "formula", "name": "queue",
                                                       "expression": "raw != null ? raw : 8.0",
                                                       "target": q["target"]}]},
        "as-zero": {**base, "invalid_values_as_zero": True},
    }
    print(f"\ndecisions per second (Decider.step, {n} decisions)")
    print(f"{'semantics':12}" + "".join(f"{k:>12}" for k in variants))
    for sem in BUILTIN_SEMANTICS:
        row = []
        for pol in variants.values():
            d = Decider(pol, sem)
            t = time.perf_counter()
            for i in range(n):
                now = 1_767_225_600.0 + 15 * i
                v = 30 + i % 20
                obs = {"metrics": {k: {"value": v, "timestamp": now - 5, "series": [[now - 30, v]]}
                                   for k in ("queue", "raw")}}
                d.step(now, 3, obs)
            row.append(n / (time.perf_counter() - t))
        print(f"{sem:12}" + "".join(f"{x:12.0f}" for x in row))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=20000)
    ap.add_argument("--decisions", type=int, default=5000)
    a = ap.parse_args()
    cel_table(a.evals)
    decisions(a.decisions)


if __name__ == "__main__":
    importlib.invalidate_caches()
    main()
