"""Bad inputs issue #61 found that the earlier sets did not: each refused in one paragraph
naming its source, exit status 2, no traceback, nothing started (`refused`, from
test_cli_inputs). Grouped by class: the YAML a user writes; values whose type or size
raised a traceback; checks that ran only after the engine was asked; and inputs that
made a command do nothing while saying it succeeded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib.font_manager  # noqa: F401 - its font cache runs fc-list once, first
import pytest

from tests.unit.test_cli_inputs import DATA, QUICK, damaged, refused, with_header

TWO_SITES = Path(__file__).parents[2] / "topologies" / "two-sites.yml"
FOUR_SITES = TWO_SITES.with_name("four-sites.yml")  # agent1..8 on north, east, south, west
TOPOLOGY = "name: t\nswitches: 2\nagents: 2\n"
BOMB = "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n"
               for i in range(8))
YAML_FILES = {
    "dup-links": TOPOLOGY + "links:\n  backbone: {loss: 5%}\nlinks:\n  site: {rate: 50mbit}\n",
    "dup-inline": TOPOLOGY + "links: {backbone: {loss: 5%, loss: 1%}}\n",
    "bomb": TOPOLOGY + "a: &a [x, x, x, x, x, x, x, x, x]\n" + BOMB + "links: *i\n",
    "loop": TOPOLOGY + "links: &l {site: *l}\n",
    "long-int": "name: t\nswitches: " + "9" * 5000 + "\nagents: 2\n",
    "deep": TOPOLOGY + "links: " + "[" * 50000 + "\n",
    "huge": TOPOLOGY + "# " + "x" * (2 << 20) + "\n",
    "dup-workload": "phases:\n  - {name: a, seconds: 5, at_once: 1, mix: {get: 1}}\n"
                    "phases: []\n",
    "dup-profile": "mtu: 1400\nmtu: 1300\n",
    "list-loss": TOPOLOGY + "links:\n  backbone: {loss: [50%]}\n",
    "null-loss": TOPOLOGY + "links:\n  backbone:\n    loss:\n",
    "null-delay": TOPOLOGY + "links:\n  backbone: {delay: }\n",
    "long-rate": TOPOLOGY + "links:\n  site: {rate: " + "9" * 45 + "mbit}\n",
    "one-switch": "name: t\nswitches: 1\nagents: 2\n",
    "small-burst": TOPOLOGY + "faults:\n  - {at: 1s, loss: 0.1%, for: 2s}\n",
    "aside": "name: t\nswitches: 3\nagents: 3\nmeasure: {from: agent2, to: agent3}\n"
             "faults:\n  - {at: 1s, partition: [[switch1], [switch2, switch3]], for: 2s}\n",
}
LONG = "a" * 300  # a name longer than NAME_MAX (255 bytes)


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp_path = tmp_path_factory.mktemp("places")
    found: dict[str, Path] = {"tmp": tmp_path, "quick": QUICK, "two-sites": TWO_SITES,
                              "four-sites": FOUR_SITES}
    for name, text in YAML_FILES.items():
        found[name] = tmp_path / f"{name}.yml"
        found[name].write_text(text)
    aa = DATA / "ab-aa-baseline"
    found |= {
        "tools-text": damaged(tmp_path, "tools-text", QUICK, with_header(images={
            "tools": "vnetbench/tools:trixie"})),
        "raw-na": damaged(tmp_path, "raw-na", QUICK, with_header(calibration={
            "raw_veth_mbit": "n/a"})),
        "timing-na": damaged(tmp_path, "timing-na", QUICK, with_header(cell_timings={
            "throughput/baseline/default": {"measure_s": "n/a"}})),
        "spec-number": damaged(tmp_path, "spec-number", aa, with_header(arms={
            "A": {"spec": [5], "overlay": "baseline"}, "B": {"spec": [], "overlay": "x"}})),
        "looks-text": damaged(tmp_path, "looks-text", aa, with_header(confirm={
            "looks": "8,16"})),
        "aa": aa}
    # a run `up` left, outside --out: shape '../elsewhere' read its run.json
    from vnetbench.model.topology import load_topology
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "run.json").write_text(json.dumps({
        "format_version": 2, "kind": "run", "run_id": "elsewhere",
        "topology": load_topology(TWO_SITES).model_dump(mode="json")}))
    (tmp_path / "results").mkdir()
    os.mkfifo(tmp_path / "fifo.yml")
    found["fifo"] = tmp_path / "fifo.yml"
    return {f"{{{name}}}": str(path) for name, path in found.items()}


YAML = [
    # a second key replaces the first: refused at its line
    (["validate", "{dup-links}"], "{dup-links} is not valid YAML at line 6, column 1: the key "
                                  "'links' is given twice (first at line 4)"),
    (["validate", "{dup-inline}"],
     "line 4, column 30: the key 'loss' is given twice (first at line 4)"),
    (["run", "room", "-t", "{dup-links}"], "the key 'links' is given twice"),
    (["run", "room", "-t", "{two-sites}", "--workload",
      "{dup-workload}"],
     "{dup-workload} is not valid YAML at line 3, column 1: the key 'phases' is given twice"),
    (["run", "throughput", "-t", "{dup-links}", "--overlay", "vnet", "--vnet-profile",
      "{dup-profile}"], "the key 'links' is given twice"),
    (["ab", "throughput", "--b", "vnet-profile={dup-profile}"],
     "The vNet profile {dup-profile} is not valid YAML at line 2, column 1: the key 'mtu'"),
    (["ab", "throughput", "--b", "option.wireguard.x={a: 1, a: 2}"],
     "cannot be read (the key 'a' is given twice"),
    # aliases: bounded, and no loop
    (["validate", "{bomb}"], "aliases expand to more than 100000 values"),
    (["validate", "{loop}"], "an alias refers to the value that holds it"),
    (["ab", "throughput", "--b", "option.wireguard.x=&a [*a]"],
     "an alias refers to the value that holds it"),
    # an integer past Python's int-string limit, in a file and in an arm's value
    (["validate", "{long-int}"], "line 2, column 11: an integer of 5000 characters"),
    (["ab", "throughput", "--b", "option.wireguard.mtu=" + "1" * 5000],
     "an integer of 5000 characters"),
    # nesting past Python's stack; a file larger than any topology
    (["validate", "{deep}"], "{deep} is not valid YAML: it is nested too deeply to read"),
    (["validate", "{huge}"], "{huge} cannot be read as a YAML text file (it is "),
]



TRACEBACKS = [
    # a list or nothing where a link's value is one string
    (["validate", "{list-loss}"], "links.backbone.loss: list ['50%'] is not a percentage: "
                                  "write one value, e.g. '1%'"),
    (["validate", "{null-loss}"], "links.backbone.loss: nothing is not a percentage"),
    (["validate", "{null-delay}"], "links.backbone.delay: nothing is not a duration"),
    (["run", "throughput", "-t", "{list-loss}"], "list ['50%'] is not a percentage"),
    # a number too long to be one (float() read it as infinity; int() of that raised)
    (["validate", "{long-rate}"], "links.site.rate: '99999999999999999999999999999999999999"
                                  "99...' is a number of 45 characters"),
    (["ab", "throughput", "--b", "site.rate=" + "9" * 5000 + "mbit"],
     "is a number of 5000 characters"),
    (["ab", "throughput", "--b", "backbone.delay=" + "9" * 5000 + "ms"],
     "is a number of 5000 characters"),
    # a results directory's run.json with a wrong type where its readers index
    (["report", "{tools-text}"], "{tools-text}/run.json is not a run.json vnetbench wrote "
                                 "(images.tools: input should be a valid dictionary)"),
    (["compare", "{tools-text}", "{quick}"], "images.tools: input should be a valid"),
    (["history", "{quick}", "{tools-text}", "--label-from", "tools", "--out", "{tmp}/h"],
     "images.tools: input should be a valid dictionary"),
    (["export", "{tools-text}", "--format", "bencher", "-o", "-"], "images.tools: input"),
    (["report", "{raw-na}"], "{raw-na}/run.json is not a run.json vnetbench wrote "
                             "(calibration: raw_veth_mbit: input should be a valid number"),
    (["report", "{timing-na}"], "(cell_timings.throughput/baseline/default: measure_s: "
                                "input should be a valid number"),
    (["report", "{spec-number}"], "(arms.A: spec.0: input should be a valid string"),
    (["report", "{looks-text}"], "(confirm: looks: input should be a valid list"),
    # a name longer than the system allows, as an argument, an option and inside a value
    (["validate", f"{LONG}.yml"], "aaaa...aaaaaaaa.yml: its name is longer than this system "
                                  "allows (a file or directory name is at most 255 bytes"),
    (["report", f"{{tmp}}/{LONG}"], "its name is longer than this system allows"),
    (["compare", "{quick}", "{quick}", "--json-file", f"{{tmp}}/{LONG}.json"],
     "its name is longer"),
    (["export", "{quick}", "--format", "bencher", "-o", f"{{tmp}}/{LONG}"], "its name is"),
    (["history", "{quick}", "{aa}", "--out", f"{{tmp}}/{LONG}"], "its name is longer"),
    (["run", "room", "-t", "{two-sites}", "--workload", f"{LONG}.yml"], "its name is longer"),
    (["ab", "throughput", "--b", f"topology={LONG}.yml"], "its name is longer"),
    (["render", "{two-sites}", "-o", f"{{tmp}}/{LONG}"], "its name is longer"),
    (["validate", "/" + "a/" * 2100], "its name is longer than this system allows"),
]



BEFORE_THE_ENGINE = [
    # sweep: its scenario was looked up, and checked against the topology, only once
    # the engine had answered
    (["sweep", "banana", "-t", "{two-sites}", "--set", "backbone.loss=1,2"],
     "There is no scenario called 'banana'"),
    (["sweep", "failover", "-t", "{one-switch}", "--set", "backbone.loss=1,2"],
     "The failover scenario needs two switches; topology 't' has 1"),
    # shape: a run id is a name, not a path out of --out
    (["shape", "../elsewhere", "--out", "{tmp}/results", "--set", "backbone.loss=1%"],
     "'../elsewhere' is not a run id: a run id is lower-case letters"),
    (["shape", "/etc", "--out", "{tmp}/results"], "'/etc' is not a run id"),
    # a loss burst failover's probes would most likely not see (0.2 probes lost)
    (["run", "failover", "-t", "{two-sites}", "--fault", "loss=1%,for=200ms"],
     "faults.0 (1% loss on the backbone for 200ms) would most likely lose no probe"),
    (["ab", "failover", "-t", "{small-burst}"], "would most likely lose no probe"),
    # a closed loop pausing a pass or longer (wrk's delay comes before the first
    # request too): every machine idle, the pass an empty room
    (["run", "room", "-t", "{two-sites}", "--room-loop", "closed", "--room-rate", "0.1",
      "--seconds", "5"], "room_rate 0.1 with seconds 5: the closed loop waits 1/rate (10 s) "
     "before each request, the first included, so no machine would send a request"),
    (["ab", "room", "-t", "{two-sites}", "--b", "room_loop=closed", "--b", "room_rate=0.1"],
     "room_rate 0.1 with seconds 10: the closed loop waits 1/rate (10 s)"),
]



OFF_THE_PATH = [
    # a fault no packet of the measured pair or room meets: measured as if nothing
    # happened, and reported as a fault run
    (["run", "throughput", "-t", "{four-sites}", "--pair", "agent1,agent5", "--fault",
      "loss=50%,for=2s"], "Topology 'four-sites' with baseline: faults.0 (50% loss on the "
     "backbone for 2s): every measured agent is on north, so no packet of theirs crosses "
     "the backbone between switches. The stream from agent1 to agent5 would measure as if "
     "no fault happened"),
    (["run", "throughput", "-t", "{four-sites}", "--pair", "agent1,agent2", "--fault",
      "kill=south,restart_after=2s"], "faults.0 (south killed, started again after 2s): "
     "south holds no measured agent, and baseline's packets cross only the switches of "
     "their ends (east, north)"),
    (["run", "throughput", "-t", "{aside}"], "faults.0 (switches partitioned (switch1 | "
     "switch2, switch3) for 2s): the measured agents' switches (switch2, switch3) are all "
     "on one side of it"),
    (["run", "room", "-t", "{four-sites}", "--machines", "1", "--fault",
      "kill=east,restart_after=2s"], "east holds no measured agent, and baseline's packets "
     "cross only the switches of their ends (north, west). The room would measure"),
    (["ab", "throughput", "-t", "{aside}"], "are all on one side of it"),
]

NOTHING_IN_COMMON = [
    # an empty comparison exited 0: read by a CI job as "no regression"
    (["compare", "{quick}", "{aa}"], "{quick} and {aa} have no metric measured in both "
     "({quick} measured throughput/baseline/default; {aa} measured throughput/baseline/A, "
     "throughput/baseline/B), so there is nothing to compare"),
    (["history", "{quick}", "{aa}", "--out", "{tmp}/h"], "history: no headline metric was "
     "measured in two of the directories ({quick}: throughput/baseline/default; {aa}: "),
]



IGNORED = [
    # an option the workload replaces
    (["run", "room", "-t", "{two-sites}", "--workload", "contest", "--room-timeout-s", "3"],
     "--room-timeout-s 3: the room's workload (contest) runs with its own timeout_s (60 s) "
     "in its place, so it would be ignored"),
    (["run", "room", "-t", "{two-sites}", "--workload", "contest", "--room-rate", "3",
      "--room-sizes", "200,400"], "--room-rate 3, --room-sizes 200,400: the room's workload "
     "(contest) runs with its phases' rates and its phases' sizes in its place"),
    # the open loop's settings on the closed loop
    (["run", "room", "-t", "{two-sites}", "--room-loop", "closed", "--room-arrivals",
      "poisson"], "room_arrivals poisson: the closed loop has no schedule of arrivals"),
    (["run", "room", "-t", "{two-sites}", "--room-loop", "closed", "--room-connections",
      "2"], "room_connections 2: the closed loop"),
]



ARMS = [
    # an arm setting what it does not run, or one vNet role's image twice
    (["ab", "throughput", "--b", "option.wireguard.mtu=1300"],
     "--b option.wireguard.mtu=1300: the arm runs baseline, not wireguard, so it would be "
     "ignored"),
    (["ab", "throughput", "--a", "vnet-image=example/vnet:1"],
     "--a vnet-image=example/vnet:1: the arm runs baseline, not vnet"),
    (["ab", "throughput", "--b", "overlay=vnet", "--b", "vnet-image=example/vnet:1",
      "--b", "vnet-image=example/vnet:2"], "the arm gives every role's vNet image twice"),
]

NOT_A_FILE = [
    # a FIFO was "no topology file"; reading it would block for ever
    (["validate", "{fifo}"], "{fifo} is a FIFO (a named pipe), not a regular file. Give the "
                             "path of a YAML topology"),
    (["run", "room", "-t", "{two-sites}", "--workload", "{fifo}"],
     "{fifo} is a FIFO (a named pipe), not a regular file. Give the path of a YAML workload"),
    (["run", "throughput", "-t", "{two-sites}", "--overlay", "vnet", "--vnet-profile",
      "{fifo}"], "{fifo} is a FIFO (a named pipe), not a regular file"),
    (["ab", "throughput", "--b", "topology={fifo}"], "{fifo} is a FIFO (a named pipe)"),
]

NINES = "9" * 5000
ECHOED = [
    # a 5000-character value was echoed whole, twice: ten thousand characters of error
    (["run", "throughput", "-t", "{two-sites}", "--slo", f"throughput.tcp_mbit>={NINES}"],
     f"'{'9' * 39}...(5000 characters)' is not a number for throughput.tcp_mbit"),
    (["ab", "throughput", "--b", "backbone.loss=" + "x" * 5000],
     "--b backbone.loss=xxxxxxxxxxxxxxxxxxxxxxxxxx...(5014 characters): 'xxxxxxxx"),
    (["run", "x" * 5000, "-t", "{two-sites}"],
     f"There is no scenario called '{'x' * 39}...(5000 characters)'. Available: "),
    (["run", "throughput", "-t", "{two-sites}", "--fault", "kill=" + "x" * 5000],
     "(5000 characters)"),
    (["run", "room", "-t", "{two-sites}", "--room-sizes", NINES], "(5000 characters)"),
]


# each class of the issue, its cases: every one refused in one paragraph that says this
GROUPS = {"a user's YAML read strictly": YAML,
          "a value of the wrong type or size, no traceback": TRACEBACKS,
          "checked before the engine is asked": BEFORE_THE_ENGINE,
          "a comparison of nothing": NOTHING_IN_COMMON,
          "an option that would be ignored": IGNORED,
          "an arm runs what it sets": ARMS,
          "a path that is no file to read": NOT_A_FILE,
          "a fault off the measured path": OFF_THE_PATH,
          "a huge value echoed as its start and its length": ECHOED}
CASES = [(group, args, expected) for group, cases in GROUPS.items()
         for args, expected in cases]


@pytest.mark.parametrize(("group", "args", "expected"), CASES,
                         ids=[f"{g}: {' '.join(a)[:60]}" for g, a, _ in CASES])
def test_each_class_is_refused_in_one_paragraph_saying_why(
        group: str, args: list[str], expected: str, places: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    said = refused(args, places, monkeypatch)
    for name, path in places.items():
        expected = expected.replace(name, path)
    assert expected in said, said
    assert len(said) < 1000, said  # a paragraph, not the echo of a huge value
