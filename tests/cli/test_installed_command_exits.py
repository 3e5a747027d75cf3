"""The installed ``scalebridge`` command (``scalebridge.cli:entry``) ends its process
without freeing what the command built, and still does what an exit must: its exit
status is the command's, everything written reaches the pipe, ``atexit`` functions
run, and a thread that is not a daemon is awaited."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REQUEST = {"semantics": "kubernetes", "now": 1000.0, "current_replicas": 3,
           "policy": {"min_replicas": 1, "max_replicas": 10,
                      "metrics": [{"type": "resource", "name": "cpu",
                                   "target": {"type": "Utilization", "average_utilization": 60}}]},
           "observations": {"metrics": {"cpu": {"value": 90.0}}}}


def _command() -> str:
    exe = Path(sys.executable).with_name("scalebridge")
    assert exe.exists(), "the package is installed with its console script"
    return str(exe)


def test_every_answer_reaches_the_pipe_and_the_status_is_the_commands(tmp_path):
    stream = tmp_path / "requests.jsonl"
    stream.write_text("\n".join(json.dumps({**REQUEST, "current_replicas": 1 + k % 9}) for k in range(3000)) + "\n")
    done = subprocess.run([_command(), "decide", str(stream)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == 3000 and all("desired_replicas" in a for a in answers)
    bad = subprocess.run([_command(), "decide", str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert bad.returncode == 2 and "missing.json" in bad.stderr


def _entry(prelude: str, *args: str) -> subprocess.CompletedProcess:
    code = (f"import sys\n{prelude}\nsys.argv = ['scalebridge', *{list(args)!r}]\n"
            "from scalebridge.cli import entry\nentry()\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_atexit_functions_run():
    done = _entry("import atexit\natexit.register(lambda: print('flushed at exit', file=sys.stderr))", "--version")
    assert done.returncode == 0 and "flushed at exit" in done.stderr and done.stdout.strip()


def test_a_running_thread_that_is_no_daemon_is_awaited():
    prelude = ("import threading, time\n"
               "def late():\n    time.sleep(0.3)\n    print('the thread finished', flush=True)\n"
               "threading.Thread(target=late).start()")
    done = _entry(prelude, "validate", "/nonexistent.yaml")
    assert done.returncode == 2, done.stderr
    assert "the thread finished" in done.stdout
