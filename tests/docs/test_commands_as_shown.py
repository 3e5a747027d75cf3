"""Every shell command shown in README.md and docs/**/*.md runs as shown.

The commands are read from the documents themselves: ``sh``/``bash``/``shell``
blocks (every line), ``console`` blocks (``$ `` lines), unlabelled and ``text``
blocks and indented code (lines starting with ``scalebridge `` or
``.venv/bin/``; a line ``scalebridge <command>: …`` is a message the tool
prints, not a command). A line ending in ``\\`` continues on the next one; a
``#`` comment is stripped (and kept: a figure it cites is checked), a
comment-only line continues the comment above it.

Each command runs through ``bash`` with the installed ``.venv/bin/scalebridge``
first on ``PATH``, in a fresh ``git clone`` of this checkout (its uncommitted
changes to tracked files applied) with **nothing beside it** — no ``../shared``,
so that a document naming a file outside the repository fails here as it fails
on a newcomer's clone — and the ``.venv`` linked in, so that the documents'
relative paths work and whatever a command writes (``out/``, a state file)
stays in the clone. Every command is bounded: 90 s, 240 s for those in SLOW
(benchmarks and the World Cup replay; ``-m "not slow"`` leaves them out); a
command that would run until stopped (``run`` without ``--once`` or
``--until``) is in EXCLUDED with why. The commands of one document run
in document order in one clone: ``state show`` reads the state file an earlier
``run`` wrote. Each must exit as the document implies (0, unless it shows an
error on purpose) and print no traceback; where the document shows the output
(the lines below a command in its block, a figure in its comment, a figure
cited in the text) it is compared with what the command prints.

What does not run here is listed in EXCLUDED, each with the reason; an entry
that no document shows any more fails ``test_every_exclusion_is_still_shown``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]
VENV = ROOT / ".venv"

FENCE = re.compile(r"^\s*```\s*([\w+-]*)")
SHELL_BLOCKS = {"sh", "bash", "shell"}
LISTING_BLOCKS = {"", "text", "console"}
# in a listing, a line that starts a command (a `$ ` prompt, or the tool or the venv's python)
COMMAND_LINE = re.compile(r"^(\$ )?(scalebridge |\.venv/bin/)")
# `scalebridge decide: line 2: …`, `scalebridge run: run.yaml:9:15: …`: what the tool prints
MESSAGE_LINE = re.compile(r"^scalebridge( [a-z-]+)+: ")
INDENTED_COMMAND = re.compile(r"^ {4,}(\$ )?scalebridge ")
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Shown:
    """One command as a document shows it."""
    doc: str
    line: int
    command: str                  # continuation lines joined, the comment stripped, whitespace collapsed
    comment: str = ""
    output: list[str] = field(default_factory=list)   # the lines shown below it in its block

    @property
    def key(self) -> tuple[str, str]:
        return (self.doc, self.command)

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def split_comment(line: str) -> tuple[str, str]:
    """``cmd  # note`` → (``cmd``, ``note``): a ``#`` after whitespace and outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def commands_of(doc: str, text: str | None = None) -> list[Shown]:
    """The commands ``doc`` shows (its text read from the repository unless given)."""
    lines = ((ROOT / doc).read_text() if text is None else text).splitlines()
    found: list[Shown] = []
    fence: str | None = None
    last: Shown | None = None     # the command the next comment-only or output line belongs to
    i = 0
    while i < len(lines):
        raw, number = lines[i], i + 1
        i += 1
        m = FENCE.match(raw)
        if m:
            fence = m.group(1) if fence is None else None
            last = None
            continue
        text = raw.strip()
        if fence is None:
            if not INDENTED_COMMAND.match(raw):
                last = None
                continue
        elif fence in SHELL_BLOCKS | {"", "text"} and text.startswith("#") and last is not None:
            last.comment = f"{last.comment} {text.lstrip('#').strip()}".strip()    # the comment goes on
            continue
        elif fence in SHELL_BLOCKS:
            if not text or text.startswith("#"):
                continue
        elif fence in LISTING_BLOCKS:
            if fence == "console":
                starts = text.startswith("$ ")
            else:
                starts = bool(COMMAND_LINE.match(text)) and not MESSAGE_LINE.match(text)
            if not starts:
                if last is not None and text:
                    last.output.append(raw)
                continue
        else:
            continue
        body, comment = split_comment(text)
        while body.endswith("\\") and i < len(lines):
            more, extra = split_comment(lines[i].strip())
            i += 1
            body = body[:-1].rstrip() + " " + more
            comment = f"{comment} {extra}".strip()
        body = " ".join(body.removeprefix("$ ").split())
        last = Shown(doc, number, body, comment)
        found.append(last)
    return found


