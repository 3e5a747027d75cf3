"""The comparison plot (matplotlib, Agg backend: no display needed).

Top panel, in members: the load in members-needed units (``load / capacity``,
shaded), the oracle's ready members, and each run's ready members — wherever
a run's line is under the shaded load, the fleet was short. Bottom panel: the
members each run pays for (cost), with the oracle's as the floor. Long series
are reduced to at most ``max_points`` buckets keeping each bucket's highest
load and lowest ready count, so a short dip never disappears from the plot.
"""

from __future__ import annotations

import os
from typing import Optional

import numpy as np

from .oracle import oracle_ready
from .comparison import Comparison

__all__ = ["color_of", "plot_comparison"]

#: the colours of the semantics that name none (Semantics.color), in turn
_EXTRA = ["#8e24aa", "#6d4c41", "#00897b", "#c2185b", "#546e7a"]


def color_of(semantics: str) -> Optional[str]:
    """The colour a registered semantics gives itself (:attr:`Semantics.color`), or None."""
    from .. import registry
    entry = registry.current().semantics.get(semantics)
    return getattr(entry.obj, "color", None) if entry is not None else None


def _buckets(n: int, max_points: int) -> Optional[np.ndarray]:
    if n <= max_points:
        return None
    return np.linspace(0, n, max_points + 1).astype(np.int64)[:-1]


def _reduce(values: np.ndarray, starts: Optional[np.ndarray], how: np.ufunc) -> np.ndarray:
    return values if starts is None else how.reduceat(values, starts)


def plot_comparison(result: Comparison, path: str | os.PathLike, *, title: Optional[str] = None,
                    unit: Optional[str] = None, max_points: int = 3000) -> str:
    """Write the plot of ``result`` to ``path`` (PNG, or any format matplotlib
    knows from the suffix); returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model = result.model
    load = result.load
    n = load.size
    tick = model.tick_seconds
    starts = _buckets(n, max_points)
    x = (np.arange(n) * tick if starts is None else starts * tick) / 3600.0
    need = _reduce(load / model.capacity, starts, np.maximum)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 7.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    label_unit = f" ({unit})" if unit else ""
    top.fill_between(x, 0, need, step="post", color="#bdbdbd", alpha=0.6,
                     label=f"load / capacity{label_unit}: members needed")
    if result.oracles:
        label, paid = next(iter(result.oracles.items()))
        ready = oracle_ready(paid, startup_seconds=model.startup.minimum, tick_seconds=tick)
        top.step(x, _reduce(ready, starts, np.minimum), where="post", color="black", lw=1.0, ls="--",
                 label="oracle (ready)")
        bottom.step(x, _reduce(paid, starts, np.maximum), where="post", color="black", lw=1.0, ls="--",
                    label="oracle")
    several = len({r.run.policy for r in result.results}) > 1
    extra = iter(_EXTRA * 4)
    for r in result.results:
        run = r.run
        color = color_of(run.semantics) or next(extra)
        name = f"{run.policy} / {run.semantics}" if several else run.semantics
        top.step(x, _reduce(run.ready, starts, np.minimum), where="post", color=color, lw=1.2,
                 label=f"{name} (ready)")
        hours = r.scores.instance_hours
        ratio = r.scores.oracle_ratio
        short = r.scores.underprovisioned_minutes
        bottom.step(x, _reduce(run.paid, starts, np.maximum), where="post", color=color, lw=1.2,
                    label=f"{name}: {hours:,.0f} inst-h" + (f" ({ratio:.2f}× oracle)" if ratio else "")
                    + f", short {short:,.1f} min")
    top.set_ylabel("members")
    top.set_title(title or "Ready capacity against load")
    top.legend(loc="upper right", fontsize=8)
    top.grid(alpha=0.3)
    top.set_ylim(bottom=0)
    bottom.set_ylabel("members paid")
    bottom.set_xlabel("hours since start")
    bottom.legend(loc="upper right", fontsize=8)
    bottom.grid(alpha=0.3)
    bottom.set_ylim(bottom=0)
    fig.tight_layout()
    out = os.fspath(path)
    directory = os.path.dirname(out)
    if directory:
        os.makedirs(directory, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
