"""``backtest --plot``: each target's panel, the members each semantics set
against the size the target had (and the members its demand needed), on the
period's time axis (matplotlib, Agg backend: no display needed)."""
from __future__ import annotations

import os

import numpy as np

__all__ = ["plot_backtest", "MAX_PANELS"]

#: targets drawn (the first ones, in the configuration's order); the JSON has them all
MAX_PANELS = 12


def plot_backtest(result, path: str | os.PathLike, max_points: int = 3000) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ..simulator.oracle import members_needed
    from ..simulator.plot import color_of

    names = list(result.targets)[:MAX_PANELS]
    fig, axes = plt.subplots(len(names) or 1, 1, figsize=(12, 2.6 * max(1, len(names))), squeeze=False, sharex=True)
    for ax, name in zip(axes[:, 0], names):
        r = result.targets[name]
        hist = result.histories[name]
        n = hist.load.size
        step = max(1, n // max_points)
        hours = (np.arange(n) * hist.tick / 3600.0)[::step]
        need = members_needed(hist.load, r["fleet"]["capacity"])
        ax.fill_between(hours, 0, need[::step], step="post", color="#bbbbbb", alpha=0.5, label="needed")
        if hist.recorded_desired is not None:
            ax.step(hours, hist.recorded_desired[::step], where="post", color="black", lw=1.6, label="recorded")
        for sem, s in r["series"].items():
            if sem == "oracle":
                continue
            ax.step(hours, np.asarray(s["desired"])[::step], where="post", lw=1.0, color=color_of(sem),
                    label=sem)
        ax.set_title(f"{name}: {r['demand']['metric']} from {r['demand']['source']}", fontsize=9, loc="left")
        ax.set_ylabel("members")
        ax.legend(fontsize=7, ncol=7, loc="upper left")
    axes[-1, 0].set_xlabel("hours since --start")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)
