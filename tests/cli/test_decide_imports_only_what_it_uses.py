"""`scalebridge decide` from a shell loads the decision core and the plugins, not
the simulator, the controller or the HTTP stack: ops scripts call it in loops, and
each start pays for every module imported (issue #29)."""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import contextlib, io, sys
from scalebridge.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["decide", sys.argv[1]])
heavy = [m for m in ("numpy", "sqlite3", "scalebridge.simulator", "scalebridge.controller", "scalebridge.backtest",
                     "scalebridge.translate.cli", "urllib.request", "ssl") if m in sys.modules]
print(code, out.getvalue().count("\\n"), ",".join(heavy))
"""


def test_decide_imports_neither_the_simulator_nor_the_controller_nor_http():
    proc = subprocess.run([sys.executable, "-c", PROBE, str(REPO / "examples" / "requests" / "pods.json")],
                          capture_output=True, text=True, check=True)
    code, lines, heavy = (proc.stdout.strip().split(" ") + [""])[:3]
    assert (code, lines, heavy) == ("0", "1", "")


def test_the_other_commands_are_still_there_and_decide_still_answers(tmp_path):
    help_text = subprocess.run([sys.executable, "-m", "scalebridge.cli", "--help"], capture_output=True, text=True,
                               check=True).stdout
    for command in ("decide", "simulate", "compare", "run", "backtest", "render"):
        assert command in help_text
    out = subprocess.run([sys.executable, "-m", "scalebridge.cli", "decide", "--semantics", "all",
                          str(REPO / "examples" / "requests" / "pods.json")], capture_output=True, text=True,
                         check=True).stdout
    assert [json.loads(line)["semantics"] for line in out.splitlines()] == \
        ["kubernetes", "gce", "azure", "aws", "scalebridge"]
