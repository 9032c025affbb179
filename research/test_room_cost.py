"""The room-cost reader: the command's own step lines and exit status, and readings of
this machine's memory (no engine)."""

from __future__ import annotations

import sys

from research.room_cost import Cost, available_mib, containers, during_load, measure


def test_the_steps_and_the_exit_status_are_the_command_s() -> None:
    """Its lines wide (COLUMNS: a wrapped step line loses its time): exit 1 says so."""
    script = ("import os; print('✓ bringing up x (readiness) (44.3 s)'); print('noise'); "
              "print('✓ tearing down x (1.5 s)'); "
              "raise SystemExit(1 if os.environ.get('COLUMNS') == '400' else 3)")
    cost = measure("t", [sys.executable, "-c", script])
    assert cost.exit_status == 1
    assert cost.steps == [("bringing up x (readiness)", 44.3), ("tearing down x", 1.5)]
    assert cost.idle_available_mib > 0 and cost.wall_s >= 0


def test_this_machine_s_readings_are_counts() -> None:
    assert available_mib() > 0
    assert containers() >= 0


def test_each_step_s_end_is_when_its_line_came() -> None:
    script = ("import time; print('✓ bringing up x (0.1 s)', flush=True); time.sleep(0.5); "
              "print('✓ tearing down x (0.4 s)', flush=True)")
    cost = measure("t", [sys.executable, "-c", script])
    first, last = cost.step_ends_s
    assert 0.4 <= last - first <= cost.wall_s  # the sleep between the two lines, at least


def test_the_load_s_memory_is_read_within_the_first_pass_step_only() -> None:
    cost = Cost("t", [], steps=[("bringing up x", 10.0), ("pass 1: 3 machines", 4.0),
                                ("pass 1: the room's last requests", 1.0)],
                step_ends_s=[10.0, 15.0, 16.0],
                samples=[(9.0, 900.0, 10), (12.0, 300.0, 8), (14.0, 320.0, 8),
                         (15.5, 700.0, 9)])
    during_load(cost)
    assert (cost.load_above_idle_mib, cost.load_containers) == (320.0, 8)
