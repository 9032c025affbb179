"""A link fault applied on every backbone edge at one instant, by helpers staged
before it.

Before the fault, one helper per backbone attachment (the tools image, in that
container's namespace, NET_ADMIN) finds the interface holding the address, says
`staged`, and waits in vnetbench-at for the apply instant; then one iptables rule
goes in (raw PREROUTING, first: dropping what arrives on that interface, all of it
for a link down, a random share for a loss burst, on the receiving side as the
shapers' loss is, shaping/plan.py) and it stamps the instant iptables returned;
the same helper waits in vnetbench-at again for the lift instant, deletes the rule
and stamps that. One helper per edge, not a second one for the lift: it already
knows the interface and the exact rule, its wait for the lift costs nothing, and it
halves the containers the engine must start before the instant. The rule stands
beside the shapers' own (qdiscs, mangle NFQUEUE) and touches none of them, so the
planned shaping is neither replaced nor restored.

A helper's output, in order (`vnetbench-at` lines from images/tools/vnetbench-at):

    vnetbench-fault: staged dev=eth1
    vnetbench-at began=1796127230.370012 late_s=0.000812
    vnetbench-fault: applied at=1796127230.381544012
    vnetbench-at began=1796127233.370101 late_s=0.000901
    vnetbench-fault: lifted at=1796127233.379871223

or `vnetbench-fault: failed WHY` at the step that failed.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from vnetbench.engines.base import EngineError, RunOnEngine, ToolSpec
from vnetbench.faults.window import EdgeStamps, Stamp
from vnetbench.measure.probe import AT_MARK, split_began
from vnetbench.model.topology import Fault
from vnetbench.runtime.labels import TOOL, run_labels
from vnetbench.shaping.apply import Member, members

MARK = "vnetbench-fault: "
SEGMENT = "backbone"
STAGERS = 4  # helpers started at once
# the engine's start of one helper on this 2-core host: about a second (docs/scenarios)
STAGE_S_PER_HELPER = 1.0
STAGE_MARGIN_S = 1.0
CAPABILITIES = ("NET_ADMIN", "NET_RAW")

# $dev: the interface holding $address in the helper's namespace (empty: none)
FIND_DEV = r"""dev=$(ip -o -4 addr show | awk -v a="$address" \
  '{split($4, p, "/"); if (p[1] == a) {sub(/@.*/, "", $2); print $2}}')"""

# $1 the address, $2 the apply instant, $3 the lift instant, then the rule's match
FAULT_SCRIPT = r"""address=$1 apply_at=$2 lift_at=$3; shift 3
""" + FIND_DEV + r"""
if [ -z "$dev" ]; then echo "vnetbench-fault: failed no interface holds $address"; exit 1; fi
echo "vnetbench-fault: staged dev=$dev"
vnetbench-at "$apply_at" iptables -w -t raw -I PREROUTING 1 -i "$dev" "$@" -j DROP \
  || { echo "vnetbench-fault: failed apply (iptables exit $?)"; exit 1; }
echo "vnetbench-fault: applied at=$(date +%s.%N)"
vnetbench-at "$lift_at" iptables -w -t raw -D PREROUTING -i "$dev" "$@" -j DROP \
  || { echo "vnetbench-fault: failed lift (iptables exit $?)"; exit 1; }
echo "vnetbench-fault: lifted at=$(date +%s.%N)"
"""

# a helper that applied and never lifted (died, removed): its rule deleted, every copy
CLEAR_SCRIPT = r"""address=$1; shift
""" + FIND_DEV + r"""
[ -n "$dev" ] || exit 0
while iptables -w -t raw -D PREROUTING -i "$dev" "$@" -j DROP 2>/dev/null; do :; done
"""

STAMP = re.compile(r"^vnetbench-fault: (?P<step>applied|lifted) at=(?P<at>\d+(\.\d+)?)")


def stageable(fault: Fault, available: set[str]) -> bool:
    """A link down, and a 100 % loss burst, always (a plain drop); a lesser burst where
    iptables has `statistic`; a delay spike never (it needs a delay line: re-shaped
    instead)."""
    if fault.loss is not None:
        return not drop_match(fault) or "statistic" in available
    return fault.link is not None


def drop_match(fault: Fault) -> list[str]:
    """The rule's match beyond the interface: none for a link down (everything)."""
    if fault.loss is None or fault.loss >= 100:
        return []
    return ["-m", "statistic", "--mode", "random", "--probability", f"{fault.loss / 100:.6f}"]


def fault_argv(address: str, apply_at: float, lift_at: float, match: list[str]) -> list[str]:
    return ["sh", "-c", FAULT_SCRIPT, "vnetbench-fault", address, f"{apply_at:.6f}",
            f"{lift_at:.6f}", *match]


