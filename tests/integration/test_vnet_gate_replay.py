"""The CI gate vNet can adopt: docs/ci/vnet-gate.yml passes actionlint (with shellcheck
on its steps) and runs scripts/vnet-gate for its main step; the script is shellcheck
clean and, given two sets of images, runs one `ab` session per scenario with A = base
and B = the change, writes report.html, the summary and the history, and exits as ab
does. The engine is replaced only in `ab`: a replay of recorded sessions
(tests/recorded_ab.py) that writes its summary with the real `ab --summary` code;
`report` and `history` are vnetbench's own.

Here, not under tests/unit, though it needs no engine: it runs the script end to end
through five real `vnetbench` processes (14 s), which the unit suite's time could not
afford."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.recorded_ab import recorded_session, session_copy

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs" / "ci" / "vnet-gate.yml"
SCRIPT = ROOT / "scripts" / "vnet-gate"
BASE = "conductor=vnet-gate/conductor:base,switch=vnet-gate/switch:base,agent=vnet-gate/agent:base"
PR = "vnet-gate/runtime:pr"

REPLAY_AB = '''
import json, os, shutil, sys
from pathlib import Path

args = sys.argv[1:]
if args[0] != "ab":
    from vnetbench.cli import app
    sys.argv = ["vnetbench", *args]
    app()
scenario = args[1]
with open(os.environ["REPLAY_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
recorded = Path(os.environ["REPLAY_SESSIONS"]) / scenario
if not recorded.is_dir():
    print(f"no scenario named {scenario!r}", file=sys.stderr)
    sys.exit(2)
session = Path(args[args.index("--out") + 1]) / "two-sites-20261201-093000-ab"
shutil.copytree(recorded, session)
header = json.loads((session / "run.json").read_text())
header["scenario"] = scenario
(session / "run.json").write_text(json.dumps(header))
from vnetbench.report.ab import verdict_summary
from vnetbench.report.gate_summary import append_summary
append_summary(session, Path(args[args.index("--summary") + 1]))
sys.exit(1 if verdict_summary(session)[2] else 0)
'''


def tool(name: str) -> str:
    """A lint tool of the test extra: beside this Python, else on PATH; never skipped."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]' (pyproject's test extra)"
    return found


