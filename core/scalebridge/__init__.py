"""scalebridge: one autoscaling policy, every cloud.

``scalebridge.decide(request) -> response`` reproduces how Kubernetes' HPA, the
GCE autoscaler, Azure autoscale and AWS EC2 Auto Scaling decide, as a pure
function over the decision protocol (docs/protocol.md).
"""
__version__ = "0.1.0"

from . import moved as _moved  # noqa: E402
from .engine import Decider, decide, decide_all  # noqa: E402

_moved.install()   # the modules that moved still import under their old names, for one release
from .errors import PolicyError, RequestError, ScalebridgeError  # noqa: E402

__all__ = ["decide", "decide_all", "Decider", "RequestError", "PolicyError", "ScalebridgeError", "__version__"]
