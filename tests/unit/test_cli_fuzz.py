"""A fuzzer of the command line (issue #61 item 5): every command and every option
it has (read from the click app itself, so a new option is fuzzed by itself) given
generated values: huge, negative, NaN, empty, unicode, over-long, control characters;
paths that are files, directories, symlinks, dangling, over-long, the command's own
inputs; YAML documents mutated from the shipped topologies, workload, vNet profile
and fault schedules; results directories whose run.json or noise.json is mutated.

What every case must do
-----------------------
- exit 2 with one paragraph ("error: ..." and no blank line in it), or succeed
  (0; compare, history and cost --check-at may say 1, a measured miss);
- never raise past the command (CliRunner's result.exception is a SystemExit);
- never reach the engine (below);
- never change an input file: every file under the fuzzer's directory (the inputs
  a case may name) and the shipped files the defaults read are hashed before and
  after each case (a case's outputs go to new paths, so any change is a defect).

The engine, and commands that need it for valid input
-----------------------------------------------------
The unit suite runs with DOCKER_HOST=unix:///nonexistent; besides, every way to
the engine raises ReachedEngine (a BaseException, so no `except Exception` in the
code hides it; each call is also recorded): starting any process but the few
read-only host tools in HOST_TOOLS (python-on-whales runs the docker CLI, so this
is every engine call), and vnetbench.engines' require_engine, local, engine_for,
every_engine, recorded_engine, engine_facts and the docker module's
engine_version / compose_version.

Commands split in two (ENGINE_COMMANDS): those that never need the engine
(validate, render, report, ...) must never reach it, whatever they are given. Those
that need it for valid input (run, ab, up, clean, ...) may only be judged on input
that is wrong: each generated value carries its validity (VALID, UNKNOWN: it may or
may not be accepted, e.g. a mutated topology or a number within no known bound;
INVALID: wrong by construction, e.g. NaN, a negative count, a missing file, an unknown
option). An engine command's case always holds at least one INVALID value (the
"poison"); it must exit 2 before the engine. Reaching the engine is a pass only for
a case with no INVALID value (possible when a mutated input, UNKNOWN, was drawn
instead of the poison being invalid for that command: never, by construction, but
the rule is written so the judgement stays right if strategies change). A command
that is given an INVALID value and exits 0 is a defect too ("accepted").

Defects of areas other helpers fix in parallel are kept strict but listed in KNOWN,
each with its class and owner: a case whose only defects match KNOWN entries passes
and is counted as known. Empty KNOWN once those fixes are merged.

Count and time: each test records its cases in user_properties; tests/conftest.py
prints "cli fuzzer: N cases in S s" at the end of the session. Deterministic:
derandomize=True, no example database, deadline=None.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import enum
import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
import typer.main
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.runtime.paths import TOPOLOGIES

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
SHIPPED = sorted([*TOPOLOGIES.glob("*.yml"), *(REPO / "vnetbench/data/workloads").glob("*.yml"),
                  REPO / "vnetbench/overlays/vnet/profile.yml"])



def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


SHIPPED_HASHES = {str(p): sha256(p) for p in SHIPPED}  # the files the defaults read

VALID, UNKNOWN, INVALID = "valid", "unknown", "invalid"
HOST_TOOLS = {"ip", "git", "ldd"}  # read-only host tools a command may start

# commands that need the engine for valid input (judged only on invalid input)
ENGINE_COMMANDS = {"run", "sweep", "capacity", "shape", "matrix", "ab", "up", "down",
                   "calibrate", "clean", "doctor", "images build", "images vnet",
                   "swarm up", "swarm down"}
MEASURED_MISS = {"compare", "history", "cost"}  # may exit 1 (cost: --check-at missed)
# commands that need no engine, but may ask it (what vNet images hold) for valid input
ASK_ENGINE = {"render"}

# cases per command: sized so the whole fuzzer stays under a minute on 2 cores
# cases per command (about: each Hypothesis example is 1 to PER_EXAMPLE cases), sized
# by each case's cost so that the whole stays under a minute on 2 cores: a refusal is
# about 10 ms, a report that succeeds about 1 s (its figures)
CASES = {"validate": 300, "render": 200, "run": 700, "methods": 30, "sweep": 400,
         "capacity": 500, "cost": 80, "shape": 350, "matrix": 350, "report": 12,
         "history": 80, "export": 120, "compare": 150, "ab": 550, "up": 350, "down": 350,
         "calibrate": 200, "clean": 300, "doctor": 30, "version": 30, "completion": 30,
         "images build": 30,
         "images vnet": 300, "swarm up": 250, "swarm down": 30}
BUDGET = {name: int(os.environ.get("FUZZ_BUDGET", "0")) or n for name, n in CASES.items()}


# cases per Hypothesis example: its engine's cost per example is several times a refused
# case's, so each example is a short list of cases (max_examples counts examples)
PER_EXAMPLE = 8


class ReachedEngine(BaseException):
    """The engine was asked (a BaseException: `except Exception` does not hide it)."""


# ---------------------------------------------------------------- the command line


@dataclass(frozen=True)
class Param:
    name: str
    opts: tuple[str, ...]  # () for an argument
    secondary: tuple[str, ...]
    kind: Any  # the annotation's bare type
    many: bool  # nargs=-1 or multiple
    required: bool
    flag: bool


def bare(annotation: Any) -> Any:
    while get_origin(annotation) is not None and get_origin(annotation) is not Literal:
        args = [a for a in get_args(annotation) if a is not type(None)]
        annotation = args[0]
    return annotation


def commands() -> dict[str, list[Param]]:
    """Every command of the app with its parameters, as click sees them."""
    found: dict[str, list[Param]] = {}

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
            return
        found[" ".join(path)] = [
            Param(p.name, tuple(p.opts) if p.param_type_name == "option" else (),
                  tuple(p.secondary_opts), bare(p.type_descriptor.annotation),
                  p.nargs == -1 or bool(getattr(p, "multiple", False)), bool(p.required),
                  bool(getattr(p, "is_flag", False)))
            for p in command.params]

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = commands()


def choices(kind: Any) -> list[str]:
    if get_origin(kind) is Literal:
        return [str(a) for a in get_args(kind)]
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return [str(m.value) for m in kind]
    return []


# ---------------------------------------------------------------- the inputs


@dataclass
class World:
    """The files a case may name (made once; restored after every case)."""

    root: Path
    scratch: Path
    pristine: dict[str, bytes | str | None] = field(default_factory=dict, repr=False)
    state: dict[str, str] = field(default_factory=dict, repr=False)

    def path(self, name: str) -> str:
        return str(self.root / name)


def make_world(root: Path) -> World:
    places = root / "in"
    (places / "topo").mkdir(parents=True)
    for source in [*TOPOLOGIES.glob("*.yml"), *(DATA / "topologies").glob("*.yml")]:
        shutil.copy(source, places / "topo" / source.name)
    shutil.copy(REPO / "vnetbench/data/workloads/contest.yml", places / "contest.yml")
    shutil.copy(REPO / "vnetbench/overlays/vnet/profile.yml", places / "profile.yml")
    (places / "faults.yml").write_text(FAULTS)
    shutil.copytree(DATA / "results-quick", places / "quick")
    shutil.copytree(DATA / "ab-aa-baseline", places / "aa")
    (places / "file.txt").write_text("hello\n")
    (places / "empty.yml").write_text("")
    (places / "binary.yml").write_bytes(bytes(range(256)))
    (places / "dir").mkdir()
    (places / "programs").mkdir()
    (places / "programs" / "agent").write_text("#!/bin/sh\n")
    (places / "link-file").symlink_to(places / "topo" / "two-sites.yml")
    (places / "link-dir").symlink_to(places / "quick")
    (places / "dangling").symlink_to(places / "nowhere")
    (places / "loop").symlink_to(places / "loop")  # ELOOP
    (places / "mut").mkdir()
    scratch = root / "scratch"
    scratch.mkdir()
    world = World(places, scratch)
    world.pristine = contents(places)
    world.state = snapshot(places)
    return world


FAULTS = """\
name: faults
switches: 2
agents: 2
faults:
  - {at: 5s, kill: switch2, restart_after: 3s}
  - {at: 5s, link: backbone, for: 3s}
  - {at: 5s, loss: 50%, for: 2s}
  - {at: 5s, delay: 200ms, for: 2s}
  - {at: 5s, flap: backbone, times: 5, down: 1s, up: 1s}
  - {at: 0s, ramp: loss, from: 0%, to: 20%, over: 10s}
