"""The room's records (real `vnetbench-room client` output) and the figures pooled
from them (no engine)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from vnetbench.measure.room import (
    MachineLoad,
    RoomFigures,
    RoomRecordError,
    jain_index,
    joined,
    machines_named,
    parse_machine,
    quantile_us,
)
from vnetbench.measure.room_faults import requests_of

DATA = Path(__file__).resolve().parents[2] / "data" / "room"


def record(name: str) -> MachineLoad:
    return parse_machine((DATA / name).read_text())


def test_a_kept_connections_record_holds_every_latency_it_counted() -> None:
    load = record("client-keep.txt")
    assert load.requests == 39 and load.failed == 0 and load.error is None
    assert sum(count for _, count in load.latencies_us) == load.requests
    assert load.goodput_mbit == pytest.approx(890565 * 8 / 2.000395 / 1e6)
    assert load.late_s < 0.01  # began 0.15 ms after its instant


def test_timeouts_are_failures_without_a_latency() -> None:
    # a 200 kbit/s server link, 1 s timeout: the 64 kB replies (2.6 s each) time out
    load = record("client-new-timeouts.txt")
    assert load.errors["timeout"] == 2 and load.failed == 2
    assert sum(count for _, count in load.latencies_us) == 4


def test_a_refused_server_leaves_wrks_error_and_no_latency() -> None:
    load = record("client-refused.txt")
    assert load.error is not None and "Connection refused" in load.error
    assert load.requests == 0 and load.latencies_us == ()
    assert load.late_s > 2  # its probe started 2.3 s after the instant it was given


def test_output_without_a_record_is_an_error_naming_what_it_said() -> None:
    with pytest.raises(RoomRecordError, match="timeout: killed"):
        parse_machine("timeout: killed\n")


def test_nearest_rank_percentiles_of_weighted_latencies() -> None:
    latencies = [(100, 98), (5000, 1), (9000, 1)]  # 100 requests
    assert quantile_us(latencies, 50) == 100
    assert quantile_us(latencies, 98) == 100
    assert quantile_us(latencies, 99) == 5000
    assert quantile_us(latencies, 100) == 9000
    assert quantile_us([], 50) is None


def test_jains_index_is_one_when_equal_and_one_over_n_when_one_has_all() -> None:
    assert jain_index([2.0, 2.0, 2.0, 2.0]) == pytest.approx(1.0)
    assert jain_index([8.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert jain_index([0.0, 0.0]) is None


def test_the_room_pools_every_request_not_the_machines_percentiles() -> None:
    keep, recorded_slow = record("client-keep.txt"), record("client-new-timeouts.txt")
    # the two were recorded in different runs: the slow one moved into keep's room,
    # starting with it (its own 6 s span kept)
    slow = replace(recorded_slow, planned=keep.planned, began=keep.began,
                   ended=keep.began + recorded_slow.ended - recorded_slow.began)
    room = RoomFigures.of({"agent1": keep, "agent2": slow}, {"agent3": "no record"})
    assert room.machines == 2 and room.answered == 39 + 4
    assert room.failed == 2 and room.errors["timeout"] == 2
    assert room.percentile_ms(100) == pytest.approx(26.901)  # the slow link's worst
    assert room.percentile_ms(50) == pytest.approx(quantile_us(
        [*keep.latencies_us, *slow.latencies_us], 50) / 1000)
    # every byte over the load's span (the slow machine's 6 s), not the rates summed
    assert room.seconds == pytest.approx(6.009, abs=1e-3)
    assert room.goodput_mbit == pytest.approx((890565 + 144220) * 8 / room.seconds / 1e6)
    assert room.goodput_mbit < keep.goodput_mbit + slow.goodput_mbit
    assert 0.5 < room.fairness < 0.6  # 3.56 against 0.19 Mbit/s: close to one of two
    assert room.without_record == {"agent3": "no record"}


def test_machines_are_in_room_order() -> None:
    assert machines_named(["agent10", "agent2", "agent1"]) == ["agent1", "agent2", "agent10"]


def test_a_wrk_that_never_ended_is_stalled_with_no_counts() -> None:
    # the server dropped every SYN: wrk never ends, and was stopped 2 + 1 + 3 s in
    load = record("client-stalled.txt")
    assert load.stalled is not None and "did not end within 6 s" in load.stalled
    assert load.requests == 0 and load.latencies_us == () and load.error is None
    room = RoomFigures.of({"agent1": load}, {})
    assert room.machines == 1 and room.answered == 0 and room.stalled == {
        "agent1": load.stalled}


def open_record(**changes: object) -> MachineLoad:
    """The open loop's record (real generator output against a paused test server),
    with `changes` made to its columns."""
    line = (DATA / "open-paused.txt").read_text().splitlines()[-1]
    data = json.loads(line.removeprefix("vnetbench-room "))
    data["columns"] |= changes
    return parse_machine("vnetbench-room " + json.dumps(data))


def test_an_open_loop_record_times_each_request_from_its_schedule() -> None:
    load = open_record()
    assert load.generator is not None and load.generator.planned == 20
    assert load.requests == 20 and load.failed == 0
    assert sum(count for _, count in load.latencies_us) == 20
    # due at 50 ms, answered after the pause at 354.4 ms: its wait is in its latency
    assert (304_415, 1) in load.latencies_us
    assert quantile_us(load.latencies_us, 100) == 304_415
    assert load.generator.waited == 12 and load.generator.mean_gap_s == pytest.approx(0.025)
    assert load.bytes == 10 * 200 + 10 * 2048
    assert load.generator.cpu_s > 0 and load.generator.max_rss_kib == 33128


def test_a_generator_lagging_over_a_tenth_of_its_gap_is_behind() -> None:
    late = open_record(scheduled_us=[k * 25_000 for k in range(20)], lag_us=[3200] * 20)
    assert late.generator is not None
    assert late.generator.behind == "its own lag p90 3.2 ms, over 10% of its 25 ms gap"
    # one late wake-up of 20 (the testbed's own reading at the load's end) keeps the rate
    once = open_record(scheduled_us=[k * 25_000 for k in range(20)],
                       lag_us=[1000] * 19 + [18_000])
    assert once.generator is not None and once.generator.behind is None
    spaced = open_record(scheduled_us=[k * 200_000 for k in range(20)],
                         done_us=[k * 200_000 + 900 for k in range(20)])
    assert spaced.generator is not None and spaced.generator.behind is None
    tight = open_record(scheduled_us=[k * 10_000 for k in range(20)],
                        lag_us=[1900] * 20)  # 19 % of a 10 ms gap, but timer ticks
    assert tight.generator is not None and tight.generator.behind is None


def test_unsent_requests_count_as_planned_not_sent() -> None:
    load = open_record(sent_us=[None] * 5 + [1] * 15, done_us=[None] * 5 + [2] * 15,
                       error=["timeout"] * 5 + [None] * 15)
    assert load.generator is not None
    assert (load.generator.planned, load.generator.sent) == (20, 15)
    assert load.errors["timeout"] == 5 and load.failed == 5


def test_a_generator_that_failed_leaves_its_error_and_no_counts() -> None:
    load = parse_machine('vnetbench-room {"loop": "open", "planned": 1.0, "began": 1.5, '
                         '"ended": 1.6, "error": "ValueError: bad schedule"}')
    assert load.error == "ValueError: bad schedule" and load.requests == 0
    assert load.generator is None


def test_the_open_loops_room_adds_up_its_generators() -> None:
    open_load, closed = open_record(lag_us=[3176] * 20), record("client-keep.txt")
    room = RoomFigures.of({"agent1": open_load, "agent2": open_load, "agent3": closed}, {})
    generators = room.open_loop
    assert generators is not None and list(room.generators) == ["agent1", "agent2"]
    assert (generators.planned, generators.sent, generators.waited) == (40, 40, 24)
    assert generators.lag_ms(100) == pytest.approx(3.176)
    assert generators.cpu_s_per_1000 == pytest.approx(1000 * 2 * 0.020518 / 40, rel=1e-3)
    assert generators.max_rss_mib == pytest.approx(33128 / 1024)
    assert set(generators.behind) == {"agent1", "agent2"}
    assert room.answered == 40 + 39  # the closed loop's wrk latencies pooled too
    assert RoomFigures.of({"agent3": closed}, {}).open_loop is None


def test_a_closed_loop_counts_replies_not_the_entries_wrk_added_for_a_stall() -> None:
    """A real record of a machine at 10/s whose server was frozen for 1 s
    (tests/integration/test_room.py): wrk answered 50 requests, and its histogram holds
    56 entries, 6 of them its correction for the stall (219, 339, ... 820 ms, 120 ms
    apart: the achieved interval) below the real 940 ms. Answered is the 50; the
    percentiles keep wrk's."""
    load = record("closed-paused.txt")
    entries = sum(count for _, count in load.latencies_us)
    assert load.answered == load.requests == 50 and entries == 56
    room = RoomFigures.of({"agent1": load}, {})
    assert room.answered == 50 and room.percentile_ms(100) == pytest.approx(940.446)


