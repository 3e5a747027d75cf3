"""One sync's reads for many targets at once: a namespace's workloads, pods and
pod metrics in one list call each, shared by every target of that namespace.

The HPA controller does not GET a workload and LIST its pods per HPA either: it
reads them from shared informers, a cluster-wide list then a watch per resource
(pkg/controller/podautoscaler/horizontal.go, ``NewHorizontalController``: the
``podInformer`` lister, and the scale client for the workload). Here a sync lists
each namespace once per resource (``list_scope: namespace``, the default: the
permissions of a namespaced Role are enough) or the whole cluster once
(``list_scope: cluster``: a ClusterRole to list pods and workloads everywhere),
and each target picks its own workload and the pods its selector matches, exactly
as the API server would have matched them for ``?labelSelector=``.

A list that fails leaves its targets to their per-target reads (each failure then
its own target's), so one namespace's 403 never fails another namespace's targets.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

__all__ = ["selector_matcher", "selector_dict"]


def selector_dict(selector: Any) -> Optional[dict]:
    """A typed ``V1LabelSelector`` (or its dict) as ``{matchLabels, matchExpressions}``."""
    if selector is None:
        return None
    if isinstance(selector, Mapping):
        return {"matchLabels": dict(selector.get("matchLabels") or selector.get("match_labels") or {}),
                "matchExpressions": [dict(e) for e in selector.get("matchExpressions")
                                     or selector.get("match_expressions") or []]}
    return {"matchLabels": dict(selector.match_labels or {}),
            "matchExpressions": [{"key": e.key, "operator": e.operator, "values": list(e.values or [])}
                                 for e in selector.match_expressions or []]}


def selector_matcher(selector: Optional[dict]) -> Optional[Callable[[Mapping[str, str]], bool]]:
    """A predicate on a pod's labels with the meaning of
    ``metav1.LabelSelectorAsSelector`` (k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go)
    and ``labels.Requirement.Matches`` (k8s.io/apimachinery/pkg/labels/selector.go):
    ``matchLabels`` are ``key=value`` (the key present with that value); ``In`` the key
    present with one of the values; ``NotIn`` the key absent or none of the values;
    ``Exists``; ``DoesNotExist``. None for a nil selector (``labels.Nothing``): no
    pod matches; an operator it does not know: None too (the per-target read then
    reports what the API server says)."""
    if selector is None:
        return None
    tests: list[Callable[[Mapping[str, str]], bool]] = []
    for k, v in (selector.get("matchLabels") or {}).items():
        tests.append(lambda labels, k=k, v=v: labels.get(k) == v)
    for e in selector.get("matchExpressions") or []:
        op, key, values = e.get("operator"), e.get("key"), frozenset(e.get("values") or ())
        if op == "In":
            tests.append(lambda labels, k=key, vs=values: k in labels and labels[k] in vs)
        elif op == "NotIn":
            tests.append(lambda labels, k=key, vs=values: k not in labels or labels[k] not in vs)
        elif op == "Exists":
            tests.append(lambda labels, k=key: k in labels)
        elif op == "DoesNotExist":
            tests.append(lambda labels, k=key: k not in labels)
        else:
            return None
    return lambda labels: all(t(labels) for t in tests)


class LabelIndex:
    """One namespace's listed objects (pods, pod metrics) in list order, indexed by
    their ``(label, value)`` pairs, so that each target's selector picks its own
    without scanning the namespace: the candidates are the objects carrying one of
    the selector's ``matchLabels`` pairs (every match carries each of them), the
    whole namespace for a selector of expressions only; the matcher decides."""

    def __init__(self, items: list, labels_of: Callable[[Any], Mapping[str, str]]):
        self.items = items
        self.labels_of = labels_of
        self.by_label: dict[tuple[str, str], list] = {}
        for it in items:
            for pair in (labels_of(it) or {}).items():
                self.by_label.setdefault(pair, []).append(it)

    def select(self, selector: dict, match: Callable[[Mapping[str, str]], bool]) -> list:
        pairs = (selector.get("matchLabels") or {}).items()
        candidates = min((self.by_label.get(p, ()) for p in pairs), key=len) if pairs else self.items
        labels_of = self.labels_of
        return [it for it in candidates if match(labels_of(it) or {})]


class ModelView:
    """A list item's JSON read through its typed model's attribute names
    (``pod.status.start_time``), converted on access as the client converts it (the
    model's ``attribute_map`` for the JSON key, its field's annotation for the type:
    a nested model, a list or map of them, a ``datetime`` from RFC 3339) — so that
    the plugin's readers (:func:`.members.pod_member`) read a batch's 10,000 pods
    without the client building every field of every one first (about 1 ms a pod).
    Only reading; the same reader code runs on typed objects and on views."""

    __slots__ = ("_data", "_klass", "_seen")

    def __init__(self, data: Mapping[str, Any], klass: Any):
        self._data = data
        self._klass = klass
        self._seen: Optional[dict] = None

    def __getattr__(self, name: str) -> Any:
        seen = self._seen
        if seen is None:
            seen = self._seen = {}
        elif name in seen:
            return seen[name]
        klass = self._klass
        field = _FIELDS.get((klass, name))
        if field is None:
            key = klass.attribute_map.get(name)
            if key is None:
                raise AttributeError(f"{klass.__name__} has no attribute {name!r}")
            field = _FIELDS[(klass, name)] = (key, _converter(klass.model_fields[name].annotation))
        raw = self._data.get(field[0])
        value = seen[name] = None if raw is None else field[1](raw)
        return value

    def to_dict(self) -> Mapping[str, Any]:
        return self._data


#: (model, attribute) -> (JSON key, converter)
_FIELDS: dict[tuple[Any, str], tuple[str, Callable[[Any], Any]]] = {}


def _converter(annotation: Any) -> Callable[[Any], Any]:
    """How the client turns a field's JSON into its annotation's type."""
    import datetime
    import typing
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _converter(args[0]) if len(args) == 1 else (lambda raw: raw)
    if origin is typing.Annotated:
        return _converter(typing.get_args(annotation)[0])
    if origin is list:
        item = _converter(typing.get_args(annotation)[0])
        return lambda raw: [None if x is None else item(x) for x in raw]
    if origin is dict:
        value = _converter(typing.get_args(annotation)[1])
        return lambda raw: {k: None if v is None else value(v) for k, v in raw.items()}
    if annotation is datetime.datetime:
        # RFC 3339 as the API server writes it (2026-12-07T23:00:00Z, or with fractions)
        return datetime.datetime.fromisoformat
    if isinstance(annotation, type) and hasattr(annotation, "attribute_map"):
        return lambda raw: ModelView(raw, annotation)
    return lambda raw: raw
