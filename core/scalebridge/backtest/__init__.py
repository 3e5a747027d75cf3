"""``scalebridge backtest``: what a policy would have done on a target's own
history, under each semantics, against what the target actually did.

- :mod:`.history` reads the history of the policy's metric (a metric source's
  range queries, or the provider's monitoring) and the size the target had, and
  rebuilds the demand the way the simulator models it;
- :mod:`.replay` replays one target under each semantics with the simulator's
  fleet model and scores it (picklable tasks: the same result in this process,
  in worker processes or on a Dask cluster);
- :mod:`.run` does it for every target, :mod:`.cli` is the command.
"""
