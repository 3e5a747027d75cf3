"""A reverse proxy in front of an AWS API emulator (moto's server), for tests
that use the real boto3 over HTTP: it records every call, injects faults from
a queue, and is strict where the emulator is lax.

    from moto.server import ThreadedMotoServer
    from scalebridge_aws.fake_server import AwsProxy, Fault

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0); moto.start()
    host, port = moto.get_host_and_port()
    with AwsProxy(f"http://{host}:{port}") as proxy:
        proxy.add(Fault.throttle_text(action="DescribeAutoScalingGroups"))   # a 429 in text/plain, once
        boto3.client("autoscaling", endpoint_url=proxy.url, ...)
        proxy.calls          # [Call(service="autoscaling", action="DescribeAutoScalingGroups", status=429, ...)]
        proxy.iam_actions()  # {"autoscaling:DescribeAutoScalingGroups", ...}

Only the standard library; it imports neither moto nor boto3.

What it knows of the wire (AWS API references): Auto Scaling and EC2 speak the
query protocol (a form-encoded ``Action=…`` body, XML responses; error shapes
``<ErrorResponse><Error><Code>`` and ``<Response><Errors><Error><Code>``);
CloudWatch speaks JSON 1.0 (``X-Amz-Target: GraniteServiceVersion20100801.GetMetricData``,
errors ``{"__type": …}``); the service is the signing name in the
``Authorization`` header's credential scope (``monitoring`` for CloudWatch,
whose IAM prefix is ``cloudwatch``).

Strictness: ``SetDesiredCapacity`` outside the group's MinSize/MaxSize is
refused with the ValidationError real Auto Scaling returns ("New
SetDesiredCapacity value 12 is above max value 10 for the AutoScalingGroup.");
moto accepts it; ``TerminateInstanceInAutoScalingGroup`` without
``ShouldDecrementDesiredCapacity``, or with a decrement at MinSize, is refused as
Auto Scaling refuses it; on a group that does not exist, the ValidationError
"AutoScalingGroup name not found" (moto fails with a 500). ``DescribeScalingActivities`` answers from
:attr:`AwsProxy.activities` for the groups it names (moto lists none).
"""
from __future__ import annotations

import http.client
import json
import random
import re
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Optional
from xml.sax.saxutils import escape

from scalebridge.testing.fault_queue import take_fault
from scalebridge.testing.local_server import HttpServer, QuietHandler

__all__ = ["AwsProxy", "Call", "Fault", "IAM_PREFIX"]

#: signing name → IAM action prefix
IAM_PREFIX = {"monitoring": "cloudwatch", "autoscaling": "autoscaling", "ec2": "ec2"}
_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/aws4_request")
_XMLNS = {"autoscaling": "http://autoscaling.amazonaws.com/doc/2011-01-01/",
          "ec2": "http://ec2.amazonaws.com/doc/2016-11-15/"}


@dataclass
class Fault:
    """One injected failure. ``kind``: ``status`` (an HTTP response with ``status``,
    ``body``, ``content_type``), ``error`` (the protocol's error shape with ``code``,
    ``message``, ``status``), ``delay`` (hold the response ``seconds``, then send it:
    a read timeout when longer than the client's), ``drop`` (close the connection
    without a response). It applies to calls matching ``service`` and ``action``
    (None: any), after skipping ``after`` of them, ``times`` times (None: forever),
    each with ``probability`` (the proxy's seeded random)."""

    kind: str
    action: Optional[str] = None
    service: Optional[str] = None
    times: Optional[int] = 1
    after: int = 0
    probability: float = 1.0
    status: int = 500
    code: str = "InternalFailure"
    message: str = "injected"
    body: bytes = b""
    content_type: str = "text/plain"
    seconds: float = 0.0
    headers: dict = field(default_factory=dict)

    # ------------------------------------------------------------------- common faults
    @classmethod
    def throttle(cls, **kw) -> "Fault":
        """A throttling error in the protocol's shape (``Throttling``, HTTP 400, as
        Auto Scaling and CloudWatch answer; EC2 answers ``RequestLimitExceeded``)."""
        return cls("error", code=kw.pop("code", "Throttling"), message=kw.pop("message", "Rate exceeded"),
                   status=kw.pop("status", 400), **kw)

    @classmethod
    def throttle_text(cls, **kw) -> "Fault":
        """``429 Too Many Requests`` with a ``text/plain`` body, as a load balancer or
        proxy in front of an endpoint answers (botocore cannot parse it)."""
        return cls("status", status=429, body=kw.pop("body", b"Too Many Requests"), **kw)

    @classmethod
    def server_error(cls, status: int = 503, **kw) -> "Fault":
        return cls("error", status=status, code=kw.pop("code", "ServiceUnavailable" if status == 503
                                                       else "InternalFailure"),
                   message=kw.pop("message", "Service unavailable" if status == 503 else "Internal failure"), **kw)

    @classmethod
    def timeout(cls, seconds: float, **kw) -> "Fault":
        return cls("delay", seconds=seconds, **kw)

    @classmethod
    def drop(cls, **kw) -> "Fault":
        return cls("drop", **kw)

    @classmethod
    def denied(cls, **kw) -> "Fault":
        return cls("error", status=403, code=kw.pop("code", "AccessDenied"),
                   message=kw.pop("message", "User is not authorized to perform this action"), **kw)

    def matches(self, service: str, action: str) -> bool:
        return (self.action is None or self.action == action) and (self.service is None or self.service == service)


