"""Debian's ``prometheus`` (2.42 or later) on 127.0.0.1, with history backfilled
through ``promtool tsdb create-blocks-from openmetrics`` into a temporary storage
directory: started by a test, stopped when it ends.

``.ci/run`` installs the package when it runs as root and it is missing; where it
cannot be installed (not root, no Debian), :func:`real_prometheus` skips the test
saying so."""
from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

#: the oldest Prometheus these tests are written against (Debian 12's package)
MINIMUM = (2, 42)


def _binaries() -> tuple[str, str]:
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not prometheus or not promtool:
        pytest.skip("the real-Prometheus test needs Debian's `prometheus` package (prometheus and promtool on "
                    "PATH): `apt-get install -y prometheus` as root; .ci/run installs it when it runs as root")
    out = subprocess.run([prometheus, "--version"], capture_output=True, text=True).stdout + \
        subprocess.run([prometheus, "--version"], capture_output=True, text=True).stderr
    m = re.search(r"version (\d+)\.(\d+)", out)
    if m is None or (int(m.group(1)), int(m.group(2))) < MINIMUM:
        pytest.skip(f"Prometheus {'.'.join(map(str, MINIMUM))} or later is needed, found: {out.splitlines()[:1]}")
    return prometheus, promtool


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def real_prometheus(tmp_path: Path, openmetrics_text: str, retention: str = "100y") -> Iterator[str]:
    """The URL of a real Prometheus serving the backfilled ``openmetrics_text``."""
    prometheus, promtool = _binaries()
    data = tmp_path / "prometheus-data"
    source = tmp_path / "history.om"
    source.write_text(openmetrics_text, encoding="utf-8")
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr or done.stdout
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\n", encoding="utf-8")   # scrapes nothing
    port = _free_port()
    log = open(tmp_path / "prometheus.log", "w")
    proc = subprocess.Popen([prometheus, f"--config.file={config}", f"--storage.tsdb.path={data}",
                             f"--storage.tsdb.retention.time={retention}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise AssertionError("prometheus did not become ready: "
                                     + (tmp_path / "prometheus.log").read_text()[-2000:])
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
