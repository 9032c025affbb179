"""A delay line that cannot keep up is said, not taken for the plan: the line's own counts
(images/tools/vnetbench-shape, imported and driven here on this machine's clock and
signals) and the check that reads them (shaping/verify.py), on a real line's output
(tests/data/shaping/line-behind.txt: a 1 ms backbone at no rate, four TCP streams
through it)."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tool_scripts import load_tool
from vnetbench.shaping.verify import (
    LINES_SCRIPT,
    LineTiming,
    ReadBackError,
    compare_line,
    lines_of,
    parse_seen,
)

ROOT = Path(__file__).parents[3]
DATA = ROOT / "tests" / "data" / "shaping"
LINE = {"queue": 0, "delay_ms": 1, "jitter_ms": 0}


SHAPE = load_tool("vnetbench-shape")


def test_a_line_past_its_capacity_ran_behind() -> None:
    seen = parse_seen((DATA / "line-behind.txt").read_text())
    timing = seen.lines[0]
    assert timing.answered and timing.behind
    assert compare_line(LINE, seen.queues, "RUN-router-switch2 eth0", 0, timing).changed == [
        "RUN-router-switch2 eth0: the delay line on queue 0 (1 ms, jitter 0 ms) ran behind: "
        "264,306 of its 264,407 packets in 4.002 s, 66,069 a second held over 1 ms past their "
        "due time, the latest 26.0 ms; it could not keep up (more packets than one line "
        "carries, or a host too busy to run it), so the path's delay and rate were the "
        "line's, not the plan's (a kernel with netem has no such line)"]


def test_a_line_that_wrote_no_new_counts_did_not_answer() -> None:
    text = (DATA / "line-behind.txt").read_text().replace("seq 3 pid", "seq 2 pid")
    seen = parse_seen(text)
    assert not seen.lines[0].answered
    assert compare_line(LINE, seen.queues, "at", 0, seen.lines[0]).changed == [
        "at: the delay line on queue 0 (1 ms, jitter 0 ms) did not report its timing "
        "within 1 s: its loop was that far behind"]


def test_a_planned_line_without_counts_is_not_taken_as_on_time() -> None:
    seen = parse_seen((DATA / "line-behind.txt").read_text())
    assert "reported no timing" in compare_line(LINE, seen.queues, "at", 0, None).changed[0]


@pytest.mark.parametrize(("packets", "late", "behind"), [
    (0, 0, False),
    (20, 20, False),  # a few probes late on a busy host: under BEHIND_PACKETS
    (100_000, 4_999, False),  # under 5 % of what it carried
    (9_319, 106, False),  # a fresh clone's 10 ms line within capacity: one stall, 6.0 ms
    (10_000, 500, True),
    (264_407, 264_306, True),
])
def test_behind_takes_both_a_count_and_a_share(packets: int, late: int, behind: bool) -> None:
    assert LineTiming(packets, late, 1000, 5000, 2.0).behind is behind


@pytest.mark.parametrize("counts", ['{"0": {"packets": 1}}', "not json", '{"0": 3}', ""])
def test_counts_that_do_not_read_are_a_read_back_error(counts: str) -> None:
    with pytest.raises(ReadBackError):
        lines_of(f"asked 1\nseq 2 pid 7\n{counts}")


class Packet:
    def __init__(self) -> None:
        self.accepted = False

    def accept(self) -> None:
        self.accepted = True


def test_a_packet_released_past_its_due_time_counts_late_with_its_wait_to_be_read() -> None:
    clock = SHAPE.ReadClock()
    heap: list[Any] = []
    line = SHAPE.Line({"queue": 0, "delay_ms": 10, "jitter_ms": 0, "reorder": False}, heap,
                      iter(range(100)), clock)
    assert line.late_after == 0.001  # a tenth of 10 ms is under the 1 ms floor
    # the loop found the queue readable at once, 5 ms after it last emptied it: what it
    # reads now can have waited that long
    clock.emptied = time.monotonic() - 0.005
    clock.looked(called=100.0, woke=100.0)
    first, second = Packet(), Packet()
    line(first)
    due = heap[0][0]
    SHAPE.release_due(heap, due)  # on time: only the wait to be read (5 ms) is late
    line(second)
    SHAPE.release_due(heap, heap[0][0] + 0.0001)
    assert first.accepted and second.accepted and line.packets == 2
    assert line.late == 2 and 0.005 <= line.max_late < 0.05
    counts = line.report(time.monotonic())
    assert counts["packets"] == 2 and counts["late"] == 2 and counts["late_after_us"] == 1000
    assert line.packets == line.late == 0  # each report counts from the last


def test_a_loop_that_slept_until_the_packet_came_counts_no_wait() -> None:
    clock = SHAPE.ReadClock()
    clock.emptied = time.monotonic() - 10
    woke = time.monotonic()
    clock.looked(called=woke - 0.5, woke=woke)
    heap: list[Any] = []
    line = SHAPE.Line({"queue": 1, "delay_ms": 50, "jitter_ms": 0, "reorder": False}, heap,
                      iter(range(10)), clock)
    assert line.late_after == pytest.approx(0.005)  # a tenth of 50 ms
    line(Packet())
    SHAPE.release_due(heap, heap[0][0])
    assert line.late == 0 and line.max_late < 0.005


@pytest.fixture
def reports(tmp_path: Path) -> Iterator[Any]:
    """The shaper's reports on this process's SIGUSR1, answered by a loop of its own."""
    heap: list[Any] = []
    line = SHAPE.Line({"queue": 3, "delay_ms": 1, "jitter_ms": 0, "reorder": False}, heap,
                      iter(range(10)), SHAPE.ReadClock())
    reports = SHAPE.Reports([line], path=str(tmp_path / "lines"))
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            ready, _, _ = select.select([reports.wake_r], [], [], 0.05)
            if ready:
                reports()

    thread = threading.Thread(target=answer)
    thread.start()
    try:
        yield reports
    finally:
        stop.set()
        thread.join()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)


def test_the_read_back_asks_the_line_and_waits_for_its_new_counts(reports: Any) -> None:
    """LINES_SCRIPT (the shaping check's) against the shaper's own Reports: it signals the
    pid the file names and reads the counts written for that signal."""
    path = reports.path
    script = LINES_SCRIPT.replace("/run/vnetbench-lines", path)
    assert Path(path).read_text().split()[:2] == ["seq", "0"]
    output = subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                            check=True, timeout=10).stdout
    found = lines_of(output.strip())
    assert output.startswith("asked 0\nseq 1 ")
    assert found[3].answered and found[3].packets == 0 and found[3].late_after_us == 1000
    second = subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                            check=True, timeout=10).stdout
    assert second.startswith("asked 1\nseq 2 ")
    assert json.loads(second.splitlines()[2])["3"]["seconds"] >= 0