@dataclass
class Call:
    """One request that reached the proxy."""
    service: str
    action: str
    params: dict
    status: Optional[int] = None
    fault: Optional[str] = None
    time: float = 0.0

    @property
    def iam_action(self) -> str:
        return f"{IAM_PREFIX.get(self.service, self.service)}:{self.action}"


def error_body(service: str, code: str, message: str, status: int) -> tuple[bytes, str]:
    """An error response body in the service's protocol, and its content type."""
    if service == "monitoring":
        return json.dumps({"__type": code, "message": message}).encode(), "application/x-amz-json-1.0"
    if service == "ec2":
        return (f"<Response><Errors><Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>"
                f"</Error></Errors><RequestID>proxy</RequestID></Response>").encode(), "text/xml"
    fault = "Sender" if status < 500 else "Receiver"
    return (f'<ErrorResponse xmlns="{_XMLNS.get(service, "")}"><Error><Type>{fault}</Type>'
            f"<Code>{escape(code)}</Code><Message>{escape(message)}</Message></Error>"
            f"<RequestId>proxy</RequestId></ErrorResponse>").encode(), "text/xml"


def _iso(t: Any) -> str:
    if isinstance(t, (int, float)):
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    return str(t)


def activities_xml(activities: list[dict]) -> bytes:
    """A ``DescribeScalingActivities`` response (API_Activity fields)."""
    items = []
    for a in activities:
        parts = []
        for k in ("ActivityId", "AutoScalingGroupName", "Description", "Cause", "StartTime", "EndTime",
                  "StatusCode", "StatusMessage", "Progress", "Details"):
            if a.get(k) is not None:
                v = _iso(a[k]) if k in ("StartTime", "EndTime") else a[k]
                parts.append(f"<{k}>{escape(str(v))}</{k}>")
        items.append("<member>" + "".join(parts) + "</member>")
    return (f'<DescribeScalingActivitiesResponse xmlns="{_XMLNS["autoscaling"]}"><DescribeScalingActivitiesResult>'
            f"<Activities>{''.join(items)}</Activities></DescribeScalingActivitiesResult>"
            f"<ResponseMetadata><RequestId>proxy</RequestId></ResponseMetadata>"
            f"</DescribeScalingActivitiesResponse>").encode()