"""


def snapshot(root: Path) -> dict[str, str]:
    """Every path under root: a link's target, a directory, or a file's kind, size,
    inode and change time (a file written in place or replaced changes them)."""
    found: dict[str, str] = {}
    for directory, subdirectories, files in os.walk(root):
        for name in [*subdirectories, *files]:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[path] = "link:" + os.readlink(path)
            elif stat.S_ISDIR(info.st_mode):
                found[path] = "dir"
            else:
                found[path] = f"{stat.S_IFMT(info.st_mode)}:{info.st_size}:{info.st_ino}:" \
                              f"{info.st_mtime_ns}:{info.st_ctime_ns}"
    return found


def changed_inputs(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Inputs changed or gone (new files are outputs, not a change)."""
    return sorted(path for path, value in before.items() if after.get(path) != value)


def restore(world: World, after: dict[str, str]) -> None:
    """The input tree back as it was made (a defect found must not spoil later cases)."""
    if after != world.state:
        for new in sorted(set(after) - set(world.state), reverse=True):
            remove(Path(new))
        for name in changed_inputs(world.state, after):
            remove(Path(name))
        for name, value in world.pristine.items():
            path = Path(name)
            if value is None and not path.is_dir():
                path.mkdir(parents=True)
            elif isinstance(value, str) and not path.is_symlink():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.symlink_to(value)
            elif isinstance(value, bytes) and not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(value)
        world.state = snapshot(world.root)
    for name in os.listdir(world.scratch):  # emptied, kept: it is the working directory
        remove(world.scratch / name)


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def contents(root: Path) -> dict[str, bytes | str | None]:
    """What restore puts back: a file's bytes, a link's target, None for a directory."""
    found: dict[str, bytes | str | None] = {}
    for path in sorted(root.rglob("*")):
        found[str(path)] = (os.readlink(path) if path.is_symlink() else None if path.is_dir()
                            else path.read_bytes())
    return found


# A value is drawn as a Draw: its text on the command line, and what it is
@dataclass(frozen=True)
class Draw:
    text: str
    validity: str
    what: str = ""  # a short label for the report: 'nan', 'mutant topology', ...


def drawn(validity: str, what: str = "") -> Callable[[str], Draw]:
    return lambda text: Draw(text, validity, what)


LONG = "x" * 5000
BAD_TEXT = ["", " ", "\x1b[2J", "\u2603", "\u2603" * 40, "a\nb", "../../x", "\t", LONG,
            "-", "=", ",", "a=b=c", "\u202e", "NaN",
            "\udcff"]  # a byte no UTF-8 decodes, as Python gives it from argv
