#!/usr/bin/env python3
"""Digests of decisions, replays and translations: the check that a restructuring or a
speed-up changes no decision.

Take a baseline before the change, then compare after it::

    .venv/bin/python benchmarks/digests.py --write /tmp/before.json      # on the old checkout
    .venv/bin/python benchmarks/digests.py --compare /tmp/before.json    # on the new one

Each entry is the SHA-256 of a canonical JSON (sorted keys) of what the code answered, or
of the one-line error it raised (class and message):

- ``decide/…``: every request under ``examples/`` (requests, situations, controls) and
  the conformance cases (``tests/conformance/*/*.json``), under each built-in semantics,
  with and without ``explain``; :func:`scalebridge.testing.contract_requests`;
- ``chain/…``: 40 decisions in a row carrying ``state`` (and ``current_replicas`` set to
  the previous answer), on seeded random loads, from each example request, under each
  semantics — and the same chain through :class:`scalebridge.Decider`;
- ``replay/…``: the per-tick sizes and the reason tallies of one-day replays of the
  example policies on each synthetic workload, under each semantics;
- ``render/…`` and ``import/…``: every example policy rendered with each built-in
  translator (the native text and its loss lines), and read back.

The corpus is built from the repository alone (nothing beside it is needed), seeded, so
two checkouts digest the same inputs. ``--compare`` prints each key that differs or is
missing and exits 1 when any does.
"""
from __future__ import annotations

import argparse
import copy
import glob
import hashlib
import json
import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEMANTICS = ("kubernetes", "gce", "azure", "aws", "scalebridge")
TRANSLATORS = ("kubernetes", "gce", "azure", "aws", "keda")


def _digest(x) -> str:
    text = json.dumps(x, sort_keys=True, default=repr).replace(str(REPO), "<repo>")   # two checkouts compare
    return hashlib.sha256(text.encode()).hexdigest()