class AwsProxy(HttpServer):
    """The proxy. ``url`` is what boto3's ``endpoint_url`` points at. Thread-safe."""

    thread_name = "aws-proxy"

    def __init__(self, upstream: str, *, strict: bool = True, seed: int = 0, host: str = "127.0.0.1",
                 port: int = 0):
        u = urllib.parse.urlsplit(upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.strict = strict
        self.faults: list[Fault] = []
        self.calls: list[Call] = []
        #: group name → activities served by DescribeScalingActivities (newest first)
        self.activities: dict[str, list[dict]] = {}
        #: called with each Call before it is forwarded (may raise nothing; for tests' own bookkeeping)
        self.on_call: Optional[Callable[[Call], None]] = None
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._skipped: dict[int, int] = {}
        #: seconds every call waits before it is forwarded (a real endpoint's round trip)
        self.latency = 0.0
        proxy = self

        class Handler(QuietHandler):
            def do_POST(self):
                proxy._handle(self)

            do_GET = do_POST
            do_PUT = do_POST
            do_DELETE = do_POST

        self._bind(Handler, host, port)

    # ------------------------------------------------------------------- test API
    def add(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def reset(self) -> None:
        """Forget faults, calls and activities (not the upstream's state)."""
        with self._lock:
            self.faults.clear()
            self.calls.clear()
            self.activities.clear()
            self._skipped.clear()

    def count(self, action: Optional[str] = None, service: Optional[str] = None) -> int:
        with self._lock:
            return sum(1 for c in self.calls if (action is None or c.action == action)
                       and (service is None or c.service == service))

    def iam_actions(self) -> set[str]:
        """The IAM actions of every call made (``autoscaling:SetDesiredCapacity``)."""
        with self._lock:
            return {c.iam_action for c in self.calls if c.action}

    # ------------------------------------------------------------------- the wire
    def _take_fault(self, service: str, action: str) -> Optional[Fault]:
        with self._lock:
            return take_fault(self.faults, lambda f: f.matches(service, action) and self._due(f))

    def _due(self, f: Fault) -> bool:
        """Whether a fault matching this call answers it: its ``after`` matching calls
        are skipped (this one counted if it is one), then it answers with its
        ``probability``. The caller holds the lock."""
        k = id(f)
        if self._skipped.get(k, 0) < f.after:
            self._skipped[k] = self._skipped.get(k, 0) + 1
            return False
        return f.probability >= 1.0 or self._random.random() < f.probability

    @staticmethod
    def _identify(handler: BaseHTTPRequestHandler, body: bytes) -> tuple[str, str, dict]:
        auth = handler.headers.get("Authorization", "")
        m = _SCOPE.search(auth)
        service = m.group(2) if m else ""
        target = handler.headers.get("X-Amz-Target")
        if target:
            action = target.rsplit(".", 1)[-1]
            try:
                params = json.loads(body or b"{}")
            except ValueError:
                params = {}
            return service or "monitoring", action, params if isinstance(params, dict) else {}
        ctype = handler.headers.get("Content-Type", "")
        if "x-www-form-urlencoded" in ctype or (body and b"Action=" in body):
            q = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            params = {k: v[0] if len(v) == 1 else v for k, v in q.items()}
            return service, str(params.pop("Action", "")), params
        return service, "", {}

    def _send(self, handler: QuietHandler, status: int, body: bytes, ctype: str,
              headers: Optional[dict] = None) -> None:
        handler.send(status, body, ctype, {"x-amzn-RequestId": "proxy", **(headers or {})})

    def _forward(self, handler, body: bytes) -> tuple[int, list, bytes]:
        conn = http.client.HTTPConnection(*self.upstream, timeout=60)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host", "content-length",
                                                                                  "connection")}
            headers["Host"] = f"{self.upstream[0]}:{self.upstream[1]}"
            headers["Content-Length"] = str(len(body))
            conn.request(handler.command, handler.path, body=body, headers=headers)
            r = conn.getresponse()
            return r.status, [(k, v) for k, v in r.getheaders() if k.lower() not in (
                "content-length", "transfer-encoding", "connection", "server", "date")], r.read()
        finally:
            conn.close()

    def _ask_upstream(self, handler, params: dict) -> str:
        """An Auto Scaling query action asked of the upstream with the caller's signature
        headers (not recorded, no fault applied): its XML answer."""
        body = urllib.parse.urlencode({"Version": "2011-01-01", **params}).encode()
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            conn.request("POST", "/", body=body, headers={
                "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
                "Authorization": handler.headers.get("Authorization", ""),
                "X-Amz-Date": handler.headers.get("X-Amz-Date", "")})
            return conn.getresponse().read().decode("utf-8", "replace")
        finally:
            conn.close()

    def _group_bounds(self, handler, group: str) -> Optional[tuple[int, int, int]]:
        """MinSize, MaxSize and DesiredCapacity of a group, asked of the upstream (not recorded)."""
        text = self._ask_upstream(handler, {"Action": "DescribeAutoScalingGroups",
                                            "AutoScalingGroupNames.member.1": group})
        lo, hi = re.search(r"<MinSize>(\d+)</MinSize>", text), re.search(r"<MaxSize>(\d+)</MaxSize>", text)
        desired = re.search(r"<DesiredCapacity>(\d+)</DesiredCapacity>", text)
        if not lo or not hi or not desired:
            return None
        return int(lo.group(1)), int(hi.group(1)), int(desired.group(1))

    def _group_of_instance(self, handler, instance: str) -> Optional[str]:
        """The group an instance belongs to, asked of the upstream (not recorded)."""
        text = self._ask_upstream(handler, {"Action": "DescribeAutoScalingInstances",
                                            "InstanceIds.member.1": instance})
        m = re.search(r"<AutoScalingGroupName>([^<]+)</AutoScalingGroupName>", text)
        return m.group(1) if m else None

    def _strict_refusal(self, handler, service: str, action: str, params: dict) -> Optional[str]:
        if self.strict and service == "autoscaling" and action == "TerminateInstanceInAutoScalingGroup":
            return self._terminate_refusal(handler, params)
        if self.strict and service == "autoscaling" and action == "DescribeAutoScalingGroups":
            # "By default, you can only specify up to 50 names. You can optionally increase this
            # limit using the MaxRecords property" (at most 100), API_DescribeAutoScalingGroups.html;
            # moto takes any number (the message is this proxy's own)
            names = sum(1 for k in params if k.startswith("AutoScalingGroupNames.member."))
            try:
                limit = int(params.get("MaxRecords") or 50)
            except ValueError:
                limit = 50
            if limit > 100:
                return f"MaxRecords {limit} is above its maximum of 100"
            if names > limit:
                return f"{names} AutoScalingGroupNames is more than MaxRecords {limit} allows"
            return None
        if not self.strict or service != "autoscaling" or action != "SetDesiredCapacity":
            return None
        group = str(params.get("AutoScalingGroupName", ""))
        try:
            desired = int(params.get("DesiredCapacity", ""))
        except ValueError:
            return None
        bounds = self._group_bounds(handler, group)
        if bounds is None:     # what Auto Scaling answers for a group that does not exist
            return "AutoScalingGroup name not found - null"
        lo, hi, _ = bounds
        if desired > hi:
            return f"New SetDesiredCapacity value {desired} is above max value {hi} for the AutoScalingGroup."
        if desired < lo:
            return f"New SetDesiredCapacity value {desired} is below min value {lo} for the AutoScalingGroup."
        return None

    def _terminate_refusal(self, handler, params: dict) -> Optional[str]:
        """What Auto Scaling refuses of ``TerminateInstanceInAutoScalingGroup`` and moto
        accepts: no ``ShouldDecrementDesiredCapacity`` (required by the API reference),
        and a decrement below MinSize (the ValidationError reported verbatim in
        hashicorp/nomad-autoscaler#1290 and aws/aws-cli#47)."""
        flag = str(params.get("ShouldDecrementDesiredCapacity", ""))
        if flag not in ("true", "false"):
            return "1 validation error detected: Value null at 'shouldDecrementDesiredCapacity' failed to " \
                   "satisfy constraint: Member must not be null"
        if flag != "true":
            return None
        group = self._group_of_instance(handler, str(params.get("InstanceId", "")))
        bounds = self._group_bounds(handler, group) if group else None
        if bounds is None:
            return None
        lo, _, desired = bounds
        if desired <= lo:
            return (f"Currently, desiredSize equals minSize ({lo}). Terminating instance without replacement will "
                    "violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false "
                    "or lower group's min size.")
        return None

    def _handle(self, handler: QuietHandler) -> None:
        body = handler.read_body()
        service, action, params = self._identify(handler, body)
        call = Call(service, action, params, time=time.time())
        with self._lock:
            self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)
        if self.latency:
            time.sleep(self.latency)
        fault = self._take_fault(service, action)
        if fault is not None:
            call.fault = fault.kind
            if fault.kind == "drop":
                call.status = None
                handler.close_connection = True
                try:
                    handler.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if fault.kind == "status":
                call.status = fault.status
                self._send(handler, fault.status, fault.body, fault.content_type, fault.headers)
                return
            if fault.kind == "error":
                call.status = fault.status
                b, ctype = error_body(service, fault.code, fault.message, fault.status)
                self._send(handler, fault.status, b, ctype, fault.headers)
                return
            if fault.kind == "delay":
                time.sleep(fault.seconds)
        try:
            if service == "autoscaling" and action == "DescribeScalingActivities":
                group = str(params.get("AutoScalingGroupName", ""))
                with self._lock:
                    acts = self.activities.get(group)
                if acts is not None:
                    call.status = 200
                    self._send(handler, 200, activities_xml(acts), "text/xml")
                    return
            refusal = self._strict_refusal(handler, service, action, params)
            if refusal is not None:
                call.status = 400
                b, ctype = error_body(service, "ValidationError", refusal, 400)
                self._send(handler, 400, b, ctype)
                return
            status, headers, rbody = self._forward(handler, body)
        except OSError as e:
            call.status = 502
            self._send(handler, 502, f"proxy: upstream failed: {e}".encode(), "text/plain")
            return
        call.status = status
        try:
            handler.send_response(status)
            for k, v in headers:
                handler.send_header(k, v)
            handler.send_header("Content-Length", str(len(rbody)))
            handler.end_headers()
            handler.wfile.write(rbody)
        except OSError:     # the client gave up (a timeout fault)
            handler.close_connection = True