def test_a_machine_started_again_has_its_generators_joined_in_one_record() -> None:
    def record(began: float, ended: float, scheduled: list[int]) -> str:
        n = len(scheduled)
        return "vnetbench-room " + json.dumps({
            "loop": "open", "planned": 100.0, "began": began, "ended": ended,
            "requests": n, "cpu_s": 0.5, "max_rss_kib": 1000 + n, "columns": {
                "scheduled_us": scheduled, "lag_us": [10] * n, "waited": [False] * n,
                "sent_us": [s + 5 for s in scheduled], "done_us": [s + 900 for s in scheduled],
                "error": [None] * n, "bytes": [200] * n, "size_index": [0] * n}})
    text = joined([record(100.0, 102.0, [0, 1_000_000]),
                   record(105.0, 110.0, [5_500_000, 6_500_000, 7_500_000])])
    load = parse_machine(text)
    assert (load.requests, load.answered, load.began, load.ended) == (5, 5, 100.0, 110.0)
    assert load.generator is not None and load.generator.cpu_s == 1.0
    assert load.generator.max_rss_kib == 1003
    assert [r.scheduled for r in requests_of("m", text)] == [100.0, 101.0, 105.5, 106.5,
                                                            107.5]
    with pytest.raises(RoomRecordError):
        joined([record(100.0, 102.0, [0]), "no record here"])


