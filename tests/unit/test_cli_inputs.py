"""Bad inputs of the newer commands (ab, capacity, run --fault, history, export, report,
render, compare): each refused in one paragraph naming its source, exit status 2, no
traceback, and nothing started: no process is spawned (the engine is asked through the
Docker CLI, and DOCKER_HOST points nowhere besides) and no results directory is made.

The first set is the classes issue #36 found; the second a held-out set of others; the
third (LATER_HELD_OUT) what a later held-out set of 141 found (38 of them failed)."""

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from vnetbench.cli import app

runner = CliRunner()
DATA = Path(__file__).parent.parent / "data"
QUICK = DATA / "results-quick"
TOPOLOGY = Path(__file__).parents[2] / "topologies" / "two-sites.yml"


def damaged(root: Path, name: str, source: Path, change: Callable[[Path], None]) -> Path:
    directory = Path(shutil.copytree(source, root / name))
    change(directory)
    return directory


def with_header(**entries: object) -> Callable[[Path], None]:
    def change(directory: Path) -> None:
        header = json.loads((directory / "run.json").read_text())
        (directory / "run.json").write_text(json.dumps({**header, **entries}))
    return change


def with_noise(value: float) -> Callable[[Path], None]:
    def change(directory: Path) -> None:
        record = json.loads((directory / "noise.json").read_text())
        first = next(iter(record["metrics"]))
        record["metrics"][first]["noise_pct"] = value
        (directory / "noise.json").write_text(json.dumps(record))
    return change


def with_frame(change: Callable[[pd.DataFrame], pd.DataFrame]) -> Callable[[Path], None]:
    def write(directory: Path) -> None:
        frame = change(pd.read_parquet(directory / "results.parquet"))
        frame.to_parquet(directory / "results.parquet")
        (directory / "results.csv").unlink(missing_ok=True)  # no copy to fall back on
    return write


def with_run_file(make: Callable[[Path], None]) -> Callable[[Path], None]:
    def change(directory: Path) -> None:
        (directory / "run.json").unlink()
        make(directory / "run.json")
    return change


def string_values(directory: Path) -> None:
    frame = pd.read_parquet(directory / "results.parquet")
    frame.assign(value=frame["value"].astype(str)).to_parquet(directory / "results.parquet")


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """{name}: the files and directories the arguments name (made once: every case is
    refused, so none changes them, and `refused` checks that none writes)."""
    tmp_path = tmp_path_factory.mktemp("places")
    aa = DATA / "ab-aa-baseline"
    found = {
        "garbage": damaged(tmp_path, "garbage", QUICK, lambda d: (
            d / "results.parquet").write_bytes(b"PAR1 not a parquet file")),
        "foreign": damaged(tmp_path, "foreign", QUICK, lambda d: pd.DataFrame(
            {"x": [1]}).to_parquet(d / "results.parquet")),
        "listed-overlays": damaged(tmp_path, "listed-overlays", QUICK,
                                   with_header(overlays=["wireguard"])),
        "empty-verdicts": damaged(tmp_path, "empty-verdicts", aa,
                                  lambda d: (d / "verdicts.csv").write_text("")),
        "negative-noise": damaged(tmp_path, "negative-noise", aa, with_noise(-5)),
        "both-copies-gone": damaged(tmp_path, "both-copies-gone", QUICK, lambda d: (
            (d / "results.parquet").write_bytes(b"x"), (d / "results.csv").write_text(""))),
        "listed-arms": damaged(tmp_path, "listed-arms", aa, with_header(arms=["A", "B"])),
        "text-values": damaged(tmp_path, "text-values", QUICK, string_values),
        "infinite-noise": damaged(tmp_path, "infinite-noise", aa, with_noise(float("inf"))),
        "nan-pass": damaged(tmp_path, "nan-pass", QUICK, with_frame(lambda f: f.assign(
            **{"pass": f["pass"].astype(float).where(f.index > 0)}))),
        "twice": damaged(tmp_path, "twice", QUICK, with_frame(lambda f: pd.concat([f, f]))),
        "inf-values": damaged(tmp_path, "inf-values", QUICK, with_frame(lambda f: f.assign(
            value=float("inf")))),
        "two-units": damaged(tmp_path, "two-units", QUICK, with_frame(lambda f: f.assign(
            unit=f["unit"].where(f.index % 2 == 0, "Gbit/s")))),
        "negative-pass": damaged(tmp_path, "negative-pass", QUICK, with_frame(
            lambda f: f.assign(**{"pass": -f["pass"]}))),
        "negative-rate": damaged(tmp_path, "negative-rate", QUICK, with_frame(
            lambda f: f.assign(value=f["value"].where(f["unit"] != "Mbit/s", -5.0)))),
        "fifo-run": damaged(tmp_path, "fifo-run", QUICK, with_run_file(os.mkfifo)),
        "zero-run": damaged(tmp_path, "zero-run", QUICK, with_run_file(
            lambda path: path.symlink_to("/dev/zero"))),
        "newer": damaged(tmp_path, "newer", QUICK, with_header(format_version=999)),
        "banana": damaged(tmp_path, "banana", QUICK, with_header(kind="banana")),
        "huge-switches": tmp_path / "huge.yml",
        "binary": tmp_path / "binary.yml",
        "failover": tmp_path / "failover.yml",
        "bracketed": tmp_path / "two-sites[draft].yml",
        "quick": QUICK, "aa": aa, "tmp": tmp_path, "cost-sizes": DATA / "cost-sizes",
    }
    found["huge-switches"].write_text(f"name: t\nswitches: {10**30}\nagents: 2\n")
    found["binary"].write_bytes(bytes(range(256)))
    found["failover"].write_text("name: t\nswitches: 2\nagents: 2\n")
    found["bracketed"].write_text("name: t\nswitches: 2\nagents: [{name: a, switch: nowhere}]\n")
    return {f"{{{name}}}": str(path) for name, path in found.items()}


