"""``scalebridge explain``: one decision, stage by stage, for a person."""
from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.table import Table


def render(resp: dict, out: IO[str]) -> None:
    console = Console(file=out, width=120)
    head = (f"[bold]{resp['semantics']}[/bold]: current {resp['current_replicas']} → "
            f"recommended {resp['recommended_replicas']}, desired [bold]{resp['desired_replicas']}[/bold] "
            f"({resp['reason']})")
    if resp.get("profile"):
        head += f", profile {resp['profile']}"
    console.print(head)
    if resp.get("error"):
        console.print(f"  [red]error:[/red] {resp['error']}")
    if resp["metrics"]:
        t = Table(title="signals (raw proposals)", title_justify="left", show_edge=False)
        for c in ("metric/rule", "proposal", "utilization", "value", "triggered", "error"):
            t.add_column(c)
        for m in resp["metrics"]:
            t.add_row(str(m.get("name")), _s(m.get("replicas")), _s(m.get("utilization")), _s(m.get("value")),
                      _s(m.get("triggered")), _s(m.get("error")))
        console.print(t)
    stages = resp.get("explain") or []
    t = Table(title="stages", title_justify="left", show_edge=False)
    for c in ("stage", "in", "out", "changed", "why"):
        t.add_column(c)
    for s in stages:
        changed = "[yellow]yes[/yellow]" if s["in"] != s["out"] else ""
        t.add_row(s["stage"], _s(s["in"]), _s(s["out"]), changed, s.get("why", ""))
    console.print(t)
    console.print()


def _s(x) -> str:
    return "" if x is None else str(x)