BAD_NUMBER = ["nan", "NaN", "inf", "-inf", "-1", "-0.5", "1e309", "-1e309", "9" * 5000,
              "-" + "9" * 30, "1" + "0" * 30, "", "x", "1,5", "\u0663", "0x10", "1e"]
FEW_NUMBERS = ["0", "1", "2", "3", "5", "10", "0.5", "100"]


def any_text() -> st.SearchStrategy[str]:
    return st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
                   max_size=30)


def numbers(kind: Any, only_bad: bool) -> st.SearchStrategy[Draw]:
    """An int or float option's value: a plausible one, or one wrong by construction."""
    if only_bad:
        return bad(BAD_NUMBER, "bad number")
    plausible = st.sampled_from(FEW_NUMBERS).map(drawn(UNKNOWN, "small number"))
    if kind is int:
        generated = st.integers(-(10**40), 10**40).map(
            lambda n: Draw(str(n), INVALID if n < 0 or n > 10**12 else UNKNOWN, "integer"))
    else:
        generated = st.floats(allow_nan=True, allow_infinity=True).map(
            lambda x: Draw(repr(x), INVALID if not (0 <= x <= 1e12) else UNKNOWN, "float"))
    return st.one_of(plausible, generated, bad(BAD_NUMBER, "bad number"))


def bad(values: list[str], what: str) -> st.SearchStrategy[Draw]:
    return st.sampled_from(values).map(drawn(INVALID, what))


# Plausible values of string options, by option (UNKNOWN: a combination may be refused)
PLAUSIBLE: dict[str, list[str]] = {
    "scenarios": ["throughput", "failover", "room", "join", "transactions", "transfer",
                  "flood", "config", "loaded_latency"],
    "scenario": ["throughput", "failover", "room", "join"],
    "overlay": ["baseline", "wireguard", "vnet", "openvpn", "tinc", "nebula"],
    "method": ["rfc2544", "rfc6349"],
    "engine": ["compose", "swarm"],
    "pair": ["agent1,agent2", "a,b"],
    "fault": ["kill=switch2,restart_after=3s", "link=backbone,for=3s", "loss=50%,for=2s",
              "delay=200ms,for=2s", "kill=machines:3"],
    "workload": ["contest", "{in}/contest.yml"],
    "ping_sizes": ["64,1400", "100"], "room_sizes": ["1KiB,1MiB", "10"],
    "transfer_bytes": ["1MiB", "100MiB", "1GiB"],
    "setting": ["site.loss=1%,2%", "seconds=1,2", "backbone.delay=10ms,20ms"],
    "set": ["backbone.loss=1%", "site.delay=5ms"],
    "slo": ["p99=50ms", "p99=50ms,failed=0", "fairness=0.9"],
    "a": ["backbone.loss=1%", "overlay=wireguard", "topology={in}/topo/two-sites.yml"],
    "b": ["backbone.loss=2%", "overlay=vnet", "vnet-profile={in}/profile.yml"],
    "order": ["alternate", "random", "date", "label"],
    "min_effect": ["5%", "10%"], "fail_over": ["5%", "10%"],
    "label": ["{in}/quick=one", "{in}/aa=two"],
    "run_id": ["two-sites-20261129-194033-84a4", "two-sites"],
    "run": ["two-sites-20261129-194033-84a4"],
    "vnet_image": ["vnet-agent:latest"], "block": ["10.191.0.0/16", "10.50.0.0/16"],
}


# Wrong values of an option's own syntax: amounts, percentages, lists (INVALID)
HUGE = "9" * 5000
WRONG_SYNTAX: dict[str, list[str]] = {
    "ping_sizes": ["1,-1", HUGE, "1e3", "nan", "1,,2", "0"],
    "room_sizes": ["-1KiB", "nanMiB", "1e400GiB", HUGE + "KiB", "1,nan"],
    "transfer_bytes": ["nanMiB", "-1MiB", "1e400GiB", HUGE + "B", "0B", "MiB"],
    "setting": ["seconds=nan,inf", "seconds=-1,1e308", "backbone.loss=150%,nan%",
                "site.delay=-5ms,1ms", "backbone.loss=" + HUGE + "%", "seconds="],
    "set": ["backbone.delay=-1ms", "backbone.loss=nan%", "site.rate=1e400mbit",
            "backbone.loss=" + HUGE + "%", "nowhere.loss=1%"],
    "slo": ["p99=nanms", "p99=1e400ms", "p99=-5ms", "failed=" + HUGE, "p101=5ms", "p99="],
    "a": ["backbone.loss=nan%", "seconds=1e400", "passes=" + HUGE, "overlay=\u2603"],
    "b": ["backbone.delay=-1ms", "seconds=nan", "vnet-profile=", "topology="],
    "fault": ["loss=nan%,for=2s", "at=-1s,kill=switch2", "delay=1e400ms,for=2s",
              "kill=machines:" + HUGE, "loss=50%,for=" + HUGE + "s", "churn=150%,over=1s"],
    "min_effect": ["nan%", "-5%", "1e400%", HUGE + "%", "%"],
    "fail_over": ["nan%", "-5%", "1e400%", HUGE + "%", "%"],
    "pair": ["agent1,agent1,agent2", "agent1,agent1", ","],
    "label": ["=x", "{in}/quick=", "{in}/quick=" + LONG, "{in}/nowhere=x"],
    "block": ["10.191.0.0/" + HUGE, "10.191.0.0/17", "::/16"],
}


