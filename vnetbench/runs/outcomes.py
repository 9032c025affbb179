"""A pass's outcome as the run judged it, beyond what its scenario said: CPU busy
outside the testbed, containers of the system under test that died, shaping found
changed. Each is a problem of the pass's outcome (its sentence joins the results'
`status`) and may fail it; code reads the state and the problems' kinds."""

from __future__ import annotations

import os
from datetime import datetime

from vnetbench.core.metrics import OUTSIDE_LOAD
from vnetbench.core.outcome import Kind, State
from vnetbench.engines.stack import Death
from vnetbench.scenarios.base import PassResult


def failed(result: PassResult, kind: Kind, said: str, dead_too: bool = False) -> None:
    """What went wrong is a problem of the pass, and a measured pass (a dead one too,
    with `dead_too`) is failed: its figure is not what it says."""
    outcome = result.outcome
    outcome.add(kind, said)
    if outcome.state.measured or (dead_too and outcome.state is State.DEAD):
        outcome.state = State.FAILED
    result.notes.append(said)


OUTSIDE_LOAD_SHARE = 0.1  # of the machine's cores: a pass measured beside this is marked


def mark_outside_load(result: PassResult, cores: float | None) -> None:
    """The pass's CPU outside the testbed as a metric, and in its status when it was
    a tenth of the machine or more (the figure may be the machine's, not the overlay's);
    the state is left as it is: the pass measured what it says, on a busy machine."""
    if cores is None:
        return
    result.metrics[OUTSIDE_LOAD.name] = (round(cores, 3), OUTSIDE_LOAD.unit)
    if cores >= OUTSIDE_LOAD_SHARE * (os.cpu_count() or 1):
        said = (f"measured under outside load: {cores:.2f} cores busy outside the testbed "
                "during the pass")
        result.outcome.add(Kind.OUTSIDE_LOAD, said)
        result.notes.append(said)


def mark_deaths(result: PassResult, deaths: list[Death], started: dict[str, datetime]) -> None:
    """Every container of the system under test that died (but those the scenario's
    fault killed), named with its exit code, when, during which pass, and its last log
    line: such a pass failed."""
    deaths = [d for d in deaths if d.service not in result.fault_killed]
    if deaths:
        failed(result, Kind.DEATH,
               "; ".join(d.describe(pass_of(d.finished, started)) for d in deaths))


def mark_shaping_changed(result: PassResult, changed: list[str]) -> None:
    """Whatever the shaping check found changed in the links: such a pass failed, a dead
    one too (a path dead for want of its delay line is the testbed's failure)."""
    if changed:
        failed(result, Kind.SHAPING, "shaping not as planned: " + "; ".join(changed), dead_too=True)


def current_pass(started: dict[str, datetime], pass_no: int) -> str:
    """The pass begun last ("pass 2", of a step "STEP, pass 2")."""
    return max(started, key=started.__getitem__) if started else f"pass {pass_no}"


def pass_of(moment: datetime, started: dict[str, datetime]) -> str:
    """'during pass N' (of its step) for the last pass begun by then, else 'before the
    first pass'."""
    begun = {name: at for name, at in started.items() if at <= moment}
    return f"during {max(begun, key=begun.__getitem__)}" if begun else "before the first pass"