def refused(args: list[str], places: dict[str, str], monkeypatch: pytest.MonkeyPatch
            ) -> str:
    """The one paragraph a refusal prints (asserting exit 2, no traceback, nothing
    started); whitespace folded."""
    started: list[object] = []

    def nothing_starts(self: object, command: object, *args: object, **kwargs: object
                       ) -> None:
        started.append(command)  # kept, whoever catches the error below
        raise OSError(f"a process was started: {command}")

    monkeypatch.setattr(subprocess.Popen, "__init__", nothing_starts)
    out = Path(places["{tmp}"]) / "out"
    given = [places.get(a, a) for a in args]
    for name, path in places.items():
        given = [a.replace(name, path) for a in given]
    result = runner.invoke(app, given, env={"DOCKER_HOST": "unix:///nonexistent",
                                            "BENCH_OUT": str(out)})
    assert started == [], started
    assert isinstance(result.exception, SystemExit), (given, result.exception)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.output.startswith("error: "), result.output  # one paragraph, nothing before
    assert "\n\n" not in result.output.strip()
    assert "\x1b" not in result.output  # an ESC echoed from the input is shown escaped
    assert "engine does not answer" not in result.output
    assert not out.exists() or not any(out.iterdir())
    return " ".join(result.output.split())


CLASSES = [
    # YAML in an arm's value; a link value of only commas
    (["ab", "throughput", "--a", "seconds=[1"], "--a seconds=[1: the value '[1' cannot be"),
    (["ab", "throughput", "--b", "backbone.loss=,"], "--b backbone.loss=,: no value for"),
    # a damaged or foreign results directory, named by file, for each reader
    (["report", "{garbage}"], "{garbage}/results.parquet cannot be read"),
    (["report", "{foreign}"], "{foreign}/results.parquet is not a results file"),
    (["report", "{listed-overlays}"], "{listed-overlays}/run.json is not a run.json vnetbench "
                                      "wrote (overlays: input should be a valid dictionary)"),
    (["report", "{empty-verdicts}"], "{empty-verdicts}/verdicts.csv cannot be read"),
    (["compare", "{garbage}", "{quick}"], "{garbage}/results.parquet cannot be read"),
    (["compare", "{quick}", "{foreign}"], "{foreign}/results.parquet is not a results file"),
    (["compare", "{listed-overlays}", "{quick}"], "{listed-overlays}/run.json is not"),
    (["history", "{quick}", "{garbage}", "--out", "{tmp}/h"],
     "{garbage}/results.parquet cannot be read"),
    (["history", "{quick}", "{foreign}", "--out", "{tmp}/h"],
     "{foreign}/results.parquet is not a results file"),
    (["history", "{quick}", "{listed-overlays}", "--out", "{tmp}/h"],
     "{listed-overlays}/run.json is not"),
    (["cost", "{garbage}", "--out", "{tmp}/c"], "{garbage}/results.parquet cannot be read"),
    (["cost", "{foreign}", "--out", "{tmp}/c"], "{foreign}/results.parquet is not a results"),
    (["cost", "{quick}", "--out", "{tmp}/c"], "no room pass with CPU and memory per role"),
    (["export", "{garbage}", "--format", "github"], "{garbage}/results.parquet cannot be"),
    (["export", "{foreign}", "--format", "bencher", "-o", "-"],
     "{foreign}/results.parquet is not a results file"),
    (["export", "{listed-overlays}", "--format", "bencher", "-o", "-"],
     "{listed-overlays}/run.json is not"),
    (["export", "{quick}", "--format", "github", "-o", "."], "-o .: it is a directory"),
    (["export", "{quick}", "--format", "bencher", "-o", "."], "-o .: it is a directory"),
    # a path with square brackets, as written (not read as Rich markup)
    (["validate", "{bracketed}"], "two-sites[draft].yml is not a valid topology"),
    # a binary vNet profile
    (["ab", "throughput", "--b", "vnet-profile={binary}"], "The vNet profile {binary} cannot "
                                                          "be read as a YAML text file"),
    # ab's bounds: --passes the passes setting's, --rounds and --max-rounds AbSession's
    (["ab", "throughput", "--passes", "0"], "--passes (settings.passes): Input should be "
                                            "greater than or equal to 1"),
    (["ab", "throughput", "--passes", "101"], "--passes (settings.passes)"),
    (["ab", "throughput", "--rounds", "5"], "--rounds 5: input should be greater than or "
                                            "equal to 6"),
    (["ab", "throughput", "--rounds", "1000000"], "--rounds 1000000: input should be less"),
    (["ab", "throughput", "--max-rounds", "101"], "--max-rounds 101: input should be less"),
    (["ab", "throughput", "--max-rounds", "7"], "--max-rounds 7 is below --rounds 8"),
    (["ab", "throughput", "--order", "sideways"],
     "--order 'sideways': the rounds' order is one of"),
    # capacity's sizes: the room's settings' bounds
    (["capacity", "--slo", "p99=50ms", "--start", "nan"], "--start nan: it is not a finite"),
    (["capacity", "--slo", "p99=50ms", "--start", "inf"], "--start inf: it is not a finite"),
    (["capacity", "--slo", "p99=50ms", "--start", "0"], "--start 0: a search doubles"),
    (["capacity", "--slo", "p99=50ms", "--max", "nan"], "--max nan: it is not a finite"),
    (["capacity", "--slo", "p99=50ms", "--max", "inf"], "--max inf: it is not a finite"),
    (["capacity", "--slo", "p99=50ms", "--max", "0"], "--max 0: a search doubles"),
    (["capacity", "--slo", "p99=50ms", "--max", "20000"],
     "--max 20000: input should be less than or equal to 10000 (machines"),
    # SLO targets that cannot be met or mean nothing
    (["capacity", "--slo", "p99=0ms"], "'p99=0ms': no request is answered in 0 ms"),
    (["capacity", "--slo", "failed=-1"], "'failed=-1': failed requests are counted in whole"),
    (["capacity", "--slo", "fairness=2"], "'fairness=2': Jain's fairness lies between 0 and "
                                          "1 (1: every machine served alike), so no room"),
    (["capacity", "--slo", "fairness=0"], "so every room meets it"),
    (["capacity", "--slo", "p99=50ms,p99=20ms"], "p99 is given twice"),
    # --fault: a key twice, and a scenario that injects none
    (["run", "failover", "-t", "{failover}", "--fault", "kill=switch2,kill=switch1"],
     "--fault kill=switch2,kill=switch1: kill is given twice in one fault"),
    (["run", "transactions", "-t", "{failover}", "--fault", "kill=switch2"],
     "--fault kill=switch2: transactions injects no faults, so it would be ignored. Run "
     "throughput or failover or room with --fault, or leave --fault out."),
    # a negative noise in a noise floor
    (["compare", "{quick}", "{quick}", "--noise", "{negative-noise}"],
     "{negative-noise}/noise.json cannot be read as a noise floor"),
    (["history", "{quick}", "{aa}", "--noise", "{negative-noise}", "--out", "{tmp}/h"],
     "{negative-noise}/noise.json cannot be read as a noise floor"),
    # a newline in render's run id (it wrote extra keys into compose.yml)
    (["render", "{failover}", "-o", "{tmp}/r", "--run-id", "x\ny: 1"],
     "--run-id 'x\\ny: 1': a run id is lower-case letters"),
]

