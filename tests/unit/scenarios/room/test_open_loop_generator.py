"""The tools image's open-loop generator (`vnetbench-room open`), imported and driven
against a small HTTP server on a Unix socket in tmp_path (no TCP, no engine): the
schedule the host encodes is what it decodes, requests go at their instants whatever
the replies do, a request's wait for a connection is counted from its scheduled
instant apart from the generator's own lag, and every failure has its kind."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.tool_scripts import TOOLS, load_tool
from vnetbench.runtime.pki import make_pki
from vnetbench.scenarios.room.open_loop import MachineSchedule, encode, room_schedules

SCRIPT = TOOLS / "vnetbench-room"


ROOM = load_tool("vnetbench-room")
# A request's timeout where the test is not of timeouts: a reply over a Unix socket
# never takes this long, a loop starved on a loaded host may take seconds (at 2 s
# replies turned into "timeout" under load 10-15); only a hung test ever reaches it.
TIMEOUT_S = 30.0


@dataclass
class Server:
    """HTTP/1.1 on a Unix socket: /SIZE answers SIZE bytes, /404 a 404; it holds a
    reply while `paused` is set, never answers `silent` paths, and counts connections."""

    path: Path
    paused: asyncio.Event = field(default_factory=asyncio.Event)
    silent: set[str] = field(default_factory=set)
    hang_up: bool = False  # close each connection after its reply, without saying so
    mute: bool = False  # close each connection on its first request, replying nothing
    opened: int = 0
    open_now: int = 0
    most_open: int = 0
    seen: list[tuple[str, float]] = field(default_factory=list)  # (path, loop time)
    closed: list[float] = field(default_factory=list)  # each connection's end, epoch s
    uploads: list[int] = field(default_factory=list)  # each upload's bytes, as read
    short: int = 0  # an upload's reply says this many bytes fewer than were read
    body_after_s: float = 0.0  # a reply's body this long after its head

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.opened += 1
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            while True:
                try:
                    head = (await reader.readuntil(b"\r\n\r\n")).decode()
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                target = head.split(" ")[1]
                self.seen.append((target, asyncio.get_running_loop().time()))
                if head.startswith("POST "):  # an upload: its body's length, in the reply
                    length = int(head.lower().split("content-length:")[1].split("\r")[0])
                    self.uploads.append(len(await reader.readexactly(length)))
                if self.mute:
                    return
                if target in self.silent:
                    await reader.read()  # until the client gives up and closes
                    return
                while self.paused.is_set():
                    await asyncio.sleep(0.01)
                close = "connection: close" in head.lower()
                status, body = (("404 Not Found", b"no") if target == "/404"
                                else ("200 OK", str(self.uploads[-1] - self.short).encode())
                                if target == "/upload"
                                else ("200 OK", b"v" * int(target[1:])))
                writer.write(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n"
                             f"{'Connection: close' + chr(13) + chr(10) if close else ''}"
                             "\r\n".encode())
                if self.body_after_s:
                    await writer.drain()
                    await asyncio.sleep(self.body_after_s)
                writer.write(body)
                await writer.drain()
                if close or self.hang_up:
                    return
        finally:
            self.closed.append(time.time())
            self.open_now -= 1
            writer.close()


def run(server: Server | None, path: Path, schedule: list[tuple[int, int]], *,
        sizes: tuple[int, ...] = (200, 4096), keep: bool = True, connections: int = 6,
        timeout_s: float = TIMEOUT_S, during: Any = None) -> dict[str, Any]:
    """The generator's record for (offset_us, size_index) requests, starting 0.1 s on."""
    async def main() -> dict[str, Any]:
        unix = await asyncio.start_unix_server(server.handle, str(path)) if server else None
        start = time.time() + 0.1
        load = ROOM.run_open(
            start, timeout_s, keep, connections, f"unix://{path}", list(sizes),
            [offset for offset, _ in schedule], [size for _, size in schedule])
        record: dict[str, Any]
        record, _ = await asyncio.gather(load, during() if during else asyncio.sleep(0))
        if unix:
            unix.close()
        return record

    return asyncio.run(main())


def latencies_ms(record: dict[str, Any]) -> list[float | None]:
    columns = record["columns"]
    return [None if done is None else (done - due) / 1000
            for due, done in zip(columns["scheduled_us"], columns["done_us"], strict=True)]


