"""Writes this directory's results.parquet, results.csv and run.json: the room's contest
workload on topologies/venue.yml (300 machines, 2 passes), its rows made by the room's
own code (plan_workload, workload_figures, workload_values) from per-request records
invented here, deterministic: baseline holds the venue's targets, wireguard breaks
them (the statement's last machine at 41 s, the steady p99 above 500 ms, one end-rush
request lost). Run from the repository's root:
    PYTHONPATH=. python tests/data/venue/make_results.py
"""

from __future__ import annotations

import json
from pathlib import Path

from vnetbench.analysis.results import ResultSet
from vnetbench.core.schema import CellKey
from vnetbench.declared.room import DECLARATION
from vnetbench.measure.room_faults import Request
from vnetbench.model.topology import load_topology
from vnetbench.scenarios.room.workload import workload_values
from vnetbench.scenarios.room.workload_figures import workload_figures
from vnetbench.scenarios.room.workload_schedule import plan_workload

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
RUN_ID = "venue-20261206-120000-recorded"
# overlay -> (the statement's slowest machine, ms; a steady request's latency, ms;
# the steady phase's slow tail, ms; end-rush requests failed)
SHAPES = {"baseline": (18_000.0, 8.0, 120.0, 0), "wireguard": (41_000.0, 11.0, 620.0, 1)}


def records(plan, overlay: str, pass_no: int) -> dict[str, list[Request]]:
    """Each machine's requests in its schedule's order, latencies by a fixed rule."""
    last, steady, tail, lost = SHAPES[overlay]
    machines = sorted(plan.parts)
    out: dict[str, list[Request]] = {}
    for index, machine in enumerate(machines):
        own = []
        for n, part in enumerate(plan.parts[machine]):
            if part.at_once:  # the statement: spread up to `last` over the machines
                latency = last * (index + 1) / len(machines) - 50.0 * (pass_no - 1)
            elif (index * 7 + n) % 97 == 0:  # about 1 in 100: the slow tail
                latency = tail + pass_no
            else:
                latency = steady + (index + n) % 5
            own.append(Request(machine, float(n), latency))
        out[machine] = own
    if lost:  # the end rush's first request of the last machines: failed
        left = lost
        for machine in reversed(machines):
            for n, part in enumerate(plan.parts[machine]):
                if left and part.phase == "end-rush" and not part.at_once:
                    out[machine][n] = Request(machine, float(n), None, "read")
                    left -= 1
    return out


def main() -> None:
    topology = load_topology(ROOT / "topologies" / "venue.yml")
    assert topology.workload is not None
    machines = [f"m{i:03d}" for i in range(1, topology.settings.machines + 1)]
    results = ResultSet(HERE)
    settings = {"machines": len(machines), "room_workload": topology.workload.name}
    for overlay in SHAPES:
        for pass_no in (1, 2):
            plan = plan_workload(topology.workload, machines, "even", pass_no)
            figures = workload_figures(plan, records(plan, overlay, pass_no))
            results.add(CellKey(RUN_ID, "room", overlay), pass_no,
                        DECLARATION.emitted(workload_values(figures)), settings)
    results.write()
    (HERE / "results.txt").unlink()  # no RESULT lines: the rows alone are read
    record = {"format_version": 2, "kind": "run", "status": "completed",
              "started": "2026-12-06T12:00:00+00:00", "ended": "2026-12-06T12:26:00+00:00",
              "run_id": RUN_ID, "scenarios": ["room"],
              "overlays": {name: {} for name in SHAPES},
              "topology": topology.model_dump(mode="json")}
    (HERE / "run.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