HELD_OUT = [
    (["ab", "throughput", "--b", "option.wireguard.mtu=[1"],
     "--b option.wireguard.mtu=[1: the value '[1' cannot be read"),
    (["ab", "throughput", "--b", "backbone.loss=1,2%"],
     "an arm takes one value of backbone.loss, not 2"),
    (["ab", "throughput", "--b", "topology={tmp}/none.yml"],
     "--b topology={tmp}/none.yml: There is no topology file"),
    (["ab", "throughput", "--a", "topology={binary}"],
     "--a topology={binary}: {binary} cannot be read as a YAML text file"),
    (["ab", "throughput", "--b", "site.rate=,,"], "--b site.rate=,,: no value for site.rate"),
    (["capacity", "--slo", "p99=50ms", "--by", "rate", "--max", "1e6"],
     "--max 1e+06: input should be less than or equal to 10000 (room_rate"),
    (["capacity", "--slo", "p99=50ms", "--start", "10.5"], "--start 10.5: input should be a "
                                                           "valid integer"),
    (["capacity", "--slo", "p99=50ms", "--start", "500", "--max", "100"],
     "--start 500 is above --max 100"),
    (["capacity", "--slo", "failed=nan"], "'failed=nan': it is not a finite number"),
    (["capacity", "--slo", "failed=0.5"], "'failed=0.5': failed requests are counted"),
    (["run", "transfer", "-t", "{failover}", "--fault", "loss=100%,for=2s"],
     "transfer injects no faults"),
    (["run", "failover", "-t", "{failover}", "--fault", "at=5s,link=backbone,at=6s"],
     "at is given twice in one fault"),
    (["history", "{quick}", "{both-copies-gone}", "--out", "{tmp}/h"],
     "{both-copies-gone}/results.parquet cannot be read, nor its copy"),
    (["export", "{quick}", "--format", "github", "-o", "{tmp}/none/x.json"],
     "-o {tmp}/none/x.json: there is no directory {tmp}/none"),
    (["report", "{listed-arms}"], "{listed-arms}/run.json is not a run.json vnetbench wrote "
                                  "(arms"),
    (["compare", "{text-values}", "{quick}"], "{text-values}/results.parquet is not a "
                                              "results file vnetbench wrote (value not"),
    (["compare", "{quick}", "{quick}", "--noise", "{infinite-noise}"],
     "{infinite-noise}/noise.json cannot be read as a noise floor"),
    (["render", "{failover}", "-o", "{tmp}/r", "--run-id", "a\"b: {x}"],
     "a run id is lower-case letters"),
    (["render", "{failover}", "-o", "{tmp}/r", "--block", "10.0.0.0/8"],
     "--block 10.0.0.0/8: a run's address block is a /16"),
    (["run", "throughput", "-t", "{failover}", "--overlay", "vnet", "--vnet-profile",
      "{binary}"], "The vNet profile {binary} cannot be read as a YAML text file"),
]