@dataclass(frozen=True)
class Edge:
    """One backbone attachment and the helper staged for it."""

    container: str
    node: str
    address: str
    helper: str


def backbone_edges(run: RunOnEngine, prefix: str) -> list[Edge]:
    found = []
    for member in members(run):
        backbone = [a for a in member.attachments if a.segment == SEGMENT]
        found += [Edge(member.container, member.node, a.address,
                       helper_name(prefix, member, index, len(backbone)))
                  for index, a in enumerate(backbone)]
    return found


def helper_name(prefix: str, member: Member, index: int, count: int) -> str:
    return f"{prefix}-fault-{member.node}" + (f"-{index + 1}" if count > 1 else "")


def staging_lead_s(edges: int) -> float:
    """How long before the instant staging starts: STAGERS helpers at a time."""
    return STAGE_MARGIN_S + STAGE_S_PER_HELPER * -(-edges // STAGERS)


def helper_labels(run: RunOnEngine, edge: Edge) -> dict[str, str]:
    return run_labels(run.run_id, "probe", edge.node, **{TOOL: "vnetbench-fault"})


def stage(run: RunOnEngine, edges: list[Edge], fault: Fault, apply_at: float,
          lift_at: float) -> dict[str, str]:
    """Start every edge's helper (STAGERS at once), each waiting for apply_at; the
    helpers the engine would not start, with its words."""
    match = drop_match(fault)

    def start(edge: Edge) -> str | None:
        try:  # names are the run's project's, pass's and fault's: none left to replace
            run.engine.start_tool(edge.container, ToolSpec(
                tuple(fault_argv(edge.address, apply_at, lift_at, match)),
                helper_labels(run, edge), name=edge.helper, keep=True,
                capabilities=CAPABILITIES))
        except EngineError as error:
            return f"the engine did not start it: {str(error).strip()[-300:]}"
        return None

    with ThreadPoolExecutor(STAGERS) as stagers:
        refused = dict(zip((e.helper for e in edges), stagers.map(start, edges),
                           strict=True))
    return {helper: why for helper, why in refused.items() if why}


def parse_fault_helper(edge: str, text: str) -> EdgeStamps:
    """A helper's stamps: each vnetbench-at line opens a step (apply, then lift), the
    next `applied`/`lifted` line closes it."""
    stamps: list[Stamp] = []
    failure = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(AT_MARK):
            began, _ = split_began(line + "\n")
            if began is not None:
                stamps.append(Stamp(began.at, began.late_s, None, began.waited_s))
        elif found := STAMP.match(line):
            if stamps and stamps[-1].done is None:
                stamps[-1] = replace(stamps[-1], done=float(found["at"]))
        elif line.startswith(MARK + "failed"):
            failure = line.removeprefix(MARK + "failed").strip()
    if failure is None and not stamps:
        failure = "it printed no stamp (never started, or its output is lost)"
    return EdgeStamps(edge, stamps[0] if stamps else None,
                      stamps[1] if len(stamps) > 1 else None, failure)


def helper_log(run: RunOnEngine, helper: str) -> str:
    try:
        return run.engine.logs(helper)
    except EngineError:
        return ""  # never started, or removed


def read_and_clear(run: RunOnEngine, edges: list[Edge], fault: Fault,
                   refused: dict[str, str]) -> list[EdgeStamps]:
    """Every helper's stamps (`refused`: those the engine did not start); a helper that
    applied and did not lift has its rule deleted by a one-shot helper; then the
    helpers are removed."""
    started = [edge for edge in edges if edge.helper not in refused]
    found = {edge.helper: parse_fault_helper(edge.helper, helper_log(run, edge.helper))
             for edge in started}
    # every helper gone (together: Engine.remove_all) before any rule is cleared
    run.engine.remove_all([edge.helper for edge in started])
    for edge in started:
        stamped = found[edge.helper]
        if stamped.apply is not None and (stamped.lift is None or stamped.lift.done is None):
            run.engine.run_tool(edge.container, ToolSpec(
                ("sh", "-c", CLEAR_SCRIPT, "vnetbench-fault-clear", edge.address,
                 *drop_match(fault)), helper_labels(run, edge), capabilities=CAPABILITIES))
    return [found[edge.helper] if edge.helper in found
            else EdgeStamps(edge.helper, failure=refused[edge.helper]) for edge in edges]


def lifted_everywhere(run: RunOnEngine, edges: list[Edge]) -> bool:
    """Every helper has lifted, failed, or ended."""
    for edge in edges:
        text = helper_log(run, edge.helper)
        if MARK + "lifted" not in text and MARK + "failed" not in text:
            listed = run.engine.containers([("name", f"^{edge.helper}$")])
            if listed and listed[0].state == "running":
                return False
    return True
