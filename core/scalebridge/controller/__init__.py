"""``scalebridge run``: the controller that carries decisions out on real targets.

One module, one job: ``config`` (the run configuration), ``queries`` (what a
sync reads), ``store`` (persisted decision state), ``reconcile`` (one sync of one
target), ``loop`` with ``clock``, ``pacing`` and ``backoff`` (the sync loop),
``audit``, ``metrics``, ``logs``, ``election`` and ``cli``.

Each sync of each target is observe → decide → act → persist, as the
Kubernetes HPA controller's ``reconcileAutoscaler`` is (kubernetes/kubernetes,
``pkg/controller/podautoscaler/horizontal.go``); the arithmetic stays in the
pure core (:class:`scalebridge.engine.Decider`).
"""