def strings(param: Param, only_bad: bool) -> st.SearchStrategy[Draw]:
    wrong = bad(BAD_TEXT, "bad text")
    if param.name in WRONG_SYNTAX:
        wrong = st.one_of(wrong, bad(WRONG_SYNTAX[param.name], "wrong syntax"))
    if only_bad:
        return wrong
    plausible = PLAUSIBLE.get(param.name, [])
    options = [wrong,
               any_text().map(drawn(UNKNOWN, "generated text"))]
    if plausible:
        options.insert(0, st.sampled_from(plausible).map(drawn(UNKNOWN, "plausible")))
    if param.name == "workload":  # a file, or a shipped workload's name
        options.append(mutants("workload"))
    if param.name in ("a", "b"):  # an arm's topology or vNet profile, mutated
        options.append(mutants("topology").map(lambda d: Draw("topology=" + d.text,
                                                               d.validity, d.what)))
        options.append(mutants("profile").map(lambda d: Draw("vnet-profile=" + d.text,
                                                              UNKNOWN, d.what)))
    return st.one_of(*options)


# paths: what each path parameter is (by parameter name; command-specific below)
OUTPUT_DIRS = {"out", "output"}
RESULTS = {"directory", "directories", "old", "new", "noise", "results"}
TOPOLOGY_FILES = {"topology", "files", "file"}


def path_role(command: str, param: Param) -> str:
    if command in ("down", "shape") and param.name == "out":
        return "run root"  # where `up` put the run directory: read, not written
    if (command == "export" and param.name == "out") or {"--json-file", "--summary"} & set(
            param.opts):
        return "output file"
    if param.name in OUTPUT_DIRS:
        return "output dir"
    if param.name in RESULTS:
        return "results"
    if param.name == "vnet_profile":
        return "profile"
    if param.name == "programs":
        return "programs"
    return "topology"


WRONG_PATHS = [("{in}/nowhere.yml", "missing file"), ("{in}/dangling", "dangling symlink"),
               ("{in}/loop", "symlink loop"), ("{in}/loop/x", "under a symlink loop"),
               ("{in}/\udcff.yml", "undecodable name"),
               ("{in}/" + "n" * 300 + ".yml", "over-long name"), ("", "empty path"),
               ("{in}/binary.yml", "binary file"), ("{in}/empty.yml", "empty file"),
               ("{in}/file.txt/x", "under a file")]
WRONG_RUN_ROOTS = [("{in}/" + "n" * 300, "over-long name"), ("{in}/file.txt/x", "under a file"),
                   ("{in}/loop", "symlink loop")]
GOOD_INPUTS = {
    "topology": [(f"{{in}}/topo/{p.name}", "topology") for p in
                 [*TOPOLOGIES.glob("*.yml"), *(DATA / "topologies").glob("*.yml")]]
    + [("{in}/link-file", "symlinked topology"), ("{in}/faults.yml", "fault schedule")],
    "results": [("{in}/quick", "results"), ("{in}/aa", "A/A results"),
                ("{in}/link-dir", "symlinked results")],
    "profile": [("{in}/profile.yml", "vNet profile")],
    "programs": [("{in}/programs", "programs")],
    "run root": [("{scratch}", "a directory without runs"), ("{in}/dir", "an empty directory"),
                 ("{scratch}/new", "no directory")],
}
WRONG_KIND = {"topology": [("{in}/dir", "a directory"), ("{in}/file.txt", "not YAML"),
                           ("{in}/quick/run.json", "JSON, not a topology")],
              "results": [("{in}/file.txt", "a file"), ("{in}/dir", "an empty directory"),
                          ("{in}/topo", "a directory of topologies")],
              "profile": [("{in}/dir", "a directory"), ("{in}/topo/two-sites.yml",
                                                        "a topology, not a profile")],
              "programs": [("{in}/file.txt", "a file"), ("{in}/dir", "an empty directory")],
              "run root": [("{in}/file.txt", "a file")]}


def input_paths(role: str, only_bad: bool) -> st.SearchStrategy[Draw]:
    good = st.sampled_from(GOOD_INPUTS[role]).map(lambda p: Draw(p[0], UNKNOWN, p[1]))
    wrong = st.sampled_from((WRONG_RUN_ROOTS if role == "run root" else WRONG_PATHS)
                            + WRONG_KIND[role]).map(
        lambda p: Draw(p[0], INVALID, p[1]))
    if only_bad:
        return wrong
    options = [good, wrong]
    if role in ("topology", "profile"):
        options.append(mutants(role))
    if role == "results":
        options.append(mutated_results())
    return st.one_of(*options)


def output_paths(role: str, only_bad: bool) -> st.SearchStrategy[Draw]:
    good = [("{scratch}/new", "a new path"), ("{scratch}/new/deeper", "a new path, deeper"),
            ("{scratch}/\udcff\u2603 x", "an undecodable, unicode name")]
    if role == "output dir":
        good.append(("{scratch}", "an existing empty directory"))
    # an empty path is the working directory (Path('') is Path('.')): a place like another
    good.append(("", "empty path"))
    wrong = [("/proc/vnetbench-fuzz", "an unwritable place"),
             ("{scratch}/" + "n" * 300, "over-long name"), ("{in}/file.txt/x", "under a file"),
             ("{in}/loop", "symlink loop")]
    wrong.append(("{in}/file.txt", "a file") if role == "output dir"
                 else ("{in}/dir", "a directory"))
    wrong_ones = st.sampled_from(wrong).map(lambda p: Draw(p[0], INVALID, p[1]))
    if only_bad:
        return wrong_ones
    return st.one_of(st.sampled_from(good).map(lambda p: Draw(p[0], UNKNOWN, p[1])),
                     wrong_ones)


# ------------------------------------------------------------ YAML and JSON mutants