SHOWN = {doc: commands_of(doc) for doc in DOCS}
ALL = [c for doc in DOCS for c in SHOWN[doc]]


# ---------------------------------------------------------------------------------------------
# What does not run here, and why.

SYNOPSIS = "a synopsis: its upper-case words and brackets are placeholders, not a command to run"
EXCLUDED: dict[tuple[str, str], str] = {
    ("docs/backtest.md", "scalebridge backtest CONFIG|POLICY [TARGET...] [--history METRIC=FILE]... "
                         "[--recorded FILE] [--scale X]"): SYNOPSIS,
    ("docs/backtest.md", "scalebridge backtest examples/run/backtest.yaml --start -7d --end now"):
        "needs a Prometheus at prometheus:9090 and a kubeconfig; the same configuration on --history files runs "
        "below it, and the document opens with a back-test on the example trace",
    ("README.md", "make demo"): "bootstraps .venv with pip (network, a new venv); `scalebridge demo`, "
                                "which it runs, is run from docs/simulation.md",
    ("README.md", "make test"): "the whole test suite, of which this test is a part",
    ("README.md", "scalebridge observe examples/run/aws.yaml"): "needs AWS credentials and the real "
                                                                "us-east-1 Auto Scaling API",
    ("README.md", "scalebridge run examples/run/gce.yaml --once --dry-run --audit -"):
        "needs Google Application Default Credentials and the real Compute API (project my-project)",
    ("README.md", "scalebridge apply examples/run/aws.yaml --dry-run"):
        "needs AWS credentials and the real us-east-1 Auto Scaling and CloudWatch APIs (DescribeAutoScalingGroups, "
        "DescribePolicies before it writes nothing); tests/plugins/aws/test_apply_native.py runs apply against moto's server",
    ("README.md", "scalebridge run examples/run/azure.yaml --metrics-port 9090"):
        "runs until SIGTERM against the real Azure Resource Manager (needs an Azure login)",
    ("docs/run.md", "scalebridge observe examples/run/kubernetes.yaml"):
        "needs a Kubernetes cluster (the kubeconfig context `prod`)",
    ("docs/run.md", "scalebridge run examples/run/kubernetes.yaml --dry-run --once --audit -"):
        "needs a Kubernetes cluster (the kubeconfig context `prod`)",
    ("docs/run.md", "scalebridge run examples/run/kubernetes.yaml"):
        "runs until SIGTERM against a Kubernetes cluster (the kubeconfig context `prod`)",
    ("docs/run.md", "scalebridge run CONFIG [--once] [--dry-run] [--state PATH] [--audit FILE|-]"): SYNOPSIS,
    ("docs/run.md", "scalebridge observe CONFIG [TARGET...] [-o json]"): SYNOPSIS,
    ("docs/run.md", "scalebridge validate CONFIG..."): SYNOPSIS,
    ("docs/run.md", "scalebridge state show [TARGET] [--state PATH | --config CONFIG]"): SYNOPSIS,
    ("docs/run.md", "scalebridge state reset TARGET [--state PATH | --config CONFIG]"): SYNOPSIS,
    ("docs/run.md", "scalebridge pause CONFIG TARGET... [--replicas N]"): SYNOPSIS,
    ("docs/run.md", "scalebridge resume CONFIG TARGET..."): SYNOPSIS,
    ("docs/protocol.md", "scalebridge decide [FILE|-]"): SYNOPSIS,
    ("docs/protocol.md", "scalebridge decide --semantics all"):
        f"{SYNOPSIS} (the request comes on standard input)",
    ("docs/protocol.md", "scalebridge explain FILE"): SYNOPSIS,
    ("docs/protocol.md", "scalebridge decide --policy web.yaml FILE"): SYNOPSIS,
    ("docs/translate.md", "scalebridge render POLICY --to kubernetes|gce|azure|aws|keda [--strict] [--target REF]"):
        SYNOPSIS,
    ("docs/translate.md", "scalebridge import FILE --from kubernetes|gce|azure|aws|keda"): SYNOPSIS,
    ("docs/translate.md", "scalebridge apply run.yaml [--dry-run] [--state PATH]"): SYNOPSIS,
    ("docs/translate.md", "scalebridge import azuredeploy.json --from azure --parameters "
                          "@azuredeploy.parameters.json -p minInstanceCount=3"):
        "the reader's own template; tests/plugins/azure/test_arm_parameters.py runs each form on one",
    ("docs/predictive.md", "scalebridge compare my-policy.yaml --trace my-load.csv --capacity 25000 "
                           "--startup 120 --frontier"):
        "my-policy.yaml and my-load.csv are the reader's own files",
    ("docs/predictive.md", ".venv/bin/python benchmarks/frontier.py --leave-one-out --markdown loo.md "
                           "--json docs/leave-one-out.json"):
        "minutes on two quiet cores the first time (468 replays, three of the workloads weeks long), over "
        "this module's budget; test_leave_one_out_table_is_what_the_benchmark_prints checks the table against "
        "its output and replays a generated workload again",
    ("docs/plugins.md", "pip install ./examples/plugin"):
        "would install into the venv the suite runs in; the workspace installs the same package as pip lays "
        "it out (its modules and a .dist-info with its entry points) into a directory of its own on PYTHONPATH",
    ("docs/providers/aws.md", "pip install 'scalebridge[aws]'"): "installs from a package index",
    ("docs/providers/azure.md", "pip install 'scalebridge[azure]'"): "installs from a package index",
    ("docs/providers/gce.md", "pip install 'scalebridge[gce]'"): "installs from a package index",
    ("docs/providers/kubernetes.md", "pip install 'scalebridge[kubernetes]'"): "installs from a package index",
    ("docs/providers/kubernetes.md", "docker build -f deploy/Dockerfile -t scalebridge:0.1.0 ."):
        "needs Docker and a base image from a registry",
    ("docs/providers/kubernetes.md", "kubectl apply -f deploy/kubernetes/"): "needs a Kubernetes cluster",
    ("docs/providers/kubernetes.md", "helm install scalebridge deploy/helm/scalebridge --namespace scalebridge "
                                     "--create-namespace"): "needs Helm and a Kubernetes cluster",
}

