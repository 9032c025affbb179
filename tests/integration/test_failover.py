"""failover on a real engine, each fault kind once, on the cheapest overlay that has
it (the baseline: routers; vNet for the control plane is not built here). Bounds come
from the mechanism, never tight timing on a shared 2-core machine."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.integration.conftest import MEASURED_STATES, leftovers
from vnetbench.analysis.results import load_results, named
from vnetbench.model.topology import parse_topology
from vnetbench.runs.session import run_scenarios
from vnetbench.scenarios import get_scenario

pytestmark = pytest.mark.integration

# How long after a fault's lift the probes wait for the path (failover_window_s). Only a
# fault the path does not recover from waits it out (switch-kill: the whole window,
# asserted below); the others end once the path answers steadily (STEADY_S, 1 s) and the
# stream moves again. The longest of those waits is the TCP stream's after the 2 s
# restart: the outage (2 s, the restart call, the routes: 2.3-3.5 s) can outlast the
# retransmission 3.0 s after the first loss (RTO 200 ms, doubling: 0.2, 0.6, 1.4, 3.0,
# 6.2 s), so the next is 6.2 s after it, at most 4.2 s after the lift; its 0.1 s report
# and a 0.5 s poll on top leave over a second of 6 s. (10 s waited 4 s more on
# switch-kill, for nothing an assertion reads.)
WINDOW_S = 6


def measured(tmp_path: Path, faults: list[dict[str, str]]) -> pd.Series:
    topology = parse_topology({"name": "it-failover", "switches": 2, "agents": 4,
                               "faults": faults,
                               "settings": {"passes": 1, "failover_window_s": WINDOW_S}}, "t")
    directory = run_scenarios(topology, [get_scenario("failover")], tmp_path)
    frame = named(load_results(directory))
    assert leftovers(directory.name) == []
    rows = frame[frame["interval_s"].isna()]
    return pd.Series({**dict(zip(rows["metric"], rows["value"], strict=True)),
                      "state": rows["state"].iloc[0], "status": rows["status"].iloc[0]})


def test_switch_and_link_faults_on_the_baseline(tmp_path: Path) -> None:
    values = measured(tmp_path, [
        {"at": "1s", "kill": "switch2", "restart_after": "2s"},
        {"at": "1s", "kill": "switch2"},
        {"at": "1s", "link": "backbone", "for": "2s"},
        {"at": "1s", "loss": "100%", "for": "1s"},
        {"at": "1s", "delay": "200ms", "for": "1s"}])
    # the deliberate kills are not the pass's failure (nor is the restart a death)
    assert "exited" not in str(values["status"]), values["status"]
    # killed 2 s: the router is gone at least that long; its restart (a container start,
    # its routes) comes on top, bounded by the window; 10 ms probes lost meanwhile
    outage = values["outage_ms_switch-restart"]
    assert 2000 <= outage <= 2000 + WINDOW_S * 1000
    # probes lost meanwhile: some, and at most one per 10 ms of the outage (a busy host
    # sends them later than every 10 ms: fewer, never more)
    assert 1 <= values["lost_switch-restart"] <= outage / 10 + 2
    # agents on the same switch talk over its bridge, not its router: no outage there
    assert values["local_outage_ms_switch-restart"] < 1000
    # TCP retransmits through 2 s: the same connection carries on
    assert values["tcp_survived_switch-restart"] == 1
    assert values["tcp_stall_ms_switch-restart"] >= 2000
    # the kill and the restart are engine calls at their instants, each stamped when
    # it returned (the latest it took effect): in effect 2 s plus the restart call's
    # span less the kill call's (its spread), each under a second or two on this host.
    # No tighter: a call's return lags its effect by the engine's own time, unmeasured
    in_effect = values["fault_ms_switch-restart"]
    assert values["fault_declared_ms_switch-restart"] == 2000
    assert 2000 - values["fault_spread_ms_switch-restart"] <= in_effect < 2000 + 2000, values
    # the router's own start and routes after the restart call returned: within the
    # outage (it ends with the first answer after the lift)
    assert 0 < values["recovery_ms_switch-restart"] <= outage
    assert values["not_recovered_switch-restart"] == 0
    # killed for good: never answered again within the window. The outage runs from the
    # last answer to the window's end, and probes are still answered between the fault's
    # mark and the kill taking effect (the engine's kill: 12 ms short of a 10 s window
    # in one fresh-clone run), so it is the window less that, which is well under 1 s
    assert values["not_recovered_switch-kill"] == 1
    assert values["outage_ms_switch-kill"] >= WINDOW_S * 1000 - 1_000
    assert pd.isna(values["recovery_ms_switch-kill"])  # nothing lifted it
    # a link fault: a helper per backbone edge staged before the instant, each woken
    # in vnetbench-at within the 20 ms bound (else the pass is partial, naming it),
    # one iptables call each way. In effect: the declared span, give or take the two
    # iptables calls' and wake-ups' difference (milliseconds). The outage: from the
    # last answer before the first edge's rule (its wake-up and iptables call after
    # the instant: under 30 ms) to the first answer after the last edge's lift, the
    # edges' spread and up to two probe intervals and a busy host's late probes on
    # top: the done-when, 50 ms over the declared span. Kernel routing has
    # nothing to reconverge: the first answer after the lift is the next probe's.
    assert "began its" not in str(values["status"]), values["status"]
    # Those 50 ms are an idle host's. Beside outside load (marked in the pass's status
    # and host_outside_cores: a tenth of the cores or more) a lift's iptables call
    # waits its turn for a core after its helper woke on time (58 ms over the second
    # once, beside four processes of other work on both cores): the figure is still
    # what was in effect, stamped, only coarser. Half a second still tells a fault
    # stamped at its own instants from one that took a step or a retry more.
    slack = 50 if "under outside load" not in str(values["status"]) else 500
    for fault, declared in (("backbone-down", 2000), ("loss-burst", 1000)):
        assert values[f"fault_declared_ms_{fault}"] == declared
        assert abs(values[f"fault_ms_{fault}"] - declared) <= slack, values
        assert declared - 30 <= values[f"outage_ms_{fault}"] <= declared + slack, values
        assert 0 < values[f"recovery_ms_{fault}"] <= slack, values
        assert values[f"fault_spread_ms_{fault}"] <= slack, values
        assert values[f"not_recovered_{fault}"] == 0
    # a delay spike (re-shaped: a shaper per backbone container, its NFQUEUE delay line
    # replaced) loses nothing to the delay itself; what it loses is the shapers' swaps.
    # While a shaper is swapped its queue has no reader (no --queue-bypass: dropped),
    # and the line it replaces drops what it held (up to the added round trip's worth
    # of probes; the answers after the spike began also come that much later). So the
    # silence fits in the two swaps (the apply's spread; the lift's, which is what the
    # stamp exceeds the declared second by) plus the added round trip and two late
    # probes. How long a swap takes is the engine's (0.1-1.5 s on this host): no bound
    # against the loss burst's second, which a slow swap outlasts (63 lost against 62)
    declared, added_round_trip = 1000, 2 * 200
    assert values["fault_ms_delay-spike"] >= declared
    swaps_ms = values["fault_spread_ms_delay-spike"] + values["fault_ms_delay-spike"] - declared
    silence = values["outage_ms_delay-spike"]
    assert silence <= swaps_ms + added_round_trip + 2 * 10 + 50, values
    # lost: probes sent between the answers that bound the silence. The answer before
    # it may have come the added round trip late (sent before), so up to that much
    # more was sent than the silence spans
    assert values["lost_delay-spike"] <= (silence + added_round_trip) / 10 + 2, values
    # the baseline has no join events: no rejoin time, rather than a made-up one
    assert pd.isna(values["rejoin_seconds_switch-restart"])


def test_a_machine_restarted_while_its_switch_is_down_joins_only_once_it_is_back(
        tmp_path: Path) -> None:
    """Nebula (join events: handshakes): its hubs are its site's router and lighthouse,
    so a machine of the killed switch's site that starts meanwhile has nobody to
    handshake with until the hub is back."""
    topology = parse_topology({"name": "it-failover-late", "switches": 2, "agents": 6,
                               "overlay": "nebula",
                               "faults": [{"at": "1s", "kill": "switch2",
                                           "restart_after": "3s"}],
                               "settings": {"passes": 1, "failover_window_s": 15}}, "t")
    directory = run_scenarios(topology, [get_scenario("failover")], tmp_path)
    frame = named(load_results(directory))
    assert leftovers(directory.name) == []
    values = frame[frame["interval_s"].isna()].set_index("metric")["value"]
    # (the other agents of the killed site may keep their tunnels and log no new
    # handshake: partial, said; the latecomer must have joined)
    assert frame["state"].iloc[0] in MEASURED_STATES, frame["status"].iloc[0]
    assert "did not join within the window" not in frame["status"].iloc[0]
    assert values["late_joined_during_switch-restart"] == 0
    # Nebula's probes answered again after the restart (3.4 s, issue 38) though agents
    # may log no new handshake: recovered is the path, rejoin events their own figure
    assert values["not_recovered_switch-restart"] == 0
    # counted (Nebula has join events), whatever the count: not NaN
    assert values["no_rejoin_event_switch-restart"] >= 0
    # restarted 0.5 s into a 3 s kill, its join waits for the hub: late_joined_during
    # == 0 above is that bound, measured (the join came after the switch's start was
    # asked). No fixed figure below it: the latecomer's stamp follows its KILL call, an
    # engine call inside those 3 s that took over 1.5 s under 0.8 cores of outside load
    # (late_join 0.93 s, fresh clone of c4ced48). A join is after the restart it follows:
    assert values["late_join_s_switch-restart"] > 0