def test_a_bursts_copies_one_after_another_count_what_the_link_carried() -> None:
    """A statement burst as a site link serves it: two machines ask 2 MiB at once;
    one copy ends after 0.2 s, the other after 0.4 s (a 100 Mbit/s link shared, then
    the second alone). Each machine's own rate (84 and 42 Mbit/s) sums to more than
    the link; the room's goodput is the 4 MiB over the 0.4 s span, under the link's
    100 Mbit/s. Both were answered all they asked: fair."""
    def copy(seconds: float) -> MachineLoad:
        return open_record(scheduled_us=[0] * 20, bytes=[2 * 2**20 // 20] * 20,
                           done_us=[int(seconds * 1e6)] * 20)
    first, second = copy(0.2), copy(0.4)
    first = replace(first, planned=100.0, began=100.0, ended=100.2, duration_s=0.2)
    second = replace(second, planned=100.0, began=100.0, ended=100.4, duration_s=0.4)
    room = RoomFigures.of({"agent1": first, "agent2": second}, {})
    assert sum(room.goodputs_mbit) > 100
    assert room.goodput_mbit == pytest.approx((first.bytes + second.bytes) * 8 / 0.4 / 1e6)
    assert room.goodput_mbit < 100
    assert room.fairness == pytest.approx(1.0)


def test_the_open_loops_fairness_is_over_each_machines_share_answered() -> None:
    served = open_record()
    half = open_record(error=["timeout"] * 10 + [None] * 10,
                       done_us=[None] * 10 + [400_000] * 10)
    assert half.answered == 10
    room = RoomFigures.of({"agent1": served, "agent2": half}, {})
    assert room.served_shares == (1.0, 0.5)
    assert room.fairness == pytest.approx(jain_index([1.0, 0.5]))


def test_requests_sent_again_on_a_new_connection_are_counted_per_room() -> None:
    def reopened(count: int) -> MachineLoad:
        line = (DATA / "open-paused.txt").read_text().splitlines()[-1]
        data = json.loads(line.removeprefix("vnetbench-room "))
        return parse_machine("vnetbench-room " + json.dumps({**data, "reopened": count}))
    room = RoomFigures.of({"agent1": reopened(2), "agent2": reopened(1)}, {})
    assert room.open_loop is not None and room.open_loop.reopened == 3
    # a record written before the count existed reads as none
    assert open_record().generator is not None and open_record().generator.reopened == 0