# libyaml's emitter when PyYAML has it: the same text (3000 mutants compared), a fifth
# of the pure-Python dumper's time (1200 mutants a run)
SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
BIG = "FUZZBIGINTEGER"  # a 5000-digit integer, put in the YAML text after dumping
WEIRD = [None, -1, 0, 10**30, BIG, float("nan"), float("inf"), "", "\u2603" * 50,
         [], {}, True, 1e308, LONG, [1, 2], {"a": 1}, "-1", "1e309"]
CERTAINLY_WRONG = {"10**30", "5000 digits", "nan", "inf"}


def weird_label(value: Any) -> str:
    if value == BIG:
        return "5000 digits"
    if isinstance(value, int) and not isinstance(value, bool) and value > 10**20:
        return "10**30"
    if isinstance(value, float) and value != value:
        return "nan"
    if value == float("inf"):
        return "inf"
    return repr(value)[:20]


def leaves(node: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*at, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from leaves(value, (*at, index))


def node_at(node: Any, at: tuple[Any, ...]) -> Any:
    for key in at:
        node = node[key]
    return node


def set_at(node: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    node[at[0]] = set_at(node[at[0]], at[1:], value)
    return node


def without(node: Any, at: tuple[Any, ...]) -> Any:
    if len(at) == 1:
        del node[at[0]]
    else:
        without(node[at[0]], at[1:])
    return node


def sources(role: str) -> list[Path]:
    if role == "profile":
        return [REPO / "vnetbench/overlays/vnet/profile.yml"]
    return [*TOPOLOGIES.glob("*.yml"), *(DATA / "topologies").glob("*.yml")]


SOURCES = {role: [(p.name, yaml.safe_load(p.read_text())) for p in sources(role)]
           for role in ("topology", "profile")}
SOURCES["topology"].append(("faults.yml", yaml.safe_load(FAULTS)))
SOURCES["workload"] = [("contest.yml", yaml.safe_load(
    (REPO / "vnetbench/data/workloads/contest.yml").read_text()))]


@st.composite
def mutated(draw: st.DrawFn, role: str) -> tuple[str, str, str]:
    """(YAML text, validity, what): a shipped document with one to three changes."""
    name, original = draw(st.sampled_from(SOURCES[role]))
    document = json.loads(json.dumps(original))
    validity, what = UNKNOWN, []
    for _ in range(draw(st.integers(1, 3))):
        paths = list(leaves(document))[1:]
        change = draw(st.sampled_from(["replace", "delete", "add", "text"] if paths
                                      else ["add", "text"]))
        if change == "replace":
            at = draw(st.sampled_from(paths))
            value = copy.deepcopy(draw(st.sampled_from(WEIRD)))  # WEIRD stays as it is
            document = set_at(document, at, value)
            what.append(f"{'.'.join(map(str, at))}={weird_label(value)}")
        elif change == "delete":
            at = draw(st.sampled_from(paths))
            document = without(document, at)
            what.append(f"no {'.'.join(map(str, at))}")
        elif change == "add" and isinstance(document, dict):
            document["fuzz_unknown_key"] = 1
            what.append("unknown key")
        else:
            what.append("text")
    if (isinstance(document, dict) and any(weird_label(node_at(document, at)) in CERTAINLY_WRONG
                                          for at in leaves(document))) or (
            isinstance(document, dict) and "fuzz_unknown_key" in document):
        validity = INVALID  # a value no field takes, or a key no model has, is still there
    text = yaml.dump(document, Dumper=SAFE_DUMPER, allow_unicode=True,
                     sort_keys=False).replace(BIG, "9" * 5000)
    if what[-1] == "text":  # the text cut or grown: what it holds is no longer known
        validity = UNKNOWN
        cut = draw(st.integers(0, len(text)))
        text = draw(st.sampled_from([text[:cut], text[:cut] + ": [\n" + text[cut:],
                                     text + text[:cut], "\ufeff" + text, text + "\n---\nx: 1\n"]))
    return text, validity, f"{name} mutated ({', '.join(what)})"


def mutants(role: str) -> st.SearchStrategy[Draw]:
    return mutated(role).map(lambda m: Draw("mutant:" + m[0], m[1], m[2]))


@st.composite
def mutated_results(draw: st.DrawFn) -> Draw:
    """A copy of a recorded results directory, one value in run.json or noise.json
    changed (written per case: 'results-mutant:SOURCE:FILE:JSON path:value')."""
    source = draw(st.sampled_from(["results-quick", "ab-aa-baseline"]))
    name = draw(st.sampled_from(["run.json", "noise.json"] if source == "ab-aa-baseline"
                                else ["run.json"]))
    document = json.loads((DATA / source / name).read_text())
    at = draw(st.sampled_from(list(leaves(document))[1:]))
    value: Any = draw(st.sampled_from([None, -1, 10**30, "", "n/a", [], {}, True, "\u2603",
                                       1e308]))
    set_at(document, at, value)
    return Draw("results-mutant:" + json.dumps([source, name, document]), UNKNOWN,
                f"{source}/{name} {'.'.join(map(str, at))}={value!r}"[:80])


# ---------------------------------------------------------------- one case


@functools.cache
def values(command: str, param: Param, only_bad: bool = False) -> st.SearchStrategy[Draw]:
    """A parameter's values; only_bad: only those wrong by construction (the poison)."""
    if param.flag:
        return st.just(Draw("", UNKNOWN))
    if param.kind is Path:
        role = path_role(command, param)
        return (output_paths(role, only_bad) if role.startswith("output ")
                else input_paths(role, only_bad))
    if param.kind in (int, float):
        return numbers(param.kind, only_bad)
    found = choices(param.kind)
    if found:
        wrong = bad([*BAD_TEXT[:6], found[0].upper() + "x"], "not a choice")
        return wrong if only_bad else st.one_of(
            st.sampled_from(found).map(drawn(UNKNOWN, "a choice")), wrong)
    return strings(param, only_bad)


def words(param: Param, value: Draw) -> list[str]:
    if param.flag:
        return [value.text or (param.secondary or param.opts)[0]] if param.opts else []
    return [param.opts[0], value.text] if param.opts else [value.text]


EXTRAS = [(["--fuzz-unknown-option"], "unknown option"), (["extra-argument"], "extra argument"),
          (["--help", "--fuzz-unknown-option"], "help and an unknown option")]


@st.composite
def cases(draw: st.DrawFn, command: str) -> list[tuple[list[str], Draw]]:
    """[(words, value)]: the parameters given, the required ones always, and for an engine
    command one poison: a value that is INVALID."""
    params = COMMANDS[command]
    chosen = [p for p in params if p.required or draw(st.booleans())]
    poison = None
    if command in ENGINE_COMMANDS:
        poisonable = [p for p in params if not p.flag]
        pick = draw(st.integers(0, len(poisonable))) if poisonable else 0
        if pick < len(poisonable):
            poison = poisonable[pick]
            if poison not in chosen:
                chosen.append(poison)
    given: list[tuple[list[str], Draw, Param | None]] = []
    for param in chosen:
        if param.flag:
            flag = draw(st.sampled_from([*param.opts, *param.secondary]))
            given.append(([flag], Draw(flag, UNKNOWN, "flag"), param))
            continue
        count = draw(st.integers(1, 3)) if param.many else 1
        for index in range(count):
            value = draw(values(command, param, param is poison and index == 0))
            given.append((words(param, value), value, param))
    out = own_input_as_output(draw, command, given)
    if draw(st.integers(0, 3)) == 0:
        out.append(([], draw(environment(command, {p.name for p in chosen}))))
    if (command in ENGINE_COMMANDS and poison is None) or draw(st.integers(0, 19)) == 0:
        extra, what = draw(st.sampled_from(EXTRAS))
        out.append((extra, Draw(" ".join(extra), INVALID, what)))
    # options before, between or after arguments, as a user may write them
    return draw(st.permutations(out))


def own_input_as_output(draw: st.DrawFn, command: str,
                        given: list[tuple[list[str], Draw, Param | None]]
                        ) -> list[tuple[list[str], Draw]]:
    """Now and then, an output path that is one of the case's own inputs (a results
    directory, its results.parquet, a topology file): INVALID, whatever it would do."""
    outputs = [p for p in COMMANDS[command] if p.kind is Path
               and path_role(command, p).startswith("output ") and p.opts]
    inputs = [d.text for _, d, p in given if p is not None and p.kind is Path
              and not path_role(command, p).startswith("output ")
              and d.text.startswith("{in}/") and d.validity != INVALID]
    if not outputs or not inputs or draw(st.integers(0, 3)) != 0:
        return [(words, value) for words, value, _ in given]
    param = draw(st.sampled_from(outputs))
    source = draw(st.sampled_from(inputs))
    if path_role(command, param) == "output file" and not source.endswith((".yml", "link-file")):
        source += draw(st.sampled_from(["/results.parquet", "/run.json"]))
    kept = [(words, value) for words, value, p in given if p is not param]
    return [*kept, ([param.opts[0], source], Draw(source, INVALID, "own input"))]


# Environment variables: the seed's BENCH_* settings (every topology read applies them,
# unless an option of the same setting is given) and BENCH_OUT (where --out is not given)
TOPOLOGY_READERS = {"validate", "render", "run", "up", "matrix"}
OUT_FROM_ENVIRONMENT = {"run", "sweep", "capacity", "ab", "up"}
SETTING_VARIABLES = {"BENCH_SECONDS": "seconds", "BENCH_PASSES": "passes",
                     "BENCH_MACHINES": "machines", "BENCH_FLOOD_MBIT": "flood_mbit",
                     "BENCH_TLS": "tls", "BENCH_LIMITS": "limits"}
BAD_OUT = ["{in}/file.txt", "{in}/file.txt/x", "/proc/vnetbench-fuzz", "{in}/" + "n" * 300]


@st.composite
def environment(draw: st.DrawFn, command: str, options: set[str]) -> Draw:
    """One environment variable with a wrong value (INVALID where the command reads it)."""
    name = draw(st.sampled_from([*SETTING_VARIABLES, "BENCH_OUT", "VNETBENCH_VNET_PROFILE"]))
    if name == "BENCH_OUT":
        value = draw(st.sampled_from(BAD_OUT))
        read = command in OUT_FROM_ENVIRONMENT and "out" not in options
    elif name == "VNETBENCH_VNET_PROFILE":  # read for vNet only
        value = draw(st.sampled_from(["{in}/nowhere.yml", "{in}/binary.yml", "{in}/dir"]))
        read = False
    else:
        value = draw(st.sampled_from(["maybe", "\u2603"] if name in ("BENCH_TLS", "BENCH_LIMITS")
                                     else BAD_NUMBER[:10]))
        read = command in TOPOLOGY_READERS and SETTING_VARIABLES[name] not in options
    return Draw(f"env:{name}={value}", INVALID if read and value else UNKNOWN,
                f"{name}={value[:20]!r}")


def materialise(world: World, given: list[tuple[list[str], Draw]]
                ) -> tuple[list[str], dict[str, str]]:
    """The argv and environment, with mutants written under {in}/mut and places filled."""
    argv: list[str] = []
    env: dict[str, str] = {}
    for number, (parts, value) in enumerate(given):
        if value.text.startswith("env:"):
            name, _, text = value.text.removeprefix("env:").partition("=")
            env[name] = fill(world, text, number)
        for part in parts:
            argv.append(fill(world, part, number))
    return argv, env


def fill(world: World, text: str, number: int) -> str:
    if "mutant:" in text and not text.startswith("results-mutant:"):
        prefix, _, document = text.partition("mutant:")  # KEY=mutant:... for ab's arms
        path = world.root / "mut" / f"m{number}.yml"
        path.write_text(document)
        return prefix + str(path)
    if text.startswith("results-mutant:"):
        source, name, document = json.loads(text.removeprefix("results-mutant:"))
        directory = world.root / "mut" / f"r{number}"
        shutil.copytree(DATA / source, directory)
        (directory / name).write_text(json.dumps(document))
        return str(directory)
    return text.replace("{in}", str(world.root)).replace("{scratch}", str(world.scratch))


# ---------------------------------------------------------------- the engine stand-in


REACHED: list[str] = []  # this case's calls of the engine (one list: see import_everything)


def refuse(what: str) -> Callable[..., Any]:
    def call(*args: object, **kwargs: object) -> Any:
        REACHED.append(what)
        raise ReachedEngine(what)
    return call


def import_everything() -> None:
    """Every module of the package imported before the stand-in is put in place, so
    none binds a stand-in by `from vnetbench.engines import ...` for good (it would
    outlive the test, and hold a case's list)."""
    import importlib
    import pkgutil

    import vnetbench

    for module in pkgutil.walk_packages(vnetbench.__path__, "vnetbench."):
        if module.name.endswith("__main__"):
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(module.name)


@contextlib.contextmanager
def engine_stand_in(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every way to the engine raises ReachedEngine and is recorded in REACHED."""
    import vnetbench.engines as engines
    import vnetbench.engines.docker as docker

    real_init = subprocess.Popen.__init__

    def popen(self: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
        argv = [args] if isinstance(args, str | bytes | os.PathLike) else list(args)
        if Path(str(argv[0]).split()[0]).name in HOST_TOOLS:
            real_init(self, args, *rest, **kwargs)
            return
        REACHED.append(f"process {' '.join(map(str, argv))[:80]}")
        raise ReachedEngine(REACHED[-1])

    REACHED.clear()
    with monkeypatch.context() as patch:
        patch.setattr(subprocess.Popen, "__init__", popen)
        for name in ("require_engine", "local", "engine_for", "every_engine",
                     "recorded_engine", "engine_facts"):
            patch.setattr(engines, name, refuse(f"vnetbench.engines.{name}"))
        for name in ("engine_version", "compose_version"):
            patch.setattr(docker, name, refuse(f"engines.docker.{name}"))
        yield REACHED


# ---------------------------------------------------------------- judging a case


@dataclass
class Outcome:
    command: str
    argv: list[str]
    given: list[Draw]
    exit_code: int | None
    exception: BaseException | None
    output: str
    reached: list[str]
    changed: list[str]

    def invalid(self) -> list[Draw]:
        return [d for d in self.given if d.validity == INVALID]


def defects(outcome: Outcome) -> list[str]:
    """What is wrong with a case's outcome, as classes (empty: it passed)."""
    found = []
    engine_command = outcome.command in ENGINE_COMMANDS
    if outcome.reached:
        if not engine_command and outcome.command not in ASK_ENGINE:
            found.append(f"reached the engine ({outcome.reached[0]})")
        elif outcome.invalid():
            found.append(f"reached the engine with invalid input ({outcome.reached[0]})")
    elif outcome.exception is not None and not isinstance(outcome.exception, SystemExit):
        found.append(f"traceback ({type(outcome.exception).__name__}: "
                     f"{str(outcome.exception)[:120]})")
    else:
        allowed = {0, 1, 2} if outcome.command in MEASURED_MISS else {0, 2}
        if outcome.exit_code not in allowed:
            found.append(f"exit status {outcome.exit_code}")
        if outcome.exit_code == 2:
            found += paragraph_problems(outcome)
        if outcome.exit_code == 0 and outcome.invalid():
            found.append(f"accepted {outcome.invalid()[0].what or 'invalid input'}")
        if engine_command and outcome.exit_code == 0:
            found.append("an engine command succeeded without the engine")
    if "Traceback" in outcome.output:
        found.append("a traceback printed")
    if outcome.changed:
        found.append(f"input changed ({', '.join(outcome.changed[:3])})")
    return found


def paragraph_problems(outcome: Outcome) -> list[str]:
    text = outcome.output.strip()
    paragraphs = 1
    if outcome.command == "validate":  # its files' "ok" lines, then a paragraph per refusal
        paragraphs = max(1, len([a for a in outcome.argv if not a.startswith("-")]))
        while text and not text.startswith("error: ") and ": ok (" in text.split("\n")[0]:
            text = text.partition("\n")[2]
    found = []
    if not text.startswith("error: "):
        found.append(f"exit 2 without 'error: ' first ({text[:60]!r})")
    if text.count("\n\n") >= paragraphs:
        found.append("exit 2 with more than one paragraph")
    if "\x1b" in text:
        found.append("an escape character echoed")
    return found


@dataclass(frozen=True)
class Known:
    """A defect another helper fixes (kept strict here, excused until merged)."""

    owner: str
    cls: str
    matches: Callable[[Outcome, str], bool]


def said(*fragments: str) -> Callable[[Outcome, str], bool]:
    return lambda outcome, defect: any(f in defect for f in fragments)


def gave(*fragments: str) -> Callable[[Outcome, str], bool]:
    return lambda outcome, defect: any(f in d.what for d in outcome.given for f in fragments)


def both(*tests: Callable[[Outcome, str], bool]) -> Callable[[Outcome, str], bool]:
    return lambda outcome, defect: all(t(outcome, defect) for t in tests)


def command_in(*names: str) -> Callable[[Outcome, str], bool]:
    return lambda outcome, defect: outcome.command in names


def only_invalid(*whats: str) -> Callable[[Outcome, str], bool]:
    return lambda outcome, defect: all(d.what in whats for d in outcome.invalid())


REACHED_INVALID = "reached the engine with invalid input"

# KNOWN: a class of defect the fuzzer finds and tolerates while it is being fixed
# elsewhere (each with its owner); empty: none is tolerated.
KNOWN: list[Known] = []

# TO_FIX: defects found in no other helper's area, each removed by the commit that fixed
# it (swarm up's --nodes, images vnet's --programs and profile, down's run id and --out,
# up's --out, an output file where none can be made, a symlink loop as --programs)
TO_FIX: list[Known] = []


EXCUSED: collections.Counter[str] = collections.Counter()  # cases per KNOWN/TO_FIX class


def unexcused(outcome: Outcome) -> list[str]:
    found = []
    for defect in defects(outcome):
        known = next((k for k in [*KNOWN, *TO_FIX] if k.matches(outcome, defect)), None)
        if known is None:
            found.append(defect)
        else:
            EXCUSED[f"{known.owner}: {known.cls}"] += 1
    return found


# ---------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    import_everything()
    return make_world(tmp_path_factory.mktemp("fuzz"))


def run_case(world: World, command: str, given: list[tuple[list[str], Draw]],
             monkeypatch: pytest.MonkeyPatch) -> Outcome:
    argv, env = materialise(world, given)
    before = snapshot(world.root)  # with this case's mutants
    exception: BaseException | None = None
    exit_code, output = None, ""
    with engine_stand_in(monkeypatch) as reached:
        try:
            result = runner.invoke(app, [*command.split(), *argv], env={
                "DOCKER_HOST": "unix:///nonexistent", "BENCH_OUT": str(world.scratch / "out"),
                "VNETBENCH_VNET_PROFILE": None, "VNETBENCH_SWARM": None, "COLUMNS": "100",
                **{name: None for name in SETTING_VARIABLES}, **env})
            exception, exit_code, output = result.exception, result.exit_code, result.output
        except ReachedEngine as error:
            exception = error
    after = snapshot(world.root)
    changed = changed_inputs(before, after)
    changed += [p for p, h in SHIPPED_HASHES.items() if sha256(Path(p)) != h]
    restore(world, after)
    return Outcome(command, [*argv, *(f"{n}={v}" for n, v in env.items())],
                   [d for _, d in given], exit_code, exception, output,
                   list(reached), changed)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_input_is_refused_in_one_paragraph_or_accepted(
        command: str, world: World, monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest) -> None:
    """No traceback, no engine, no input changed, whatever the command is given."""
    monkeypatch.chdir(world.scratch)  # default outputs (./results, ./history) land there
    failures: dict[str, list[str]] = {}  # by defect, the cases that show it
    count = 0
    started, cpu = time.perf_counter(), time.process_time()

    @settings(max_examples=max(1, BUDGET[command] // (PER_EXAMPLE // 2)), derandomize=True,
              database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(cases(command), min_size=1, max_size=PER_EXAMPLE))
    def case(batch: list[list[tuple[list[str], Draw]]]) -> None:
        nonlocal count
        for one in batch:
            count += 1
            outcome = run_case(world, command, one, monkeypatch)
            for defect in unexcused(outcome):
                short = shorter(world, defect)
                failures.setdefault(short[:70], []).append(
                    f"vnetbench {command} "
                    f"{shorter(world, ' '.join(map(repr, outcome.argv)))[:300]}"
                    f": {short} [{', '.join(d.what for d in outcome.given)}]"
                    f"\n    {shorter(world, outcome.output.strip())[:300]!r}")

    try:
        case()
    finally:
        print(f"{command}: {count} cases in {time.perf_counter() - started:.1f} s; excused "
              f"as KNOWN: {dict(EXCUSED)}")
        if os.environ.get("FUZZ_REPORT"):  # every defect's every case, for a closer look
            with open(os.environ["FUZZ_REPORT"], "a") as report:
                report.writelines(f"{line}\n" for cases in failures.values() for line in cases)
                report.writelines(f"excused {command}: {n} x {cls}\n" for cls, n in EXCUSED.items())
        EXCUSED.clear()
    request.node.user_properties.append(("cli_fuzzer_cases", count))
    request.node.user_properties.append(("cli_fuzzer_seconds", time.perf_counter() - started))
    request.node.user_properties.append(("cli_fuzzer_cpu", time.process_time() - cpu))
    assert not failures, f"{len(failures)} defects in {count} cases of {command}:\n" + "\n".join(
        f"{len(cases)} x {cases[0]}" for cases in failures.values())


def shorter(world: World, text: str) -> str:
    return (text.replace(str(world.root), "{in}").replace(str(world.scratch), "{scratch}")
            .replace("n" * 300, "n{x300}").replace(LONG, "x{x5000}"))


def test_every_command_is_fuzzed() -> None:
    """A new command gets a budget of cases here (and is listed as needing the engine
    or not), rather than the default by accident."""
    assert set(CASES) == set(COMMANDS)
    assert set(COMMANDS) >= ENGINE_COMMANDS | ASK_ENGINE
    assert sum(CASES.values()) >= 5000