def test_an_epoch_instant_on_the_monotonic_clock_is_never_early(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """START and HOLD are epoch seconds, slept towards on the monotonic clock. Here each
    read of a clock takes 50 ms (a preemption between the two reads on a loaded host):
    the instant found is late by that, never early (read monotonic first, it was early
    by as much: a load begun, a hold released, before its instant)."""
    elapsed = [0.0]

    def clock(at_zero: float) -> Any:
        def read() -> float:
            elapsed[0] += 0.05
            return at_zero + elapsed[0]
        return read

    monkeypatch.setattr(ROOM, "time", SimpleNamespace(
        time=clock(1_800_000_000.0), monotonic=clock(0.0)))
    # the epoch instant 1_800_000_010 is 10.0 on this monotonic clock
    assert 10.0 <= ROOM.monotonic_of(1_800_000_010.0) <= 10.0 + 0.05 + 1e-6


def test_the_generator_decodes_the_schedule_the_host_encodes() -> None:
    schedules = room_schedules(["agent1", "agent2"], 7.5, 4, 3, "poisson", pass_no=2)
    for schedule in schedules.values():
        offsets, sizes = ROOM.decode_schedule(encode(schedule))
        assert MachineSchedule(tuple(offsets), tuple(sizes)) == schedule


def test_every_request_is_answered_at_its_instant_with_its_size(tmp_path: Path) -> None:
    server = Server(tmp_path / "s")
    schedule = [(k * 20_000, k % 2) for k in range(10)]  # every 20 ms, sizes in turn
    # one connection: reused when idle, never a second (a speed-free check of keep)
    record = run(server, tmp_path / "s", schedule, connections=1)
    columns = record["columns"]
    assert columns["error"] == [None] * 10
    assert columns["bytes"] == [200, 4096] * 5
    assert [path for path, _ in server.seen] == ["/200", "/4096"] * 5
    assert min(columns["lag_us"]) >= 0  # never taken up before its instant
    # no bound on lateness here: a unit test sets no speed (a loaded host is late)
    assert all(sent - due >= 0 for due, sent in
               zip(columns["scheduled_us"], columns["sent_us"], strict=True))
    assert server.opened == 1  # kept: one connection carried them all
    assert record["opened"] == 1 and record["requests"] == 10
    assert record["cpu_s"] >= 0 and record["max_rss_kib"] > 1000
    # START is slept towards on the monotonic clock, converted never early
    assert record["began"] >= record["planned"]


def test_a_stalled_server_does_not_hold_back_the_schedule_and_the_wait_is_counted(
        tmp_path: Path) -> None:
    """One connection, the server stalled from the start until 0.3 s after the first
    request reached it: the requests due meanwhile are still taken up at their
    instants, before any reply (not each after the reply before it), wait for the
    connection, and their latency from the schedule holds that wait. Every bound is
    from the order of events, none from how fast the host is."""
    server = Server(tmp_path / "s")
    server.paused.set()
    schedule = [(k * 25_000, 0) for k in range(20)]  # every 25 ms for 0.5 s

    async def stall() -> None:
        while not server.seen:
            await asyncio.sleep(0.005)
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, server.seen[0][1] + 0.3 - loop.time()))
        server.paused.clear()

    record = run(server, tmp_path / "s", schedule, connections=1, during=stall)
    columns = record["columns"]
    assert columns["error"] == [None] * 20
    # the first request reached the server at or after the load's start, so no reply
    # (all held on the one connection, behind the first) came before 0.3 s from it
    assert min(columns["done_us"]) >= 300_000
    # those due before then (the first 12, every 25 ms to 275 ms): the stall's timer is
    # later than theirs, so the loop took each up before the stall ended, whatever the
    # host did meanwhile (a load taken up late has lag from when it began: offset + lag
    # is then earlier than the take-up, which only weakens this)
    due_before = range(12)
    taken_up = [columns["scheduled_us"][k] + columns["lag_us"][k] for k in due_before]
    assert max(taken_up) <= min(columns["done_us"])
    # ...and each waited for the one connection, which the first held until its reply
    assert columns["waited"][:12] == [False] + [True] * 11
    # its wait is in its latency, from its instant: at least 300 ms less its offset
    latency = latencies_ms(record)
    assert all(latency[k] is not None and latency[k] >= 300 - 25 * k for k in due_before)
    assert server.opened == 1