# the exit status a document shows on purpose (an error it demonstrates); 0 otherwise
EXIT_SHOWN: dict[tuple[str, str], int] = {}

# over 20 s on this machine's two shared cores
SLOW = {
    ("docs/simulation.md", "scalebridge compare examples/simulate/policy.yaml examples/policies/web.yaml "
                           "--trace examples/traces/worldcup98_day46-47.csv --scale 1/60 --unit requests/s "
                           "--capacity 50 --startup 120 --duration 2d --price 0.096 --jobs 2 --plot out/wc98.png"),
    ("docs/providers/gce.md", ".venv/bin/python benchmarks/gce.py --migs 200"),
    ("docs/providers/kubernetes.md", ".venv/bin/python benchmarks/kubernetes.py --deployments 1000 --syncs 3"),
}

# columns of a shown table that are wall-clock measurements, not results: not compared
MEASURED_COLUMNS = {
    ("docs/providers/kubernetes.md", ".venv/bin/python benchmarks/kubernetes.py --deployments 1000 --syncs 3"):
        {"seconds", "syncs/s"},
}

# a bug in code that a documented command hits: (doc, command) -> the reason (xfail, strict)
KNOWN_BUGS: dict[tuple[str, str], str] = {}


# ---------------------------------------------------------------------------------------------
# Figures the text cites for a command's output, beyond its comment and the lines below it.

def _replay_row(stdout: str, semantics: str) -> list[str]:
    for line in stdout.splitlines():
        cells = line.split()
        if cells and cells[0] == semantics:
            return cells
    raise AssertionError(f"no {semantics!r} row in the replay table")


def _demo_cost(doc_text: str, stdout: str) -> None:
    """docs/simulation.md: kubernetes and gce pay "×1.8–1.9" the oracle on the demo's flash crowd."""
    cited = re.search(r"most of their ×(\d\.\d)–(\d\.\d)", doc_text)
    assert cited, "the ×oracle figures are no longer cited"
    ratios = [float(_replay_row(stdout.split("Replay scores", 1)[1], s)[2]) for s in ("kubernetes", "gce")]
    assert [f"{r:.1f}" for r in ratios] == list(cited.groups()), ratios


def _plugin_listed(doc_text: str, stdout: str) -> None:
    """docs/plugins.md: `scalebridge plugins` "lists proportional, from scalebridge_droplets"."""
    assert "lists proportional, from scalebridge_droplets" in doc_text
    assert re.search(r"^\s*proportional\s+from scalebridge_droplets\s+scalebridge_droplets\b", stdout, re.M), stdout


