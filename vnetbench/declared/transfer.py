"""transfer: what it declares (its settings, metrics, matrix variants, help line);
it measures in vnetbench/scenarios/transfer.py."""

from __future__ import annotations

from pydantic import Field, field_serializer

from vnetbench.core.metrics import Better, Metric
from vnetbench.core.model import Bytes, Measured, ScenarioSettings
from vnetbench.core.units import exact_bytes
from vnetbench.declared.declaration import Cumulative, Declaration

TRANSFER_DIRECTIONS = ("upload", "download")
INTERVAL_BYTES_SUFFIX = "_interval_bytes"  # a direction's bytes of one interval (interval_s)
TRANSFER = tuple(metric for d in TRANSFER_DIRECTIONS for metric in (
    Metric(f"{d}_seconds", "s", Better.LOWER, f"Time to the last byte, {d}"),
    Metric(f"{d}_mbit", "Mbit/s", Better.HIGHER, f"Rate of the {d}", plot="transfer",
           lead=True),
    Metric(f"{d}_bytes", "bytes", Better.HIGHER),
    Metric(f"{d}_interval_mbit", "Mbit/s"),  # rows with interval_s
    Metric(f"{d}{INTERVAL_BYTES_SUFFIX}", "bytes")))

class TransferSettings(ScenarioSettings):
    prefix = "transfer_"
    # iperf3 -n
    bytes: Measured[Bytes] = Field(100 * 2**20, description="Bytes each way of the "
                                   "transfer scenario, e.g. 100MiB.")
    timeout_s: Measured[float] = Field(120.0, gt=0, le=3600,
                                       description="Transfer's bound per direction (seconds).")

    @field_serializer("bytes")
    def _bytes_text(self, count: int) -> str:
        return exact_bytes(count)  # a copy of the topology keeps the count to the byte


DECLARATION = Declaration(
    name="transfer",
    description="a fixed number of bytes uploaded, then downloaded, timed to the last byte",
    metrics=TRANSFER,
    runtime="vnetbench.scenarios.transfer:TransferScenario",
    settings=TransferSettings,
    # bytes moved over time, each direction (a method's steps: libp2p-perf)
    figures=(Cumulative("bytes", tuple((f"{d}{INTERVAL_BYTES_SUFFIX}", d)
                                       for d in TRANSFER_DIRECTIONS),
                        "{of}, {variant}: bytes over time", "MiB moved",
                        "seconds since the direction began", scale=2**20, unit="MiB"),),
)