def test_without_a_free_connection_requests_wait_and_each_has_a_bound(
        tmp_path: Path) -> None:
    """A server that never answers /9: five requests due at one instant, two
    connections, both held; the other three wait for one, each bounded by its
    scheduled instant + the timeout (a connection given up frees a slot, too late
    here: every deadline is the same instant)."""
    server = Server(tmp_path / "s", silent={"/9"})
    schedule = [(0, 0)] * 5
    began = time.monotonic()
    record = run(server, tmp_path / "s", schedule, sizes=(9,), connections=2,
                 timeout_s=0.3)
    # a hang guard, not a speed: the timeouts end it 0.3 s after its start on the loop's
    # clock; only a waiter never woken comes near 60 s
    assert time.monotonic() - began < 60
    columns = record["columns"]
    assert columns["error"] == ["timeout"] * 5
    # due at one instant, all are taken up before any runs: the first two take the two
    # slots and the rest find none, before any timer (a timeout) can free one
    assert columns["waited"] == [False, False, True, True, True]
    assert server.most_open <= 2  # the cap held
    # the two with a slot sent theirs: a Unix socket connects in two turns of the loop,
    # the one thing this test takes from the host (those turns within the 0.3 s timeout)
    assert columns["sent_us"][:2] != [None, None]


def test_new_connections_close_after_each_reply_and_stay_under_the_cap(
        tmp_path: Path) -> None:
    server = Server(tmp_path / "s")
    schedule = [(k * 2_000, 0) for k in range(12)]  # 2 ms apart: some overlap
    record = run(server, tmp_path / "s", schedule, keep=False, connections=3)
    assert record["columns"]["error"] == [None] * 12
    assert server.opened == 12 and record["opened"] == 12
    assert server.most_open <= 3


def test_failures_are_named_by_kind(tmp_path: Path) -> None:
    refused = run(None, tmp_path / "absent", [(0, 0), (1000, 0)])
    assert refused["columns"]["error"] == ["connect", "connect"]
    assert refused["columns"]["sent_us"] == [None, None]
    assert "connect" in refused["errors_said"]
    server = Server(tmp_path / "s")
    missing = run(server, tmp_path / "s", [(0, 0)], sizes=(404,))
    assert missing["columns"]["error"] == ["status"]


def test_the_script_prints_one_record_line(tmp_path: Path) -> None:
    """As a program: argv as the host writes it, one `vnetbench-room {json}` line,
    even when nothing answers."""
    schedule = encode(MachineSchedule((0, 5000), (0, 1)))
    # its TIMEOUT_S beyond the hang guard: a refused connect is "connect" however late
    # the program started (with 1 s, a start over 1 s late made both "timeout")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "open", f"{time.time() + 0.05:.6f}", "120", "keep",
         "6", f"unix://{tmp_path / 'absent'}", "200,2048", schedule],
        capture_output=True, text=True, check=False, timeout=60)
    lines = [line for line in done.stdout.splitlines() if line.startswith("vnetbench-room {")]
    assert len(lines) == 1 and done.returncode == 0
    record = json.loads(lines[0].removeprefix("vnetbench-room "))
    assert record["columns"]["scheduled_us"] == [0, 5000]
    assert record["columns"]["error"] == ["connect", "connect"]
    assert record["event_loop"] in ("asyncio", "uvloop")


