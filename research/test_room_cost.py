"""The room-cost reader: the command's own step lines and exit status, and readings of
this machine's memory (no engine)."""

from __future__ import annotations

import sys

from research.room_cost import available_mib, containers, measure


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
