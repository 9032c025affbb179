"""The room's start gate (scenarios/room/start_gate.py and vnetbench-room's --gate):
the probes begin once the last is up, all at one instant moved by the same shift,
and the gate is let go however the start ends. No engine: the starts are stand-ins,
the probe's side is the script itself, reading a real file under a real flock."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

import pytest

from tests.tool_scripts import load_tool
from tests.unit.scenarios.room.test_runtime_start import MACHINES, TimedStarts, argv_for
from vnetbench.scenarios.room.runtime import gated
from vnetbench.scenarios.room.start_gate import GATE_DIR, GATE_FILE, StartGate, open_ahead_s

ROOM = load_tool("vnetbench-room")


def free(path: Path) -> bool:
    """Nobody holds path's lock exclusively (a probe's shared lock would be granted)."""
    with path.open() as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def test_a_room_up_before_its_lead_starts_once_the_last_probe_is_up(tmp_path: Path) -> None:
    room = TimedStarts(0.0)
    before = time.time()
    start = room.start_room(None, MACHINES, argv_for, lead=30.0, fault_lead=0.5,  # type: ignore[arg-type]
                            gate_dir=tmp_path)
    after = time.time()
    # the instant moved from 30 s ahead to the gate's own ahead (and the faults' lead)
    ahead = open_ahead_s(len(MACHINES)) + 0.5
    assert before + ahead <= start.planned <= after + ahead
    # the probes' argv as created, the lead they were given shrunk by as much: the
    # bound's origin (planned - lead) stays when they were created
    assert start.planned - start.lead == pytest.approx(before + 30.0 - 30.0, abs=after - before)
    gate = tmp_path / "first" / GATE_FILE
    shift = float(gate.read_text())
    assert shift < 0 and start.planned == pytest.approx(float(start.load.argv["m0"][1]) + shift,
                                                        abs=1e-3)
    assert free(gate)
    for argv, mounts in zip(room.argv, room.mounts, strict=True):
        assert argv[:3] == ["vnetbench-room", "--gate", f"{GATE_DIR}/{GATE_FILE}"]
        assert [m.source for m in mounts] == [tmp_path / "first"]


def test_without_a_gate_the_probes_wait_out_the_lead() -> None:
    room = TimedStarts(0.0)
    before = time.time()
    start = room.start_room(None, MACHINES, argv_for, lead=30.0, fault_lead=0.0)  # type: ignore[arg-type]
    assert start.planned >= before + 30.0 and start.lead == 30.0
    assert all("--gate" not in argv for argv in room.argv) and set(room.mounts) == {()}


def test_an_engine_too_slow_lets_the_first_gate_go_unmoved(tmp_path: Path) -> None:
    room = TimedStarts(0.1)
    start = room.start_room(None, MACHINES, argv_for, lead=0.01, fault_lead=0.0,  # type: ignore[arg-type]
                            gate_dir=tmp_path)
    first = tmp_path / "first" / GATE_FILE
    assert float(first.read_text()) == 0.0 and free(first)  # its probes were removed
    assert free(tmp_path / "again" / GATE_FILE) and len(start.notes) == 1


def test_a_start_that_fails_lets_the_gate_go(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), StartGate(tmp_path) as gate:
        assert not free(gate.path)
        raise RuntimeError("the engine went away")
    assert float((tmp_path / GATE_FILE).read_text()) == 0.0 and free(tmp_path / GATE_FILE)


def test_the_gate_never_moves_the_instant_later(tmp_path: Path) -> None:
    with StartGate(tmp_path) as gate:
        planned = time.time() + 0.1  # sooner than the gate's own ahead
        assert gate.open_early(planned, 300, 0.0) == planned
    assert float((tmp_path / GATE_FILE).read_text()) == 0.0


def test_the_gate_is_mounted_from_an_absolute_path(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a relative --out gives a relative run directory
    with StartGate(Path("out") / "room-gate-1") as gate:
        assert gate.mount.source == tmp_path / "out" / "room-gate-1"
        assert gate.mount.source.is_absolute() and gate.mount.read_only


def test_gated_puts_the_option_before_the_subcommand(tmp_path: Path) -> None:
    with StartGate(tmp_path) as gate:
        argv = gated({"m": ["timeout", "-k", "2", "40", "vnetbench-room", "open", "1.000"]},
                     gate)
    assert argv["m"] == ["timeout", "-k", "2", "40", "vnetbench-room", "--gate",
                         f"{GATE_DIR}/{GATE_FILE}", "open", "1.000"]
    assert gated({"m": ["x"]}, None) == {"m": ["x"]}


OPEN = ["open", "1000.000", "5", "keep", "6", "http://s", "100", "0.0", "1030.000",
        "http://s:9"]


@pytest.mark.parametrize(("args", "moved"), [
    (OPEN, {1: "990.000", 8: "1020.000"}),  # START and HOLD; the barrier's URL is not
    (OPEN[:8], {1: "990.000"}),  # no HOLD
    (["client", "1000.250", "3", "5", "keep", "2", "http://s", "100"], {1: "990.250"}),
    (["server", "8080", "100"], {})])
def test_a_probe_moves_its_instants_by_the_gate_s_shift(tmp_path: Path, args: list[str],
                                                        moved: dict[int, str]) -> None:
    gate = tmp_path / GATE_FILE
    gate.write_text("-10.000000\n")
    expected = [moved.get(i, a) for i, a in enumerate(args)]
    assert ROOM.through_gate(["--gate", str(gate), *args]) == expected
    assert ROOM.through_gate(args) == args  # without --gate: as given


def test_a_probe_waits_for_the_gate_to_be_let_go(tmp_path: Path) -> None:
    done: list[tuple[float, list[str]]] = []

    def probe(path: Path) -> None:
        args = ROOM.through_gate(["--gate", str(path), *OPEN])
        done.append((time.monotonic(), args))

    with StartGate(tmp_path) as gate:
        reader = threading.Thread(target=probe, args=(gate.path,))
        reader.start()
        time.sleep(0.2)
        assert done == []  # held: the probe waits however long the host takes
        let_go = time.monotonic()
        gate.open_early(time.time() + 100, 1, 0.0)
    reader.join(10)
    [(returned, args)] = done
    assert returned >= let_go and float(args[1]) < 1000.0