@pytest.mark.parametrize("argv", [["open"], ["open", "1", "2"]])
def test_a_wrong_command_line_prints_the_usage(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 1 and "vnetbench-room open START" in done.stderr


def test_the_machine_holds_its_connections_until_the_rooms_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With HOLD, a machine whose requests have ended stays, its kept connection open,
    until the room's end: exiting one by one, machines stalled the others' last
    requests (the engine's work for each probe's exit). Without the hold the pool is
    closed as soon as the last reply is in (0.01 s in), a second before the hold."""
    server = Server(tmp_path / "s")
    waits: list[float] = []  # when the wait for the room's end began
    release = ROOM.wait_for_release

    async def wait_for_release(*args: Any) -> Any:
        waits.append(time.time())
        return await release(*args)

    monkeypatch.setattr(ROOM, "wait_for_release", wait_for_release)

    async def main() -> tuple[dict[str, Any], float, float]:
        unix = await asyncio.start_unix_server(server.handle, str(tmp_path / "s"))
        start = time.time() + 0.1
        hold = start + 1.0
        record = await ROOM.run_open(start, TIMEOUT_S, True, 6, f"unix://{tmp_path / 's'}",
                                     [200], [0, 10_000], [0, 0], hold)
        returned = time.time()
        unix.close()
        return record, hold, returned

    record, hold, returned = asyncio.run(main())
    assert record["columns"]["error"] == [None, None]
    # its kept connections (one, or two when the second request came before the first
    # reply: the host's speed) held past the last reply: the server saw each end only
    # after the hold (slept towards on the monotonic clock, converted never early)
    assert len(server.closed) == server.opened >= 1 and min(server.closed) >= hold
    assert returned >= hold  # it did not end before the room's end
    # the load's end is its last reply's: stamped before the wait for the hold began
    assert len(waits) == 1 and record["ended"] <= waits[0]


def test_a_load_that_began_late_is_late_not_behind(tmp_path: Path) -> None:
    """Its start instant already past: the requests due before it go at once, their
    latency from the schedule, the generator's lag from when it began."""
    server = Server(tmp_path / "s")

    async def main() -> dict[str, Any]:
        unix = await asyncio.start_unix_server(server.handle, str(tmp_path / "s"))
        record: dict[str, Any] = await ROOM.run_open(
            time.time() - 0.5, TIMEOUT_S, True, 6, f"unix://{tmp_path / 's'}", [200],
            [0, 100_000, 600_000], [0, 0, 0])
        unix.close()
        return record

    record = asyncio.run(main())
    assert record["began"] - record["planned"] >= 0.5
    latency = latencies_ms(record)
    assert latency[0] is not None and latency[0] >= 500  # due 0.5 s before the start
    # lag counts from when it began: the two due before then (0.5 and 0.4 s before) have
    # that time in their latency and not in their lag (from the schedule, their lag would
    # hold it and be within the reply's own time of the latency); 1 us of rounding each
    lags = record["columns"]["lag_us"]
    for k, before_ms in ((0, 500), (1, 400)):
        assert latency[k] is not None and latency[k] >= lags[k] / 1000 + before_ms - 0.002


def test_the_loop_never_sleeps_long_enough_for_the_kernel_to_add_slack(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """epoll_wait's timeout gets 0.1 % of itself as slack (the kernel's
    select_estimate_accuracy): the contest's 30 s gaps woke 0-31 ms late, in every
    latency. A request 1.2 s out is slept towards in steps of SLEEP_STEP_S at most."""
    asked: list[float] = []
    sleep = asyncio.sleep

    async def recorded(delay: float, *args: Any) -> Any:
        asked.append(delay)
        return await sleep(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", recorded)
    record = run(Server(tmp_path / "s"), tmp_path / "s", [(0, 0), (1_200_000, 0)])
    assert record["columns"]["error"] == [None, None]
    waits = [delay for delay in asked if delay > 0]
    assert ROOM.SLEEP_STEP_S == 0.5 and waits and max(waits) <= ROOM.SLEEP_STEP_S
    # it slept until the second request's instant, not short of it (how many steps that
    # took is the host's: a step that wakes late leaves less to sleep; see the next test)
    assert record["columns"]["sent_us"][1] >= 1_200_000


def test_sleeping_until_an_instant_goes_in_steps_and_again_when_woken_early(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a clock that moves only when slept on: 1.2 s is slept in steps of
    SLEEP_STEP_S, the last one what is left; a wake-up 1 ms early (uvloop rounds its
    timers to the millisecond) is followed by a sleep for that millisecond."""
    now = [100.0]
    asked: list[float] = []
    early: list[float] = []  # how early the next wake-up comes

    async def sleep(delay: float) -> None:
        asked.append(round(delay, 9))
        now[0] += delay - (early.pop() if early else 0.0)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    monkeypatch.setattr(ROOM, "time", SimpleNamespace(monotonic=lambda: now[0]))
    asyncio.run(ROOM.sleep_until(101.2))
    assert asked == [0.5, 0.5, 0.2] and now[0] >= 101.2
    asked.clear()
    early.append(0.001)
    asyncio.run(ROOM.sleep_until(now[0] + 0.3))
    assert asked == [0.3, 0.001]


def test_a_kept_connection_the_server_closed_is_replaced_and_the_request_sent_again(
        tmp_path: Path) -> None:
    """The contest's 30 s scoreboard polls met nginx's keep-alive timeout: a request on
    a connection idle past it read 0 bytes and failed, on every overlay alike. As a
    browser does, a GET on a kept connection that the server closed before any byte of
    the reply goes again once, on a new connection (counted: reopened)."""
    server = Server(tmp_path / "s", hang_up=True)
    record = run(server, tmp_path / "s", [(0, 0), (50_000, 0), (100_000, 1)],
                 connections=1)
    assert record["columns"]["error"] == [None, None, None]
    assert record["columns"]["bytes"] == [200, 200, 4096]
    assert record["reopened"] == 2 and server.opened == 3
    # a new connection's failure is not staleness: never sent again
    server = Server(tmp_path / "t", mute=True)
    record = run(server, tmp_path / "t", [(0, 0)])
    assert record["columns"]["error"] == ["read"] and record["reopened"] == 0
    assert server.opened == 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def barrier_listening(port: int, barrier: asyncio.Task[None]) -> None:
    """Until the barrier accepts: it resolves its address on a thread before it listens
    (a fixed 0.05 s was not always enough on a loaded host, and a machine refused there
    waits for the hold). The probe says no START, so it counts for no room. A barrier
    that ended instead (its port taken between free_port and its bind, by another
    test's socket) fails the test with its error, and 30 s bound the wait: either
    would otherwise wait for ever."""
    async with asyncio.timeout(30):
        while not barrier.done():
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.01)
                continue
            writer.close()
            return
    barrier.result()  # raises what ended it
    raise AssertionError("the barrier ended before it listened")


def test_the_barrier_ends_the_room_when_every_machine_has_ended(tmp_path: Path) -> None:
    """Two machines, a barrier for two: the one whose single request ends first waits
    at the barrier for the other's last (0.3 s in), and both are released then, long
    before the hold (20 s on): the room ends when its last request does, not its
    timeout later. Without the barrier both would stay until the hold."""
    server = Server(tmp_path / "s")
    url = f"unix://{tmp_path / 's'}"

    async def main() -> list[dict[str, Any]]:
        unix = await asyncio.start_unix_server(server.handle, str(tmp_path / "s"))
        port = free_port()
        barrier = asyncio.create_task(ROOM.barrier(port, 2))
        await barrier_listening(port, barrier)
        start = time.time() + 0.1
        # the fallback when the barrier never releases: far beyond the last request, so
        # on a loaded host too the barrier's release comes first (a broken barrier makes
        # this test wait it out, then fail)
        hold = start + 20.0
        records = await asyncio.gather(*(ROOM.run_open(
            start, TIMEOUT_S, True, 6, url, [200], offsets, [0] * len(offsets), hold,
            f"http://127.0.0.1:{port}") for offsets in ([0], [0, 300_000])))
        await barrier
        unix.close()
        return list(records)

    records = asyncio.run(main())
    first, last = records
    assert first["columns"]["error"] == [None] and last["columns"]["error"] == [None, None]
    released = [first["released"], last["released"]]
    # both released by the barrier (the hold gives None), once both had ended: each
    # arrives there after its requests have ended, the barrier closes when both came
    assert None not in released
    assert max(first["ended"], last["ended"]) <= min(released)


def test_a_barrier_counts_only_the_machines_of_one_start(tmp_path: Path) -> None:
    """A room started again (the engine was too slow for its lead) has another START:
    a removed machine that reached the barrier before must not count for the new room,
    which would release it while requests are still in flight."""
    async def main() -> tuple[bool, str]:
        port = free_port()
        barrier = asyncio.create_task(ROOM.barrier(port, 2))
        await barrier_listening(port, barrier)
        old = await asyncio.open_connection("127.0.0.1", port)
        old[1].write(b"100.000\n")
        new = await asyncio.open_connection("127.0.0.1", port)
        new[1].write(b"200.000\n")
        await asyncio.sleep(0.2)
        early = barrier.done()  # one of each START: not released
        again = await asyncio.open_connection("127.0.0.1", port)
        again[1].write(b"200.000\n")
        await asyncio.wait_for(barrier, 60)  # a hang guard: the third arrival releases it
        return early, (await new[0].read()).decode()

    early, said = asyncio.run(main())
    assert early is False and said == ""  # released by the end of stream only


def test_with_no_barrier_listening_the_machine_stays_until_the_hold(tmp_path: Path) -> None:
    """A barrier that is not there (refused connection) leaves the hold as it was."""
    server = Server(tmp_path / "s")

    async def main() -> tuple[dict[str, Any], float]:
        unix = await asyncio.start_unix_server(server.handle, str(tmp_path / "s"))
        start = time.time() + 0.1
        hold = start + 0.5
        record = await ROOM.run_open(start, TIMEOUT_S, True, 6, f"unix://{tmp_path / 's'}",
                                     [200], [0], [0], hold, f"http://127.0.0.1:{free_port()}")
        unix.close()
        return record, hold

    record, hold = asyncio.run(main())
    # slept towards on the monotonic clock, converted never early
    assert record["released"] is None and time.time() >= hold


def server_context(tmp_path: Path) -> ssl.SSLContext:
    """TLS 1.3 with a per-run certificate (runtime/pki.py) and session tickets, as the
    room's nginx serves it."""
    issued = make_pki(tmp_path / "pki", "test", ["server"]).roles["server"]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(issued.cert, issued.key)
    return context


def run_tls(server: Server, tmp_path: Path, schedule: list[tuple[int, int]],
            targets: list[str], keep: bool) -> dict[str, Any]:
    """The generator's record against `server` in plain (s) and over TLS (t)."""
    async def main() -> dict[str, Any]:
        plain = await asyncio.start_unix_server(server.handle, str(tmp_path / "s"))
        tls = await asyncio.start_unix_server(server.handle, str(tmp_path / "t"),
                                              ssl=server_context(tmp_path))
        record: dict[str, Any] = await ROOM.run_open(
            time.time() + 0.1, TIMEOUT_S, keep, 6,
            f"unix://{tmp_path / 's'},unix://{tmp_path / 't'}", targets,
            [offset for offset, _ in schedule], [size for _, size in schedule])
        plain.close()
        tls.close()
        return record

    return asyncio.run(main())


def test_new_tls_connections_resume_the_machines_latest_session(tmp_path: Path) -> None:
    """A new connection offers the latest session the machine got (SessionContext: a
    session through wrap_bio, kept once a reply's head is in, TLS 1.3's tickets coming after
    the handshake): the first handshake is full, the later ones resumed; plain
    requests have no handshake, and the time to connect of the requests that opened
    a connection is recorded. Spaced 0.5 s apart: each reply is in before the next."""
    server = Server(tmp_path / "s")
    record = run_tls(server, tmp_path, [(0, 1), (500_000, 1), (1_000_000, 0),
                                        (1_500_000, 1)], ["200", "s4096"], keep=False)
    columns = record["columns"]
    assert columns["error"] == [None] * 4
    assert columns["bytes"] == [4096, 4096, 200, 4096]
    assert columns["handshake"] == ["full", "resumed", None, "resumed"]
    assert all(us is not None and us > 0 for us in columns["connect_us"])
    assert server.opened == 4


def test_a_connection_opened_while_a_reply_streams_resumes_the_session(
        tmp_path: Path) -> None:
    """The server's tickets come before its reply: a machine has its session once the
    first reply's head is in, as a browser does, not once its body is (a statement's
    2 MiB took 10 s in a venue, and every connection the machine opened meanwhile was a
    full handshake). The first reply's body comes 1 s after its head; the second
    request, 0.3 s in, finds the one connection busy and opens another."""
    server = Server(tmp_path / "s", body_after_s=1.0)
    record = run_tls(server, tmp_path, [(0, 0), (300_000, 0)], ["s4096"], keep=True)
    assert record["columns"]["error"] == [None, None]
    assert record["columns"]["handshake"] == ["full", "resumed"]
    assert server.opened == 2


def test_a_kept_tls_connection_has_one_handshake(tmp_path: Path) -> None:
    """Kept: the request that opened the connection has its handshake, the others none."""
    record = run_tls(Server(tmp_path / "s"), tmp_path, [(0, 0), (300_000, 0)], ["s200"],
                     keep=True)
    assert record["columns"]["handshake"] == ["full", None]
    assert record["columns"]["connect_us"][1] is None


def test_an_upload_is_answered_with_the_bytes_the_server_read(tmp_path: Path) -> None:
    """POST /upload of the target's bytes, plain and over TLS: its bytes are those the
    server says it read; a reply saying fewer is a failure (status) naming both."""
    server = Server(tmp_path / "s")
    record = run_tls(server, tmp_path, [(0, 0), (0, 1)], ["u5000", "su70000"], keep=True)
    assert record["columns"]["error"] == [None, None]
    assert record["columns"]["bytes"] == [5000, 70000]
    assert sorted(server.uploads) == [5000, 70000]
    short = Server(tmp_path / "s", short=1)
    record = run_tls(short, tmp_path, [(0, 0)], ["u5000"], keep=True)
    assert record["columns"]["error"] == ["status"] and record["columns"]["bytes"] == [0]
    assert "4999 of the upload's 5000 bytes" in record["errors_said"]["status"]


def test_a_tls_target_without_a_tls_url_fails_as_a_connect(tmp_path: Path) -> None:
    server = Server(tmp_path / "s")
    record = run(server, tmp_path / "s", [(0, 0)], sizes=("s200",))  # type: ignore[arg-type]
    assert record["columns"]["error"] == ["connect"]
    assert "no TLS_URL" in record["errors_said"]["connect"]


def test_a_schedule_over_tls_runs_on_asyncio_s_loop() -> None:
    """uvloop lost the end of TLS replies the server closed after (the script's
    UVLOOP_LOSES_TLS_TAIL, measured against nginx): TLS takes asyncio's loop, whether
    uvloop is importable or not; plain HTTP keeps uvloop when there is one."""
    assert ROOM.event_loop_kind(True) == "asyncio"


def test_many_machines_share_one_process_and_each_gets_its_record(tmp_path: Path) -> None:
    """`many`: one line per machine, each with its own schedule's columns; the CPU is
    the process's, shared equally (summed over the machines it is the process's once),
    and the peak memory is the process's."""
    server = Server(tmp_path / "s")

    async def main() -> list[dict[str, Any]]:
        unix = await asyncio.start_unix_server(server.handle, str(tmp_path / "s"))
        start = f"{time.time() + 0.1:.6f}"
        common = [str(TIMEOUT_S), "keep", "6", f"unix://{tmp_path / 's'}", "200,4096"]
        machines = ROOM.machines_of(
            ["@m1:-", start, *common, encode(MachineSchedule((0, 5000), (0, 1))),
             "@m2:-", start, *common, encode(MachineSchedule((1000,), (1,)))])
        records: list[dict[str, Any]] = await ROOM.run_many(machines)
        unix.close()
        return records

    first, second = asyncio.run(main())
    assert first["columns"]["scheduled_us"] == [0, 5000]
    assert second["columns"]["scheduled_us"] == [1000]
    assert first["columns"]["bytes"] == [200, 4096] and second["columns"]["bytes"] == [4096]
    assert first["shared_by"] == second["shared_by"] == 2
    assert first["cpu_s"] == second["cpu_s"] > 0
    assert first["max_rss_kib"] == second["max_rss_kib"] > 0


def test_many_prints_a_line_per_machine_and_a_dead_namespace_is_that_machines_error(
        tmp_path: Path) -> None:
    """As a program: `vnetbench-room@MACHINE {json}` per machine; a machine whose
    process is gone (no /proc/PID) has a record saying so, the others run."""
    start = f"{time.time() + 0.05:.6f}"
    common = ["120", "keep", "6", f"unix://{tmp_path / 'absent'}", "200"]
    schedule = encode(MachineSchedule((0,), (0,)))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "many", "@a:-", start, *common, schedule,
         "@b:999999999", start, *common, schedule],
        capture_output=True, text=True, check=False, timeout=60)
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert done.returncode == 0 and set(lines) == {"vnetbench-room@a", "vnetbench-room@b"}
    assert json.loads(lines["vnetbench-room@a"])["columns"]["error"] == ["connect"]
    assert "its namespace" in json.loads(lines["vnetbench-room@b"])["error"]


def test_the_gate_moves_every_machines_instants_in_many(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.write_text("2.5\n")
    args = ROOM.through_gate(["--gate", str(gate), "many",
                              "@a:1", "10.000", "5", "keep", "6", "u", "200", "x", "20.000",
                              "@b:2", "11.000", "5", "keep", "6", "u", "200", "y"])
    assert args[2] == "12.500" and args[9] == "22.500"  # a's START and HOLD
    assert args[11] == "13.500" and args[-1] == "y"  # b's START; b has no HOLD
