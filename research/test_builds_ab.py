"""research/builds_ab.py, two checkouts interleaved: its order, its resuming, and its
verdicts (with a fake `vnetbench run` writing results; no engine, no subprocess)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from research.builds_ab import (
    BRINGUPS,
    Session,
    load_bringups,
    plan,
    report,
    run,
)
from vnetbench.analysis.results import ResultSet
from vnetbench.core.outcome import State
from vnetbench.core.schema import CellKey


def checkout(root: Path, name: str) -> Path:
    (root / name / "vnetbench").mkdir(parents=True)
    (root / name / "vnetbench" / "__init__.py").write_text("")
    return root / name


class FakeRun:
    """Stands in for `vnetbench run`: writes a results directory under --out whose
    tcp_mbit is `tcp[checkout name]`, a little different each round; fails on call
    `fail_at` (counting from 1)."""

    def __init__(self, tcp: dict[str, float], fail_at: int = 0,
                 state: dict[int, State] | None = None) -> None:
        self.tcp, self.fail_at, self.state = tcp, fail_at, state or {}
        self.calls: list[tuple[list[str], Path, dict[str, str]]] = []

    def __call__(self, command: list[str], cwd: Path, env: dict[str, str], log: Path) -> int:
        self.calls.append((command, cwd, env))
        if len(self.calls) == self.fail_at:
            return 2
        out = Path(command[command.index("--out") + 1])
        overlay = command[command.index("--overlay") + 1]
        round_no = int(out.name[1:3])
        results = ResultSet(out / "two-sites-run")
        results.directory.mkdir()
        value = self.tcp[cwd.name] * (1 + 0.01 * (round_no % 3))
        results.add(CellKey("run", "throughput", overlay), 1,
                    {"tcp_mbit": (value, "Mbit/s")}, {},
                    state=self.state.get(len(self.calls), State.OK))
        results.write()
        return 0


def session(tmp_path: Path, rounds: int = 6, overlays: tuple[str, ...] = ("baseline",),
            extra: tuple[str, ...] = ("--seconds", "3")) -> Session:
    return Session(str(checkout(tmp_path, "old")), str(checkout(tmp_path, "new")),
                   "throughput", overlays, rounds, extra)


def found(path: Path) -> Path:
    return path / "vnetbench"


def test_rounds_alternate_which_build_goes_first_with_every_overlay_in_each() -> None:
    names = [item.name for item in plan(3, ["baseline", "wireguard"])]
    assert names == ["r01-baseline-A", "r01-baseline-B", "r01-wireguard-A", "r01-wireguard-B",
                     "r02-baseline-B", "r02-baseline-A", "r02-wireguard-B", "r02-wireguard-A",
                     "r03-baseline-A", "r03-baseline-B", "r03-wireguard-A", "r03-wireguard-B"]


def test_each_bring_up_runs_its_checkouts_code_into_its_own_directory(tmp_path: Path) -> None:
    given = session(tmp_path, rounds=1)
    fake = FakeRun({"old": 100, "new": 100})
    run(given, tmp_path / "out", fake, found)
    (a_command, a_cwd, a_env), (b_command, b_cwd, b_env) = fake.calls
    assert (a_cwd.name, b_cwd.name) == ("old", "new")
    assert a_env["PYTHONPATH"] == given.old and b_env["PYTHONPATH"] == given.new
    assert a_command[1:5] == ["-m", "vnetbench", "run", "throughput"]
    assert {"--passes", "--no-baseline", "--seconds"} <= set(a_command)
    assert a_command[a_command.index("--out") + 1] != b_command[b_command.index("--out") + 1]


def test_a_session_resumes_after_the_bring_ups_already_on_disk(tmp_path: Path) -> None:
    given, out = session(tmp_path, rounds=6), tmp_path / "out"
    with pytest.raises(SystemExit):
        run(given, out, FakeRun({"old": 100, "new": 100}, fail_at=5), found)
    with (out / BRINGUPS).open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["exit_code"] for row in rows] == ["0", "0", "0", "0", "2"]
    assert rows[0]["command"].endswith(f"--out {out / 'bringups' / 'r01-baseline-A'}")
    again = FakeRun({"old": 100, "new": 100})
    ran = run(given, out, again, found)
    # the failed bring-up (round 3's A, its second) is tried again; the four done are not
    assert [r.name for r in ran][:2] == ["r03-baseline-A", "r03-baseline-B"]
    assert len(again.calls) == 12 - 4
    assert run(given, out, FakeRun({"old": 100, "new": 100}), found) == []


def test_resuming_with_other_arguments_is_refused(tmp_path: Path) -> None:
    given, out = session(tmp_path, rounds=1), tmp_path / "out"
    run(given, out, FakeRun({"old": 100, "new": 100}), found)
    other = Session(given.old, given.new, "room", given.overlays, 1, given.extra)
    with pytest.raises(SystemExit) as refused:
        run(other, out, FakeRun({"old": 100, "new": 100}), found)
    assert refused.value.code == 2


def test_a_checkout_whose_code_would_not_be_imported_is_refused(tmp_path: Path) -> None:
    given = session(tmp_path, rounds=1)
    with pytest.raises(SystemExit) as refused:
        run(given, tmp_path / "out", FakeRun({}), lambda path: Path("/work/main/vnetbench"))
    assert refused.value.code == 2
    with pytest.raises(SystemExit) as refused:
        run(Session(str(tmp_path), given.new, "throughput", ("baseline",), 1, ()),
            tmp_path / "out", FakeRun({}), found)
    assert refused.value.code == 2


def test_b_twenty_percent_slower_is_worse(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(session(tmp_path), out, FakeRun({"old": 100, "new": 80}), found)
    frame = load_bringups(out).frame
    assert sorted(set(zip(frame["variant"], frame["var_round"], strict=True))) == [
        (arm, r) for arm in "AB" for r in range(1, 7)]
    line = next(x for x in report(out, 0.05).splitlines() if "tcp_mbit" in x)
    assert "| baseline |" in line and "| worse |" in line and "0.800" in line


def test_identical_builds_are_no_change(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(session(tmp_path), out, FakeRun({"old": 100, "new": 100}), found)
    line = next(x for x in report(out, 0.05).splitlines() if "tcp_mbit" in x)
    assert "| no change |" in line and "| 6 |" in line


def test_a_bring_up_with_a_pass_not_ok_is_left_out_and_counted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(session(tmp_path), out, FakeRun({"old": 100, "new": 100}, state={3: State.DEAD}),
        found)
    loaded = load_bringups(out)
    assert loaded.excluded == ["r02-baseline-B"]
    assert len(loaded.frame) == 11
    text = report(out, 0.05)
    assert "excluded (a pass not ok): 1: r02-baseline-B" in text
    assert "| 5 |" in next(x for x in text.splitlines() if "tcp_mbit" in x)