NEVER_WRITTEN = "/results.parquet holds what vnetbench never writes"
SLO = ["capacity", "--slo", "p99=50ms"]
LATER_HELD_OUT = [
    (["report", "{nan-pass}"], "{nan-pass}" + NEVER_WRITTEN + " (pass has empty values)"),
    (["compare", "{quick}", "{twice}"], "{twice}" + NEVER_WRITTEN + " (pass 1 of"),
    (["export", "{inf-values}", "--format", "bencher", "-o", "-"],
     "{inf-values}" + NEVER_WRITTEN + " (value has infinite values)"),
    (["report", "{two-units}"], "units)"),
    (["compare", "{quick}", "{negative-pass}"], "not whole numbers from 1"),
    (["report", "{negative-rate}"], "(tcp_mbit is below zero in Mbit/s)"),
    (["report", "{fifo-run}"], "{fifo-run}/run.json cannot be read (it is not a regular file"),
    (["report", "{zero-run}"], "{zero-run}/run.json cannot be read (it is not a regular file"),
    (["report", "{newer}"], "is of format 999, written by a newer vnetbench"),
    (["compare", "{quick}", "{banana}"], "{banana}/run.json is not a run.json vnetbench "
     "wrote (kind: input should be"),
    (["compare", "{quick}", "{quick}", "--json-file", "{tmp}"],
     "--json-file {tmp}: it is a directory"),
    (["compare", "{quick}", "{quick}", "--json-file", "{tmp}/none/x.json"],
     "there is no directory {tmp}/none"),
    (["render", "{huge-switches}", "-o", "{tmp}/r"], f"at most 15 switches, not {10**30}"),
    (["render", "{failover}", "-o", "{tmp}/r", "--block", "8.8.0.0/16"],
     "--block 8.8.0.0/16: it is not in a private range"),
    (["render", "{failover}", "-o", "{tmp}/r", "--block", "127.0.0.0/16"], "private range"),
    (["render", "{failover}", "-o", "{tmp}/r", "--block", "224.0.0.0/16"], "private range"),
    (["ab", "throughput", "--b", "backbone.loss=1%", "--b", "backbone.loss=2%"],
     "the arm sets backbone.loss twice"),
    (["ab", "throughput", "--b", "topology={failover}", "--b", "topology={failover}"],
     "the arm sets topology twice"),
    (["ab", "throughput", "--no-confirm", "--max-rounds", "20"],
     "--max-rounds 20 with --no-confirm"),
    ([*SLO, "--by", "rate", "--rate", "10"], "--rate 10 with --by rate"),
    ([*SLO, "--machines", "10"], "--machines 10 with --by machines"),
    ([*SLO, "--overlay", ""], "--overlay '': no overlay named"),
    ([*SLO, "--precision", "nan"], "--precision nan: the search stops"),
    ([*SLO, "--seconds", "nan"], "--seconds (settings.seconds): Input should be a finite"),
    ([*SLO, "--by", "size"], "'size' is not one of 'machines', 'rate'. See '"),
    (["export", "{quick}", "--format", "csv"], "'csv' is not one of 'github', 'bencher'"),
    (["history", "{quick}", "{aa}", "--label-from", "git", "--out", "{tmp}/h"],
     "'git' is not one of"),
    (["history", "{quick}", "{aa}", "--label", "{quick}=one", "--label", "{quick}=two",
      "--out", "{tmp}/h"], "is labelled twice ('one' first)"),
    (["run", "failover", "-t", "{failover}", "--fault", "kill=switch2\x1b[2J"],
     "no switch named 'switch2\\x1b[2J'"),
    # cost --check-at: a size with room passes in the directories read, before --out
    (["cost", "{cost-sizes}", "--check-at", "250", "--out", "{tmp}/c"], "--check-at 250: "
     "{cost-sizes} hold no room pass of 250 machines with CPU and memory per role (room "
     "sizes found: 10, 20, 40, 80, 300)"),
    (["cost", "{quick}", "--check-at", "300", "--out", "{tmp}/c"], "(room sizes found: none)"),
    (["cost", "{cost-sizes}", "--check-at", "0", "--out", "{tmp}/c"], "--check-at"),
    # calibrate's idle samples: from 1 s to 10 minutes, a number
    (["calibrate", "--idle-seconds", "0", "--out", "{tmp}/c"],
     "--idle-seconds': Input should be greater than or equal to 1"),
    (["calibrate", "--idle-seconds", "nan", "--out", "{tmp}/c"], "'--idle-seconds': Input"),
    (["calibrate", "--idle-seconds", "601", "--out", "{tmp}/c"],
     "--idle-seconds': Input should be less than or equal to 600"),
]
ALL = CLASSES + HELD_OUT + LATER_HELD_OUT


