"""Faults on a running stack: how a schedule of what `faults:` declares becomes timed
steps, who applies the steps, and when each fault was in effect.

The fault (vnetbench/model/faults/declared.py `Fault`, part of the topology's model):
one entry of `faults:`. Either a fault at a known
instant (a switch or the control plane killed, started again after `restart_after`
or never; the backbone down, a loss burst or a delay spike for `for`) or an event
only a schedule runs (a flap, a partition, a ramp, churn, a kill of the room's
server or machines). `at` is its instant: after the probes first answer
(failover), after the load's start (room, throughput); `lasts_ms` its declared
span (None: a kill for good). An entry is checked alone in declared.py (its keys,
its spans), against the topology in model/faults/checks.py (the names, the room's
size, the backbone's bounds, and, as one schedule, two events on one target at
once), and against the measured path in model/faults/path.py.

The schedule (schedule.py `expand`): a topology's faults on one timeline, each
entry an `Event` (its label, its declared span, the targets chosen for it),
expanded into `Step`s, each one primitive thing at one instant (ms after the
schedule's zero): drop rules put in, replaced or taken out on backbone edges, a
target killed or started, the backbone shaped anew or as planned again; sorted by
instant, a lift before an apply at one instant.

The executor (executor.py `ScheduleRunner`): applies a schedule on a running stack,
for every scenario that injects faults. Rule steps wait where they act, in one
helper per backbone edge (edges.py: the edges, their helpers' names, labels and
staging lead), started before the zero, each step fired by vnetbench-at at its
instant and stamped when iptables returned; engine steps (a kill, a start, shaping)
are fired from this process at their instants and stamped with the call's span, a
start to where the engine says the container started, and an event's shaping steps
no closer together than declared from when the one before took effect. It reads
every stamp and leaves no rule standing. on_stack.py binds it to a scenario's pass
(`OnStack`: the containers a target is, the backbone shaped anew, the shaping
keeper told, the stamps read into windows, problems and notes). The room and
throughput run their schedules through it; failover runs each of its faults
through it as a schedule of one, its zero at the probe's first answer, and keeps a
kill for good down for its window (`finish(start_killed=False)`).

The window (window.py `FaultWindow`): when a fault was in effect, from its edges'
stamps: each edge an apply and a lift `Stamp` (began, how late against its
instant, done); in effect from the latest edge's apply to the latest edge's lift,
on the host's clock (the probes' `ping -D` clock); a staged step that began over
LATE_BOUND_S late either never waited for its instant (a problem) or was woken late
by busy cores (a note within WOKEN_LATE_BOUND_S, a problem past it).

`at` is checked once, in model/faults/declared.py: its type (a duration, not negative) and its
bound (60 s, with the spans). The rest is not a check of `at`: a schedule's last
step (`at` plus its span) within the load is on_stack.py's `expand_within` (room
and throughput), and failover never fires before `at`, later only where staging
needs longer (the zero it gives the executor).

This package acts on what the model declares: it sits above shaping/ and
overlays/, below the scenarios, which it does not import, and the model imports
nothing of it (tests/unit/test_structure.py). Per-event figures under faults are
the scenarios' own (measure/room_faults.py, measure/stream_faults.py,
scenarios/room/, scenarios/throughput_faults.py).
"""
