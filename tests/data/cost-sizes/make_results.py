"""Writes this directory's m<N>/results.parquet: WireGuard room passes at 10, 20, 40, 80
and 300 machines, made from real 50-machine passes (research/data/error-rates/
aa-wireguard-room-0-1) by the rule in README.md. Deterministic; run from the
repository's root:
    PYTHONPATH=. python tests/data/cost-sizes/make_results.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[2] / "research" / "data" / "error-rates" / "aa-wireguard-room-0-1"
RECORDED = 50  # machines of the recorded passes
SIZES = (10, 20, 40, 80, 300)
PASSES = 3  # recorded passes per size, each used once
SWITCH_MIB_PER_MACHINE = 0.02  # assumed, not measured: see README.md
METRICS = ["room_machines", "room_requests_per_s", "room_cpu_percent", "mem_load_mib"]


def scaled(rows: pd.DataFrame, size: int) -> pd.DataFrame:
    """One recorded pass's rows as a pass of `size` machines (README.md's rule)."""
    k = size / RECORDED
    value = rows["value"].copy()
    metric, role = rows["metric"], rows["role"]
    value[metric == "room_machines"] = float(size)
    value[metric.isin(["room_requests_per_s", "room_cpu_percent"])] *= k
    value[(metric == "mem_load_mib") & (role == "switch")] += (
        SWITCH_MIB_PER_MACHINE * (size - RECORDED))
    return rows.assign(value=value)


def main() -> None:
    frame = pd.read_parquet(SOURCE / "results.parquet")
    frame = frame[frame["metric"].isin(METRICS)]
    runs = list(dict.fromkeys(frame["run_id"]))
    for index, size in enumerate(SIZES):
        own = runs[index * PASSES:(index + 1) * PASSES]
        out = pd.concat([scaled(frame[frame["run_id"] == run], size) for run in own],
                        ignore_index=True)
        (HERE / f"m{size}").mkdir(exist_ok=True)
        out.to_parquet(HERE / f"m{size}" / "results.parquet", index=False)


if __name__ == "__main__":
    main()