def _proportional_decision(doc_text: str, stdout: str) -> None:
    """docs/plugins.md: the example plugin's decision, "ceil(100 / 30) = 4 replicas"."""
    import json
    cited = re.search(r"ceil\((\d+) / (\d+)\) = (\d+) replicas", doc_text)
    assert cited, "the decision is no longer cited"
    load, per_replica, replicas = map(int, cited.groups())
    response = json.loads(stdout)
    assert response["semantics"] == "proportional"
    assert response["desired_replicas"] == replicas
    assert response["metrics"][0]["value"] == load and -(-load // per_replica) == replicas


def _readme_frontier(doc_text: str, stdout: str) -> None:
    """docs/predictive.md on the README's `compare --frontier`: "an iso-risk ratio of 0.905, not
    the table's 0.893 … the replayed peak to 895,200 (36 members)"."""
    predictive = (ROOT / "docs/predictive.md").read_text()
    text = " ".join(predictive.split())
    cited = re.search(r"prints an iso-risk ratio of (\d\.\d+), not the table's (\d\.\d+).*?"
                      r"replayed peak to ([\d,]+) \((\d+) members\)", text)
    assert cited, "docs/predictive.md no longer explains the README's ratio"
    ratio, table, peak, members = cited.groups()
    # semantics, policy, inst-h, × oracle, iso-risk
    assert _replay_row(stdout, "scalebridge")[4] == ratio
    assert f"peak {float(peak.replace(',', '')):.3e} load (needs {members} members)" in " ".join(stdout.split())
    row = next(line for line in predictive.splitlines() if line.startswith("| exponential_growth@0 |"))
    assert f"**{table}**" in row, row


CITED: dict[tuple[str, str], Callable[[str, str], None]] = {
    ("README.md", "scalebridge compare examples/predictive/policy.yaml --workload exponential_growth --peak 875000 "
                  "--capacity 25000 --startup 120 -s scalebridge --frontier"): _readme_frontier,
    ("docs/plugins.md", "scalebridge decide --semantics proportional examples/requests/external-average-value.json"):
        _proportional_decision,
    ("docs/simulation.md", "scalebridge demo"): _demo_cost,
    ("docs/plugins.md", "scalebridge plugins"): _plugin_listed,
}


# ---------------------------------------------------------------------------------------------
# Running them.

@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def clone_repository(dest: Path) -> None:
    """A fresh ``git clone`` of this checkout at ``dest``, with the checkout's uncommitted changes to
    tracked (and staged) files applied, so that the documents are checked as they stand; a file git
    does not know is not in the clone, as it would not be in anyone's."""
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(dest)], check=True,
                   capture_output=True, timeout=60)
    diff = subprocess.run(["git", "-C", str(ROOT), "diff", "HEAD", "--binary"], check=True,
                          capture_output=True, timeout=60).stdout
    if diff:
        subprocess.run(["git", "-C", str(dest), "apply", "--binary", "-"], input=diff, check=True,
                       capture_output=True, timeout=60)