def test_the_workflow_passes_actionlint_with_shellcheck_on_its_steps() -> None:
    result = subprocess.run([tool("actionlint"), "-shellcheck", tool("shellcheck"),
                             str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_script_passes_shellcheck() -> None:
    result = subprocess.run([tool("shellcheck"), str(SCRIPT)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout


def test_the_workflow_runs_the_script_and_gates_on_its_status() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key `on` as True
    steps = workflow["jobs"]["gate"]["steps"]
    runs = {step.get("id", step.get("name")): step.get("run", "") for step in steps}
    assert "vnetbench/scripts/vnet-gate --base base --pr pr" in runs["gate"]
    assert "--history vnet-history" in runs["gate"]
    assert "|| status=$?" in runs["gate"]  # the step records the status, later steps run
    assert any('>> "$GITHUB_STEP_SUMMARY"' in run for run in runs.values())
    fail = next(s for s in steps if s.get("name") == "Fail on a judged regression")
    assert fail["if"] == "steps.gate.outputs.status != '0'"
    used = [step["uses"] for step in steps if "uses" in step]
    assert {u.split("@")[0] for u in used} >= {"actions/checkout", "actions/cache/restore",
                                               "actions/cache/save", "actions/upload-artifact"}
    assert all(re.fullmatch(r"[\w/-]+@v\d+", u) for u in used), used  # major versions


@pytest.fixture
def replay(tmp_path: Path) -> dict[str, str]:
    """The environment of a gate run whose `ab` replays recorded sessions: throughput
    with B's TCP rate cut 20 % (a regression), join with every pass dead."""
    sessions = tmp_path / "sessions"
    recorded_session(session_copy(sessions, "throughput"), b_tcp_factor=0.8)
    recorded_session(session_copy(sessions, "join"), state="path dead")
    for noise in sessions.glob("*/noise.json"):  # an A/B has no noise floor of its own
        noise.unlink()
    fake = tmp_path / "replay_ab.py"
    fake.write_text(REPLAY_AB)
    return {**os.environ, "REPLAY_SESSIONS": str(sessions),
            "REPLAY_LOG": str(tmp_path / "ab-calls.jsonl"),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "DOCKER_HOST": "unix:///nonexistent", "VNETBENCH": f"{sys.executable} {fake}"}


def gate(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "--vnetbench", env["VNETBENCH"], *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_the_gate_runs_each_scenario_as_ab_and_exits_on_the_regression(
        replay: dict[str, str], tmp_path: Path) -> None:
    out, history = tmp_path / "gate", tmp_path / "history"
    # an earlier gate's throughput session, kept: with this one, a series to draw
    earlier = Path(replay["REPLAY_SESSIONS"]) / "throughput"  # the recorded session
    kept_before = history / "two-sites-20261124-093000-ab-throughput"
    kept_before.mkdir(parents=True)
    for name in ("run.json", "results.parquet", "verdicts.csv"):
        shutil.copy(earlier / name, kept_before / name)
    result = gate(replay, "--base", f"images:{BASE}", "--pr", f"images:{PR}",
                  "--scenarios", "throughput,join", "--rounds", "6", "--out", str(out),
                  "--history", str(history), "--label", "PR 7")
    assert result.returncode == 1, result.stderr
    calls = [json.loads(line) for line in Path(replay["REPLAY_LOG"]).read_text().splitlines()]
    assert [c[1] for c in calls] == ["throughput", "join"]
    for call in calls:
        arms = " ".join(call)
        assert f"--a overlay=vnet --a vnet-image={BASE} --b overlay=vnet --b vnet-image={PR}" \
            in arms and "--rounds 6" in arms
    summary = (out / "summary.md").read_text()
    assert summary.startswith("## vNet performance gate: PR 7\n")
    assert summary.index("### throughput: regression") < summary.index("### join: cannot judge")
    assert summary.rstrip().endswith("Exit status 1.")
    for scenario in ("throughput", "join"):
        session = out / scenario / "two-sites-20261201-093000-ab"
        assert (session / "report.html").stat().st_size > 0
        kept = history / f"{session.name}-{scenario}"
        # what history reads, not the session's bulk (runs/, report.html)
        assert sorted(p.name for p in kept.iterdir()) == ["results.parquet", "run.json",
                                                          "verdicts.csv"]
    assert (out / "history" / "history.html").exists()


def test_a_session_that_fails_makes_the_gate_incomplete(replay: dict[str, str],
                                                        tmp_path: Path) -> None:
    out = tmp_path / "gate"
    result = gate(replay, "--base", f"images:{BASE}", "--pr", f"images:{PR}",
                  "--scenarios", "join,flood", "--out", str(out))
    assert result.returncode == 2, result.stderr
    summary = (out / "summary.md").read_text()
    assert "### join: cannot judge" in summary and "### flood: did not complete" in summary
    assert "**The gate is incomplete**: flood did not complete." in summary


def test_usage_mistakes_exit_2_before_anything_runs(replay: dict[str, str],
                                                    tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "summary.md").write_text("an earlier run\n")
    for args, said in [(["--base", f"images:{BASE}"], "give both --base"),
                       (["--base", "x", "--pr", "y", "--build", "make"], "--build make"),
                       (["--base", f"images:{BASE}", "--pr", f"images:{PR}", "--out",
                         str(tmp_path / "used")], "is not empty"),
                       (["--base", str(tmp_path / "nothing"), "--pr", f"images:{PR}",
                         "--out", str(tmp_path / "new")], "no such vNet checkout"),
                       (["--base", f"images:{BASE}", "--pr", f"images:{PR}", "--scenarios",
                         ""], "names no scenario"),
                       (["--base", f"images:{BASE}", "--pr", f"images:{PR}", "--scenarios",
                         "throughput, join"], "' join' is no scenario's name")]:
        result = gate(replay, *args)
        assert result.returncode == 2 and said in result.stderr, (args, result.stderr)
    assert not Path(replay["REPLAY_LOG"]).exists()  # no session was started
