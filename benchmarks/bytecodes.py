"""Where a decision's work goes, counted in Python bytecodes: every bytecode the
interpreter executes inside a call, by function (``sys.settrace`` with opcode events).

A count does not move with the machine's load, as callgrind's instructions do not,
and it names the Python function that spends them, which an instruction count of the
interpreter cannot. It weighs every bytecode alike (a ``BINARY_OP`` on two ints and a
``CALL`` that builds an object count one each), so it ranks where the interpreter
spends its steps, not their exact cost; callgrind's figures (``--instructions``) give
the cost. Tracing is slow (≈ 50×): count a few hundred decisions, not a replay.

Used by ``decide.py --bytecodes`` and ``simulate.py --bytecodes``.
"""
from __future__ import annotations

import sys
from collections import Counter
from typing import Callable, Iterable


def count(calls: Iterable[Callable[[], object]]) -> tuple[int, Counter]:
    """Run each call with opcode tracing on; the number of calls and the bytecodes
    executed per function (``"name (file)"``) over all of them."""
    per_function: Counter = Counter()

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            per_function[f"{code.co_qualname} ({code.co_filename.rsplit('/', 1)[-1]})"] += 1
        return tracer

    n = 0
    for call in calls:
        sys.settrace(tracer)
        try:
            call()
        finally:
            sys.settrace(None)
        n += 1
    return n, per_function


def report(label: str, n: int, per_function: Counter, top: int = 15) -> None:
    """Bytecodes per call and the ``top`` functions' shares."""
    total = sum(per_function.values())
    print(f"{label}: {total / n:,.0f} bytecodes per decision; the {top} functions that execute most "
          f"({sum(v for _, v in per_function.most_common(top)) / total:.0%} of them):")
    for name, v in per_function.most_common(top):
        print(f"  {v / n:8.1f}  {v / total:6.1%}  {name}")
