"""calibrate's two-router path rounds: vnetbench's path and the bare ones measured in
turn while all are up, the first of each round alternating, each round's figures
kept together (the engine's calls faked, their output recorded: tests/data/)."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from vnetbench.errors import EnvironmentProblem
from vnetbench.measure.bare import BARE_PATHS_ROUND, READ_RULES
from vnetbench.runs import calibration
from vnetbench.runs.targets import path_figures, without_nan

DATA = Path(__file__).parents[2] / "data"
SAVED = (DATA / "shaping" / "as-planned.txt").read_text().split("@@vnetbench-section@@")[1]


class Runtime:
    """The engine calls path_rounds makes, each logged; the tools' output is marked as
    the scripts mark it, with recorded ping and iperf3 output inside."""

    def __init__(self, saved: str = SAVED) -> None:
        self.saved = saved
        self.ran: list[str] = []
        self.ping = (DATA / "ping-20.txt").read_text()
        self.iperf = (DATA / "iperf3-tcp-2s.json").read_text()

    def marked(self, variant: str, number: str) -> str:
        return (f"--- ping {variant} round {number} ---\n{self.ping}--- end ---\n"
                f"--- iperf3 {variant} round {number} ---\n{self.iperf}\n--- end ---\n")

    def run_tool(self, target: str, tool: Any) -> Any:
        script = tool.argv[2]
        if script == READ_RULES:
            self.ran.append(f"rules of {target}")
            return SimpleNamespace(stdout=self.saved, exit_code=0)
        number = tool.argv[5]
        self.ran.append(f"vnetbench {number} from {target} to {tool.argv[4]}")
        return SimpleNamespace(stdout=self.marked("vnetbench", number), exit_code=0)

    def start_tool(self, target: str, tool: Any) -> str:
        self.ran.append(f"server in {target}")
        return str(tool.name)

    def start_helper(self, tool: Any) -> str:
        self.ran.append("helper")
        return str(tool.name)

    def execute(self, name: str, argv: list[str]) -> Any:
        if argv[2] != BARE_PATHS_ROUND:
            self.ran.append(f"set-up with {argv[2].count('iptables-restore <<')} rule sets")
            return SimpleNamespace(stdout="", stderr="", exit_code=0)
        number, variants = argv[4], argv[7:]
        self.ran.append(f"bare {number}: {' '.join(variants)}")
        return SimpleNamespace(stdout="".join(self.marked(v, number) for v in variants),
                               exit_code=0)

    def remove(self, name: str) -> None:
        self.ran.append(f"removed {name}")


def rounds_of(runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              count: int) -> list[Any]:
    @contextmanager
    def brought_up(topology: Any, directory: Path, images: Any) -> Iterator[dict[str, Any]]:
        runtime.ran.append(f"up {topology.name}")
        prepared = SimpleNamespace(topology=topology, overlay=SimpleNamespace(
            target_address=lambda topology, plan, agent: f"address of {agent}"))
        stack = SimpleNamespace(
            container=lambda service: f"r1-{service}", rendered=SimpleNamespace(plan=None),
            containers=lambda role: [SimpleNamespace(name=f"r1-router-{role}{n}")
                                     for n in (2, 1)])
        try:
            yield {"run_id": "r1", "where": (prepared, stack)}
        finally:  # as running's teardown
            runtime.ran.append("down")

    monkeypatch.setattr(calibration, "brought_up", brought_up)
    return calibration.path_rounds(runtime, tmp_path, None, 5.0, count)  # type: ignore[arg-type]


def test_one_stack_and_one_helper_for_every_round_in_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules read from the stack's first agent and router, copied into B's four
    namespaces; vnetbench's path first in odd rounds, last in even ones, the bare
    paths in one call each round; every round kept, and each round's order with it."""
    runtime = Runtime()
    rounds = rounds_of(runtime, tmp_path, monkeypatch, 3)
    assert runtime.ran == [
        "up calibrate-rounds", "rules of r1-agent1", "rules of r1-router-switch1",
        "server in r1-agent2", "helper", "set-up with 4 rule sets",
        "vnetbench 1 from r1-agent1 to address of agent2", "bare 1: rules off",
        "bare 2: off rules", "vnetbench 2 from r1-agent1 to address of agent2",
        "vnetbench 3 from r1-agent1 to address of agent2", "bare 3: rules off",
        f"removed {tmp_path.name}-bare-paths", "removed r1-rounds-server", "down"]
    assert [r.order for r in rounds] == [("vnetbench", "rules", "off"),
                                         ("off", "rules", "vnetbench"),
                                         ("vnetbench", "rules", "off")]
    assert all(r.testbed == r.bare_rules == r.bare_off and r.testbed[0] == 0.040
               for r in rounds)
    assert (tmp_path / "path-rounds.txt").read_text().count("--- iperf3 ") == 9
    (_, tcp, *_) = path_figures(rounds)
    assert tcp.value == pytest.approx(1.0) and tcp.met is True