def _answer(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except Exception as e:   # noqa: BLE001 — an error is an answer too, digested as one line
        return {"raised": type(e).__name__, "message": str(e)}


def _requests() -> list[tuple[str, dict]]:
    out = []
    for folder in ("requests", "situations", "controls"):
        for path in sorted(glob.glob(str(REPO / "examples" / folder / "*.json"))):
            out.append((f"{folder}/{Path(path).stem}", json.loads(Path(path).read_text())))
    for path in sorted(glob.glob(str(REPO / "tests" / "conformance" / "*" / "*.json"))):
        cases = json.loads(Path(path).read_text())
        if not isinstance(cases, list):
            continue
        for i, case in enumerate(cases):
            if isinstance(case, dict) and isinstance(case.get("request"), dict):
                out.append((f"conformance/{Path(path).parent.name}/{Path(path).stem}/{i}", case["request"]))
    from scalebridge.testing import contract_requests
    for i, req in enumerate(contract_requests()):
        out.append((f"contract/{i}", req))
    return out


def _scale_metrics(obs: dict, factor: float) -> dict:
    """``obs`` with every numeric reading multiplied by ``factor`` (quantity strings kept)."""
    def scale(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return v
        return v * factor
    out = copy.deepcopy(obs)
    for m in (out.get("metrics") or {}).values():
        if not isinstance(m, dict):
            continue
        if isinstance(m.get("members"), dict):
            m["members"] = {k: scale(v) for k, v in m["members"].items()}
        for key in ("value",):
            if key in m:
                m[key] = scale(m[key])
        if isinstance(m.get("values"), list):
            m["values"] = [scale(v) for v in m["values"]]
        for key in ("series", "forecast"):
            if isinstance(m.get(key), list):
                m[key] = [[p[0], scale(p[1])] if isinstance(p, list) and len(p) == 2 else p for p in m[key]]
        if isinstance(m.get("member_series"), dict):
            m["member_series"] = {k: [[p[0], scale(p[1])] if isinstance(p, list) and len(p) == 2 else p
                                      for p in s] for k, s in m["member_series"].items()}
    return out


def _shift_times(x, dt: float):
    """Every time of a request's observations moved by ``dt`` (series points, sample times)."""
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if k in ("timestamp", "ready_transition_time", "start_time") and isinstance(v, (int, float)) \
                    and not isinstance(v, bool):
                out[k] = v + dt
            elif k in ("series", "forecast") and isinstance(v, list):
                out[k] = [[p[0] + dt, p[1]] if isinstance(p, list) and len(p) == 2 and isinstance(p[0], (int, float))
                          else p for p in v]
            elif k == "member_series" and isinstance(v, dict):
                out[k] = {n: [[p[0] + dt, p[1]] if isinstance(p, list) and len(p) == 2 else p for p in s]
                          for n, s in v.items()}
            else:
                out[k] = _shift_times(v, dt)
        return out
    if isinstance(x, list):
        return [_shift_times(v, dt) for v in x]
    return x


def decisions(out: dict) -> None:
    from scalebridge import decide
    for key, req in _requests():
        for sem in SEMANTICS:
            out[f"decide/{key}/{sem}"] = _digest(_answer(decide, req, sem))
            out[f"explain/{key}/{sem}"] = _digest(_answer(decide, req, sem, explain=True))


def chains(out: dict, steps: int = 40) -> None:
    from scalebridge import Decider, decide
    for key, base in _requests():
        if key.startswith(("contract/", "conformance/")) and not key.endswith("/0"):
            continue   # one of each family: chains are long
        for sem in SEMANTICS:
            rng = random.Random(f"{key}/{sem}")
            req = copy.deepcopy(base)
            now0 = float(req.get("now", 0))
            current = req.get("current_replicas", 1)
            state = req.get("state")
            answers = []
            decider = None
            try:
                decider = Decider(req.get("policy") or {}, sem, req.get("settings"), state)
            except Exception as e:   # noqa: BLE001
                answers.append({"decider": type(e).__name__, "message": str(e)})
            for k in range(steps):
                dt = 15.0 * k
                obs = _shift_times(_scale_metrics(base.get("observations") or {}, rng.choice(
                    (0.2, 0.5, 0.8, 1.0, 1.0, 1.3, 2.0, 3.0))), dt)
                r = dict(req, now=now0 + dt, current_replicas=current, observations=obs)
                if state is not None:
                    r["state"] = state
                else:
                    r.pop("state", None)
                a = _answer(decide, r, sem)
                answers.append(a)
                if decider is not None:
                    d = _answer(lambda: decider.step(now0 + dt, current, obs).to_response())
                    answers.append(d)
                if "raised" in a:
                    break
                current, state = a["desired_replicas"], a["state"]
            out[f"chain/{key}/{sem}"] = _digest(answers)


def _policies() -> list[tuple[str, object]]:
    """Every policy of ``examples/``: the policy files (a path) and each example request's (a dict)."""
    out: list[tuple[str, object]] = []
    for path in sorted(glob.glob(str(REPO / "examples" / "**" / "*.yaml"), recursive=True)):
        rel = os.path.relpath(path, REPO)
        if rel.startswith("examples/run/") and "/policies/" not in rel or rel == "examples/simulate/nasa.yaml" \
                or rel.startswith("examples/plugin/") or rel == "examples/shadow/run.yaml":
            continue   # run configurations and a scenario file, not policies
        out.append((rel, path))
    for key, req in _requests():
        if not key.startswith(("contract/", "conformance/")) and isinstance(req.get("policy"), dict):
            out.append((key, req["policy"]))
    return out


def _load(src):
    from scalebridge.policyfile import load_policy_file
    return load_policy_file(src) if isinstance(src, str) else src


def _as_json(policy) -> dict:
    """A policy object as JSON, on this checkout or an older one (a pydantic model then)."""
    if hasattr(policy, "model_dump"):
        return policy.model_dump(mode="json", exclude_none=True)
    from scalebridge.policy import policy_json
    return policy_json(policy, exclude_none=True)


def replays(out: dict, hours: float = 12) -> None:
    from scalebridge.simulator import FleetModel, make_workload, simulate
    from scalebridge.simulator.fleet import Startup
    for pname, src in _policies():
        try:
            policy = _load(src)
        except Exception as e:   # noqa: BLE001
            out[f"replay/{pname}"] = _digest({"raised": type(e).__name__, "message": str(e)})
            continue
        pol = policy if isinstance(policy, dict) else _as_json(policy)
        for wl in ("flash_crowd", "sawtooth"):
            trace = make_workload(wl, seed=3, duration_seconds=hours * 3600, tick_seconds=15)
            load = trace.values if hasattr(trace, "values") else trace
            for sem in SEMANTICS:
                model = FleetModel(capacity=float(max(load)) / 8 or 1.0, startup=Startup("constant", 90.0))
                run = _answer(simulate, pol, load, model, semantics=sem)
                if isinstance(run, dict):
                    out[f"replay/{pname}/{wl}/{sem}"] = _digest(run)
                else:
                    out[f"replay/{pname}/{wl}/{sem}"] = _digest({
                        "desired": [int(x) for x in run.desired], "paid": [float(x) for x in run.paid],
                        "reasons": run.reasons, "errors": run.errors, "first_error": run.first_error})


def _losses(losses) -> dict:
    return {k: list(getattr(losses, k, [])) for k in ("lines", "notes", "placeholders")}


def translations(out: dict) -> None:
    from scalebridge import translate
    for key, src in _policies():
        try:
            policy = _load(src)
        except Exception as e:   # noqa: BLE001
            out[f"render/{key}"] = _digest({"raised": type(e).__name__, "message": str(e)})
            continue
        for to in TRANSLATORS:
            def render():
                native, losses = translate.render(policy, to)
                return {"text": translate.dump(native, to), "losses": _losses(losses)}
            r = _answer(render)
            out[f"render/{key}/{to}"] = _digest(r)
            if "text" in r:
                def back():
                    pol, losses = translate.import_native(r["text"], to)
                    return {"policy": pol, "losses": _losses(losses)}
                out[f"import/{key}/{to}"] = _digest(_answer(back))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", metavar="FILE", help="write the digests as JSON")
    ap.add_argument("--compare", metavar="FILE", help="compare with digests written before; exit 1 on a difference")
    ap.add_argument("--only", default="decide,chain,replay,translate",
                    help="comma-separated parts (decide, chain, replay, translate)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    parts = set(args.only.split(","))
    out: dict = {}
    if "decide" in parts:
        decisions(out)
    if "chain" in parts:
        chains(out)
    if "replay" in parts:
        replays(out)
    if "translate" in parts:
        translations(out)
    print(f"{len(out)} digests", file=sys.stderr)
    if args.write:
        Path(args.write).write_text(json.dumps(out, indent=0, sort_keys=True))
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        keys = set(before) & set(out) if parts != {"decide", "chain", "replay", "translate"} else set(before) | set(out)
        keys = {k for k in keys if k.split("/")[0] in {p if p != "translate" else "render" for p in parts} | (
            {"explain"} if "decide" in parts else set()) | ({"import"} if "translate" in parts else set())}
        differ = sorted(k for k in keys if before.get(k) != out.get(k))
        for k in differ:
            print(f"differs: {k}" if k in before and k in out else f"only {'before' if k in before else 'now'}: {k}")
        print(f"{len(differ)} of {len(keys)} differ", file=sys.stderr)
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