class Workspace:
    """A fresh clone of the repository, where one document's commands run: nothing beside it (no
    ``../shared``), the installed ``.venv`` linked in as ``make`` would have made it."""

    def __init__(self, base: Path, doc: str):
        self.doc = doc
        self.parent = base
        self.cwd = base / "repo"
        clone_repository(self.cwd)
        assert sorted(p.name for p in base.iterdir()) == ["repo"], "the clone must have nothing beside it"
        (self.cwd / ".venv").symlink_to(VENV)
        self.env = dict(os.environ)
        self.env.update(PATH=f"{self.cwd / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                        VIRTUAL_ENV=str(VENV), COLUMNS="120", LINES="50", TERM="dumb", NO_COLOR="1",
                        PYTHONHASHSEED="0")
        for name in ("FORCE_COLOR", "PYTHONPATH", "PYTHONHOME"):
            self.env.pop(name, None)
        if doc == "docs/plugins.md":
            self.env["PYTHONPATH"] = str(self._install_example_plugin())
        self.results: dict[int, Ran] = {}

    def _install_example_plugin(self) -> Path:
        """examples/plugin as pip installs it: the package and a .dist-info naming its entry points."""
        project = tomllib.loads((self.cwd / "examples/plugin/pyproject.toml").read_text())["project"]
        site = self.parent / "site-packages"
        for pkg in (self.cwd / "examples/plugin").iterdir():
            if pkg.is_dir() and (pkg / "__init__.py").exists():
                shutil.copytree(pkg, site / pkg.name)
        dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                                       f"Version: {project['version']}\n")
        groups = project.get("entry-points", {})
        (dist / "entry_points.txt").write_text("".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for group, eps in groups.items()))
        return site

    def run(self, cmd: Shown, timeout: float) -> Ran:
        try:
            proc = subprocess.run(["bash", "-c", cmd.command], cwd=self.cwd, env=self.env, capture_output=True,
                                  text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"{cmd.id}: `{cmd.command}` still running after {timeout:.0f} s ({e.stderr!r:.300})")
        return Ran(proc.returncode, proc.stdout, proc.stderr)

    def result(self, cmd: Shown) -> Ran:
        """``cmd``'s result, after every command shown before it in the document has run here."""
        for earlier in SHOWN[self.doc]:
            if earlier.key in EXCLUDED:
                continue
            if earlier.line not in self.results:
                self.results[earlier.line] = self.run(earlier, 240 if earlier.key in SLOW else 90)
            if earlier.line == cmd.line:
                break
        return self.results[cmd.line]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    made: dict[str, Workspace] = {}

    def get(doc: str) -> Workspace:
        if doc not in made:
            made[doc] = Workspace(tmp_path_factory.mktemp(re.sub(r"\W", "_", doc)), doc)
        return made[doc]
    return get


def _params():
    for cmd in ALL:
        if cmd.key in EXCLUDED:
            continue
        marks = []
        if cmd.key in SLOW:
            marks.append(pytest.mark.slow)
        if cmd.key in KNOWN_BUGS:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[cmd.key]))
        yield pytest.param(cmd, id=cmd.id, marks=marks)


FIGURE = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")


def check_shown_table(cmd: Shown, out: str) -> None:
    """The lines shown below a command: its header line is printed, and each shown row below it
    is the printed row in that place, column for column (wall-clock columns aside)."""
    measured = MEASURED_COLUMNS.get(cmd.key, set())
    header = cmd.output[0].split()
    printed = out.splitlines()
    at = next((n for n, line in enumerate(printed) if line.split() == header), None)
    assert at is not None, f"{cmd.id}: the shown header {cmd.output[0].strip()!r} is not printed"
    for offset, shown in enumerate(cmd.output[1:], 1):
        assert at + offset < len(printed), f"{cmd.id}: shown row {shown.strip()!r} is not printed"
        want = shown.split(maxsplit=len(header) - 1)
        got = printed[at + offset].split(maxsplit=len(header) - 1)
        for column, w, g in zip(header, want, got, strict=True):
            if column not in measured:
                assert w == g, f"{cmd.id}: {column} shown {w!r}, printed {g!r} (row {shown.strip()!r})"


@pytest.mark.parametrize("cmd", list(_params()))
def test_command_runs_as_shown(cmd: Shown, workspace) -> None:
    ran = workspace(cmd.doc).result(cmd)
    printed = ran.stdout + ran.stderr
    assert TRACEBACK not in printed, f"{cmd.id}: `{cmd.command}` printed a traceback:\n{printed[-2000:]}"
    want = EXIT_SHOWN.get(cmd.key, 0)
    assert ran.returncode == want, (f"{cmd.id}: `{cmd.command}` exited {ran.returncode}, the document "
                                    f"implies {want}:\n{ran.stderr[-2000:]}")
    for figure in FIGURE.findall(cmd.comment):
        assert re.search(rf"(?<![\w.]){re.escape(figure)}(?![\w.])", printed), \
            f"{cmd.id}: its comment cites {figure}, which `{cmd.command}` does not print"
    if cmd.output:
        check_shown_table(cmd, ran.stdout)
    if cmd.key in CITED:
        CITED[cmd.key]((ROOT / cmd.doc).read_text(), ran.stdout)


# ---------------------------------------------------------------------------------------------
# The lists above against the documents, and the extraction itself.

def test_every_exclusion_is_still_shown() -> None:
    shown = {c.key for c in ALL}
    for table in (EXCLUDED, EXIT_SHOWN, SLOW, MEASURED_COLUMNS, KNOWN_BUGS, CITED):
        stale = [key for key in table if key not in shown]
        assert not stale, f"listed here but no document shows it: {stale}"


