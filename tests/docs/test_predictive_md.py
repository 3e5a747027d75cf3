"""docs/predictive.md against the tool: its YAML block and example policies, the Disabled
replay, the benchmark's flags."""

import re
from pathlib import Path

from scalebridge.policyfile import load_policy_file, parse_policy_text


ROOT = Path(__file__).resolve().parents[2]


def read(name: str) -> str:
    return (ROOT / name).read_text()


def yaml_blocks(name: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", read(name), re.S)


BOUNDS = "name: t\nmin_replicas: 1\nmax_replicas: 20\n"


def test_predictive_md_yaml_block_validates():
    block = yaml_blocks("docs/predictive.md")[0]
    p = parse_policy_text(BOUNDS + "metrics:\n  - type: pods\n    name: load\n"
                          "    target: {type: AverageValue, average_value: 22500}\n" + block)
    assert p.predictive.mode == "ForecastAndScale"


def test_predictive_md_example_policies_match_prose():
    main = load_policy_file(ROOT / "examples/predictive/policy.yaml").predictive
    noise = load_policy_file(ROOT / "examples/predictive/count-noise.yaml").predictive
    assert (main.target_utilization, main.margin_quantile, main.lead_time_seconds) == (0.7, 0.9995, 120)
    assert (main.scale_down_rate_percent, main.capacity_per_replica) == (5, 25000)
    assert main.extrapolate_ramps is True
    assert (noise.margin_quantile, noise.extrapolate_ramps) == (0.97, False)
    assert (main.reactive_baseline_utilization, noise.reactive_baseline_utilization) == (0.6, None)


def test_predictive_md_disabled_replay_test_exists():
    assert "Disabled" in read("tests/simulator/test_predictive_replay.py")


def test_predictive_md_benchmark_flags(capsys):
    for script, flags in (("benchmarks/frontier.py", ("--plot", "--margin-quantile", "--policy", "--leave-one-out")),
                          ("benchmarks/forecast_accuracy.py", ("--lead", "--guard"))):
        src = read(script)
        for flag in flags:
            assert f'"{flag}"' in src, (script, flag)