def test_without_the_engines_rules_only_the_bare_path_without_them_is_measured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = Runtime(saved="*filter\nCOMMIT\n")
    rounds = rounds_of(runtime, tmp_path, monkeypatch, 2)
    assert "set-up with 0 rule sets" in runtime.ran and "bare 1: off" in runtime.ran
    assert all(r.bare_rules == (None, None) and r.bare_off[1] for r in rounds)
    (_, tcp, _, plain) = path_figures(rounds)
    assert tcp.value is None and tcp.met is None and plain.value == pytest.approx(1.0)


def test_bare_paths_that_cannot_be_built_are_the_environments_and_leave_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper's set-up failing (a kernel without bridge netfilter, say) is exit 3's
    EnvironmentProblem naming what it said; the helper and the server are removed."""
    runtime = Runtime()

    def refused(name: str, argv: list[str]) -> Any:
        runtime.ran.append("set-up")
        return SimpleNamespace(stdout="", stderr="RTNETLINK answers: Operation not permitted",
                               exit_code=2)

    monkeypatch.setattr(runtime, "execute", refused)
    with pytest.raises(EnvironmentProblem, match="Operation not permitted"):
        rounds_of(runtime, tmp_path, monkeypatch, 2)
    assert runtime.ran[-3:] == [f"removed {tmp_path.name}-bare-paths",
                                "removed r1-rounds-server", "down"]


def runs_of(monkeypatch: pytest.MonkeyPatch, rtt: dict[str, list[float]],
            status: str = "ok") -> list[Any]:
    """Each run's passes with these RTTs, and a 9,000 Mbit/s stream; the delay's pass
    with `status` (its state failed unless "ok"). What ran goes into the list returned."""
    ran: list[Any] = []

    def run_scenarios(topology: Any, scenarios: list[Any], out: Path) -> Path:
        ran.append((topology.name, topology.settings.pings, str(topology.links.backbone)))
        return out / topology.name

    def load_results(directory: Path) -> pd.DataFrame:
        values = rtt[directory.name]
        said = status if directory.name == "calibrate-delay" else "ok"
        return pd.DataFrame({"metric": ["rtt_mean_ms"] * len(values) + ["tcp_mbit"],
                             "value": [*values, 9000.0], "status": said,
                             "state": "ok" if said == "ok" else "failed"})

    monkeypatch.setattr(calibration, "run_scenarios", run_scenarios)
    monkeypatch.setattr(calibration, "load_results", load_results)
    monkeypatch.setattr(calibration, "read_record", lambda _: SimpleNamespace(
        links=SimpleNamespace(applied={"throughput": {"mechanism": "netem"}})))
    return ran


def test_the_path_run_is_the_delay_lines_unshaped_reference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One stack for the path's TCP and the delay's unshaped RTT (each had its own):
    the path run pings as the shaped one does, and the delay's error is against it."""
    ran = runs_of(monkeypatch, {"calibrate-path": [0.10, 0.12, 0.30],
                                "calibrate-delay": [20.6]})
    figures, plain = calibration.path_figures(tmp_path, 1.0, 3, 20000.0, 10000.0)
    assert plain == pytest.approx(0.12)  # the median of its passes
    assert figures[0].value == 9000.0
    delay = calibration.delay_figures(tmp_path, plain)
    assert [(name, pings) for name, pings, _ in ran] == [("calibrate-path", 200),
                                                          ("calibrate-delay", 200)]
    assert delay[0].value == pytest.approx(20.6 - 0.12 - 20)
    assert delay[-1].name == "baseline path RTT (mean)" and delay[-1].value == plain
    # the delay at a rate its line carries (docs/topologies.md, "Shaped links")
    assert "rate=100000000" in ran[1][2].replace("_", "").replace(" ", ""), ran[1][2]


def test_a_delay_pass_that_failed_gives_no_delay_figure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass whose delay line ran behind (its shaping check failed) measured the line,
    not the delay: the figure is none, and its note says why."""
    said = "failed: shaping not as planned: ... ran behind: 53,148 of its 59,244 packets"
    runs_of(monkeypatch, {"calibrate-path": [0.10], "calibrate-delay": [31.0]}, said)
    delay = calibration.delay_figures(tmp_path, 0.10)
    assert delay[0].value != delay[0].value  # NaN: no rows measured (keep() makes it None)
    assert without_nan(delay[0]).met is None
    assert f"not measured: {said}" in delay[0].note