def test_no_document_needs_a_file_beside_the_repository() -> None:
    """A newcomer's clone failed on docs/simulation.md's ``compare --trace ../shared/traces/…``:
    no document names a path outside the repository (the commands run on a clone with nothing
    beside it, above), and every file a command names under examples/ is in the repository."""
    for doc in DOCS:
        text = (ROOT / doc).read_text()
        assert "../shared" not in text and "/work/" not in text, doc
    for cmd in ALL:
        if cmd.key in EXCLUDED:
            continue
        for path in re.findall(r"(?<![\w/.])examples/[\w./-]+\.\w+", cmd.command):
            assert (ROOT / path).is_file(), f"{cmd.id}: {path} is not in the repository"


def test_every_shown_output_has_a_command_to_compare() -> None:
    """A command's shown output is only checked when the command runs here."""
    unchecked = [c.id for c in ALL if c.output and c.key in EXCLUDED]
    assert not unchecked, unchecked


def test_the_extraction_reads_the_documents_as_written() -> None:
    readme = {c.command: c for c in SHOWN["README.md"]}
    compare = next(c for c in readme.values() if c.command.startswith("scalebridge compare "))
    assert compare.command.endswith("-s scalebridge --frontier")                     # joined at the `\`
    assert "reactive frontier" in compare.comment                                    # the comment's 2nd line
    assert "scalebridge schema > policy.schema.json" in readme
    run_md = [c.command for c in SHOWN["docs/run.md"]]
    assert not any(c.startswith("scalebridge run: ") for c in run_md)                # messages, not commands
    assert "scalebridge state reset TARGET [--state PATH | --config CONFIG]" in run_md                    # indented code
    bench = next(c for c in SHOWN["docs/providers/kubernetes.md"] if "benchmarks/kubernetes.py" in c.command)
    assert bench.output[0].split()[:2] == ["sync", "seconds"] and len(bench.output) == 4
    assert split_comment("a '#b' # c") == ("a '#b'", "c")


def test_the_extraction_reads_each_kind_of_block() -> None:
    doc = "\n".join([
        "Prose naming scalebridge run is not a command.", "",
        "```console", "$ scalebridge decide x.json   # 0.5", '{"desired_replicas": 2}', "```", "",
        "```bash", "scalebridge simulate p.yaml \\", "    --capacity 10   # first", "# second", "make x", "```", "",
        "```", "scalebridge explain y.json", "scalebridge explain: $.now: required", "```", "",
        "```yaml", "scalebridge: not a command", "```", "",
        "    scalebridge state show [TARGET] --state PATH", "",
    ])
    got = [(c.line, c.command, c.comment, c.output) for c in commands_of("x.md", doc)]
    assert got == [
        (4, "scalebridge decide x.json", "0.5", ['{"desired_replicas": 2}']),
        (9, "scalebridge simulate p.yaml --capacity 10", "first second", []),
        (12, "make x", "", []),
        (16, "scalebridge explain y.json", "", ["scalebridge explain: $.now: required"]),
        (24, "scalebridge state show [TARGET] --state PATH", "", []),
    ]


def test_leave_one_out_table_is_what_the_benchmark_prints(monkeypatch, tmp_path) -> None:
    """docs/predictive.md's leave-one-out tables are what `benchmarks/frontier.py --leave-one-out`
    printed into docs/leave-one-out.json, figure for figure; and a generated workload replayed
    again (the traces' replays take minutes) still gives the JSON's numbers for every candidate."""
    import importlib.util
    import json
    spec = importlib.util.spec_from_file_location("frontier_benchmark", ROOT / "benchmarks" / "frontier.py")
    frontier = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(frontier)
    result = json.loads((ROOT / "docs" / "leave-one-out.json").read_text())
    doc = (ROOT / "docs/predictive.md").read_text()
    for table in (frontier.loo_markdown(result), frontier.matrix_markdown(result)):
        for line in table.strip().splitlines():
            assert line in doc, line
    assert set(result["candidates"]) == set(frontier.CANDIDATES)
    monkeypatch.setattr(frontier, "CACHE", tmp_path)
    wid = "flash_crowd@1"
    _, reactive = frontier._reactive_task((wid, str(frontier.DEFAULT_POLICY)))
    for name, overrides in frontier.CANDIDATES.items():
        _, _, pred = frontier._predictive_task((wid, name, overrides, str(frontier.DEFAULT_POLICY)))
        scored = frontier._scored(pred, reactive)
        recorded = result["matrix"][f"{wid}|{name}"]
        assert (round(scored["ratio"], 6), scored["under"]) == (round(recorded["ratio"], 6), recorded["under"]), name