@pytest.mark.parametrize(("args", "expected"), ALL, ids=[" ".join(c[0])[:60] for c in ALL])
def test_a_bad_input_is_one_paragraph_naming_its_source(
        args: list[str], expected: str, places: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    said = refused(args, places, monkeypatch)
    for name, path in places.items():
        expected = expected.replace(name, path)
    assert expected in said, said


@pytest.mark.parametrize("block", ["300.0.0.0/16", "", "fd00::/16", "10.191.5.7/16",
                                   "100.64.0.0/16", "8.8.0.0/16"])
def test_a_refused_block_leaves_no_output_directory(block: str, places: dict[str, str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """--block is read before -o is made: a refusal left an empty directory behind."""
    said = refused(["render", "{failover}", "-o", "{tmp}/r", "--block", block], places,
                   monkeypatch)
    assert "--block" in said and not (Path(places["{tmp}"]) / "r").exists()


def test_a_path_with_brackets_is_reported_as_it_is(tmp_path: Path) -> None:
    """'two-sites[draft].yml' was reported as 'two-sites.yml: ok' (Rich read [draft] as a
    style); and a results path of the same kind in a report's lines."""
    path = tmp_path / "two-sites[draft].yml"
    path.write_text("name: t\nswitches: 2\nagents: 2\n")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0 and f"{path}: ok" in result.output, result.output
    results = Path(shutil.copytree(QUICK, tmp_path / "[bold]results[/bold]"))
    result = runner.invoke(app, ["report", str(results)])
    assert result.exit_code == 0 and f"report: {results}/report.md" in result.output


def test_a_path_with_an_undecodable_byte_is_reported_escaped(tmp_path: Path) -> None:
    """A byte no UTF-8 decodes, as argv gives it (a surrogate): the files are written
    under that very name and the paths printed with the byte escaped. Printed as it was,
    it ended in a UnicodeEncodeError traceback after export wrote its files, and every
    later command in the same process failed the same way (Rich kept the text)."""
    name = "\udcff\u2603 x"
    results = Path(shutil.copytree(QUICK, tmp_path / f"results{name}"))
    for args in (["export", str(results), "--format", "github", "-o", str(tmp_path / name)],
                 ["export", str(results), "--format", "bencher", "-o",
                  str(tmp_path / f"b{name}")],
                 ["validate", str(Path(shutil.copy(TOPOLOGY, tmp_path / f"t{name}.yml")))],
                 ["report", str(results)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output, result.exception)
        assert f"{tmp_path}/".replace("\udcff", "\\xff") in result.output
        assert "\\xff\u2603 x" in result.output and "\udcff" not in result.output
    assert (tmp_path / f"{name}-bigger-is-better.json").is_file()
    assert (tmp_path / f"b{name}").is_file() and (results / "report.md").is_file()
    assert runner.invoke(app, ["version"]).exit_code == 0


def test_no_rich_markup_is_written_in_the_package() -> None:
    """The consoles read no markup (vnetbench/terminal/ui.py): a '[yellow]' left in a string would
    be printed as written. Styles are given as style= or rich.text.Text."""
    package = Path(__file__).parent.parent.parent / "vnetbench"
    tags = ("[/]", "[bold", "[red]", "[green]", "[yellow]", "[dim]")
    found = [f"{path}: {tag}" for path in package.rglob("*.py")
             for tag in tags if tag in path.read_text()]
    assert found == []


def test_rich_reads_no_markup_from_a_message_or_a_progress_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    from vnetbench.terminal.ui import err_console, note, waiting

    with err_console.capture() as captured:
        note("copied to /tmp/[red]x[/red] and [bold]", style="yellow")
        with waiting("pass 1 on agent[1]"):
            pass
    assert "/tmp/[red]x[/red] and [bold]" in captured.get()
    assert "pass 1 on agent[1]" in captured.get()
