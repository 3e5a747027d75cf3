"""The IAM policy in docs/providers/aws.md holds exactly the actions the
provider calls: every call recorded at the proxy, through every path (an
unsettled group with an activity, new instances, metrics, a write, the
refusal check), is allowed by it, and it allows nothing the provider never
calls. IAM action names are the API operation names with the service prefix
(https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2autoscaling.html;
CloudWatch's prefix is ``cloudwatch``)."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

from scalebridge.providers import MetricQuery

DOC = Path(__file__).resolve().parents[3] / "docs" / "providers" / "aws.md"


def documented_actions() -> set[str]:
    text = DOC.read_text()
    section = text[text.index("## IAM policy"):]
    block = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    policy = json.loads(block)
    out: set[str] = set()
    for st in policy["Statement"]:
        assert st["Effect"] == "Allow"
        acts = st["Action"]
        out.update([acts] if isinstance(acts, str) else acts)
    return out


def test_the_documented_policy_is_exactly_what_the_provider_calls(world, provider, proxy):
    ids = world.group("web", desired=2, max_size=10)
    now = time.time()
    world.put_cpu(ids[0], [50, 60], now)
    t = provider().target({"auto_scaling_group": "web"})
    assert t.managed_by() is None
    obs = t.observe(now)
    t.read_metrics(now, obs, [MetricQuery("cpu", "resource", {}, 300.0, 60.0, frozenset({"member_series"}))])
    t.set_size(3)
    world.set_state(world.instances()[0], "Pending")     # unsettled: the activities are asked
    t.observe(now + 15)
    t.delete_members([world.instances()[-1]], 2)         # a scale-in of a chosen instance
    used = proxy.iam_actions()
    assert "autoscaling:DescribeScalingActivities" in used and "ec2:DescribeInstances" in used
    assert used == documented_actions()
    assert not any("*" in a for a in documented_actions())
