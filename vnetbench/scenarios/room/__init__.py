"""room: a contest room under load, one package (issue #59): its runtime (runtime.py),
its end (end.py), its open-loop schedule (open_loop.py), a workload compiled for it
(workload_schedule.py) and its figures (workload_figures.py), the room under a
workload (workload.py) and under a schedule of faults (fault_schedule.py, faults.py).
Its declaration stays in vnetbench/declared/room.py and its records' parsing in
vnetbench/measure/room.py: lower layers import them. Outside this package, the room
is these names."""

from vnetbench.scenarios.room.runtime import Room

__all__ = ["Room"]
