"""Outputs never clobber inputs (issue #61): every path a command writes, given or by
default, is refused in one paragraph (exit 2, nothing started, nothing written) when
it is, or lies inside, one of that command's inputs, however it is spelled (a link,
`..`); a directory in the way of an output file, or a file in the way of an output
directory, is a paragraph too. Each case hashes every file under the test's
directory before and after: no input (nor anything else) changes."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app

DATA = Path(__file__).parents[2] / "data"
TOPOLOGY = "name: t\nswitches: 2\nagents: 2\n"
runner = CliRunner()


def hashes(root: Path) -> dict[str, str]:
    """Every file and link under root, by its path: its content's digest (a link: where
    it points), and each directory."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = f"link {path.readlink()}"
        elif path.is_file():
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[key] = "directory"
    return found


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """{name}: copies of recorded results directories and a topology, under a working
    directory of the test's own."""
    work = tmp_path / "work"
    (work / "root").mkdir(parents=True)
    quick = shutil.copytree(DATA / "results-quick", work / "root" / "quick")
    aa = shutil.copytree(DATA / "ab-aa-baseline", work / "root" / "aa")
    # a second run of quick's cells: compare and history refuse two directories with
    # nothing in common, so what they write needs one that has
    again = shutil.copytree(DATA / "results-quick", work / "root" / "again")
    topology = work / "t.yml"
    topology.write_text(TOPOLOGY)
    (work / "stack").mkdir()
    (work / "stack" / "compose.yml").write_text(TOPOLOGY)
    (work / "link.json").symlink_to(quick / "run.json")
    (work / "afile").write_text("not a directory\n")
    monkeypatch.chdir(work)
    return {"{quick}": str(quick), "{aa}": str(aa), "{again}": str(again),
            "{root}": str(work / "root"),
            "{t}": str(topology), "{work}": str(work)}


def invoke(args: list[str], places: dict[str, str], monkeypatch: pytest.MonkeyPatch,
           **env: str) -> tuple[int, str]:
    """The command run with no engine to reach and no process allowed to start."""
    started: list[object] = []

    def nothing_starts(self: object, command: object, *rest: object, **kw: object) -> None:
        started.append(command)
        raise OSError(f"a process was started: {command}")

    monkeypatch.setattr(subprocess.Popen, "__init__", nothing_starts)
    given = list(args)
    for name, path in places.items():
        given = [a.replace(name, path) for a in given]
    result = runner.invoke(app, given, env={"DOCKER_HOST": "unix:///nonexistent", **env})
    assert started == [], started
    assert isinstance(result.exception, SystemExit | None), (given, result.exception)
    assert "Traceback" not in result.output
    return result.exit_code, " ".join(result.output.split())


QUICK_GITHUB = ["export", "{quick}", "--format", "github"]
QUICK_BENCHER = ["export", "{quick}", "--format", "bencher"]
COMPARE = ["compare", "{quick}", "{aa}"]
CLOBBERS: list[tuple[list[str], dict[str, str], str]] = [
    # export: -o the results it reads, spelled plainly, with `..`, through a link
    ([*QUICK_BENCHER, "-o", "{quick}/results.parquet"], {}, "export -o {quick}/results"),
    ([*QUICK_GITHUB, "-o", "{quick}/results.parquet"], {}, "inside results directory"),
    ([*QUICK_BENCHER, "-o", "{quick}/../quick/run.json"], {}, "inside results directory"),
    ([*QUICK_BENCHER, "-o", "{work}/link.json"], {}, "inside results directory {quick}"),
    ([*QUICK_BENCHER, "-o", "{quick}/new.json"], {}, "inside results directory {quick}"),
    # compare: --json one of OLD, NEW or --noise
    ([*COMPARE, "--json-file", "{quick}/run.json"], {}, "compare --json-file {quick}/run.json"),
    ([*COMPARE, "--json-file", "{aa}/noise.json"], {}, "inside results directory {aa}"),
    (["compare", "{quick}", "{quick}", "--noise", "{aa}", "--json-file", "{aa}/x.json"], {},
     "inside --noise {aa}"),
    ([*COMPARE, "--json-file", "{work}/link.json"], {}, "inside results directory {quick}"),
    # history and cost: --out an input, or inside one (a root of several included)
    (["history", "{quick}", "{aa}", "--out", "{quick}"], {}, "it is results directory"),
    (["history", "{root}", "--out", "{root}/quick/h"], {}, "inside results directory"),
    (["history", "{quick}", "{aa}", "--noise", "{aa}", "--out", "{aa}/h"], {},
     "inside results directory {aa}"),
    (["history", "{root}", "--out", "{root}"], {}, "--out {root}: it is results directory"),
    (["cost", "{quick}", "--out", "{quick}"], {}, "cost --out {quick}: it is results"),
    (["cost", "{root}", "--out", "{root}/c"], {}, "inside results directory {root}"),
    # render: its compose.yml the topology it renders
    (["render", "{work}/stack/compose.yml", "-o", "{work}/stack"], {}, "it is --topology"),
    (["render", "{work}/stack/compose.yml", "-o", "{work}/stack/compose.yml"], {},
     "it names a file, not a directory"),
    # the commands that measure: --out (or BENCH_OUT) the topology, ab --summary too
    (["run", "throughput", "-t", "{t}", "--out", "{t}"], {}, "run --out {t}: it names a file"),
    (["run", "throughput", "-t", "{t}"], {"BENCH_OUT": "{t}"}, "run BENCH_OUT {t}: it names"),
    (["ab", "throughput", "-t", "{t}", "--summary", "{t}"], {},
     "ab --summary {t}: it is --topology {t}"),
    (["ab", "throughput", "-t", "{t}", "--out", "{t}"], {}, "ab --out {t}: it names a file"),
    (["ab", "throughput", "-t", "{t}", "--json-file", "{t}"], {},
     "ab --json-file {t}: it is --topology {t}"),
    (["history", "{quick}", "{again}", "--json-file", "{again}/h.json"], {},
     "inside results directory {again}"),
    (["sweep", "throughput", "--set", "backbone.loss=0,1%", "-t", "{t}", "--out", "{t}"], {},
     "sweep --out {t}: it names a file"),
    (["matrix", "-t", "{t}", "--out", "{t}"], {}, "matrix --out {t}: it names a file"),
    (["calibrate", "--out", "{t}"], {}, "calibrate --out {t}: it names a file"),
    (["up", "-t", "{t}", "--out", "{t}"], {}, "up --out {t}: it names a file"),
    (["capacity", "--slo", "p99=50ms", "-t", "{t}", "--out", "{t}"], {},
     "capacity --out {t}: it names a file"),
    # --json-file the topology each measuring command reads
    (["run", "throughput", "-t", "{t}", "--json-file", "{t}"], {},
     "run --json-file {t}: it is --topology {t}"),
    (["sweep", "throughput", "--set", "backbone.loss=0,1%", "-t", "{t}", "--json-file",
      "{t}"], {}, "sweep --json-file {t}: it is --topology {t}"),
    (["matrix", "-t", "{t}", "--json-file", "{t}"], {},
     "matrix --json-file {t}: it is --topology {t}"),
    (["capacity", "--slo", "p99=50ms", "-t", "{t}", "--json-file", "{t}"], {},
     "capacity --json-file {t}: it is --topology {t}"),
]


@pytest.mark.parametrize(("args", "env", "said"), CLOBBERS,
                         ids=[" ".join(c[0])[:70] for c in CLOBBERS])
def test_an_output_on_an_input_is_refused_and_nothing_changes(
        args: list[str], env: dict[str, str], said: str, places: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = hashes(Path(places["{work}"]).parent)
    for name, path in places.items():
        env = {key: value.replace(name, path) for key, value in env.items()}
        said = said.replace(name, path)
    code, output = invoke(args, places, monkeypatch, **env)
    assert code == 2 and output.startswith("error: "), output
    assert said in output, output
    assert hashes(Path(places["{work}"]).parent) == before


IN_THE_WAY: list[tuple[list[str], Callable[[Path], object], str]] = [
    # a directory where a file is written, given or by default; a file where a
    # directory is
    (["report", "{quick}"], lambda w: (w / "root/quick/report.md").mkdir(),
     "report: {quick}/report.md: it is a directory, not a file"),
    (QUICK_GITHUB, lambda w: (w / "root/quick/github-bigger-is-better.json").mkdir(),
     "export -o {quick}/github-bigger-is-better.json (its default): it is a directory"),
    (["history", "{quick}", "{aa}"], lambda w: (w / "history").write_text("mine\n"),
     "history --out history (its default): it names a file"),
    (["history", "{quick}", "{aa}", "--out", "{work}/h"], lambda w: (w / "h/history.html").mkdir(
        parents=True), "history --out {work}/h/history.html: it is a directory"),
    (["cost", "{quick}"], lambda w: (w / "cost").write_text("mine\n"),
     "cost --out cost (its default): it names a file"),
    ([*COMPARE, "--json-file", "{work}/afile/x.json"], lambda w: None,
     "{work}/afile is a file, not a directory"),
    (["render", "{t}", "-o", "{work}/r"], lambda w: (w / "r/compose.yml").mkdir(parents=True),
     "render --output {work}/r/compose.yml: it is a directory"),
    # a link in place of report's own file, pointing at the results it reads
    (["report", "{quick}"], lambda w: (w / "root/quick/report.md").symlink_to(
        w / "root/quick/run.json"), "report: {quick}/report.md: it is a link to"),
    ([*QUICK_BENCHER, "-o", "{work}/" + "x" * 250 + ".json"], lambda w: None,
     "its name is longer than this file system allows"),
    # a link that leads back to itself: exists() and is_dir() say False, and the write
    # would replace the link (doctor asked the engine first)
    (["doctor", "--json-file", "{work}/loop"], lambda w: (w / "loop").symlink_to(w / "loop"),
     "doctor --json-file {work}/loop: it is a symbolic link that leads back to itself"),
    (["doctor", "--json-file", "{work}/loop/x"], lambda w: (w / "loop").symlink_to(
        w / "loop"), "it lies under a symbolic link that leads back to itself"),
    (["doctor", "--json-file", "{work}"], lambda w: None,
     "doctor --json-file {work}: it is a directory, not a file"),
    (["calibrate", "--json-file", "{work}/afile/c.json"], lambda w: None,
     "{work}/afile is a file, not a directory"),
]


@pytest.mark.parametrize(("args", "make", "said"), IN_THE_WAY,
                         ids=[" ".join(c[0])[:40] + c[2][:30] for c in IN_THE_WAY])
def test_something_in_the_way_of_an_output_is_one_paragraph(
        args: list[str], make: Callable[[Path], object], said: str,
        places: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    make(Path(places["{work}"]))
    before = hashes(Path(places["{work}"]).parent)
    for name, path in places.items():
        said = said.replace(name, path)
    code, output = invoke(args, places, monkeypatch)
    assert code == 2 and output.startswith("error: "), output
    assert said in output, output
    assert hashes(Path(places["{work}"]).parent) == before


WRITES: list[tuple[list[str], list[str]]] = [
    # what each writes where it may: its own files beside the results, or outside them
    (QUICK_GITHUB, ["root/quick/github-bigger-is-better.json"]),
    ([*QUICK_BENCHER, "-o", "{work}/bench.json"], ["bench.json"]),
    (["report", "{quick}"], ["root/quick/report.md", "root/quick/report.html"]),
    (["compare", "{quick}", "{again}", "--json-file", "{work}/c.json"], ["c.json"]),
    (["history", "{root}"], ["history/history.html"]),
]


@pytest.mark.parametrize(("args", "written"), WRITES, ids=[" ".join(w[0]) for w in WRITES])
def test_outputs_beside_or_outside_the_inputs_are_written_and_inputs_kept(
        args: list[str], written: list[str], places: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    work = Path(places["{work}"])
    inputs = hashes(work / "root")
    code, output = invoke(args, places, monkeypatch)
    assert code in (0, 1), output  # compare may find a regression
    assert all((work / name).is_file() for name in written), output
    after = hashes(work / "root")
    assert {k: v for k, v in after.items() if k in inputs} == inputs
    for _ in range(2):  # and again: its own files are replaced, not refused
        assert invoke(args, places, monkeypatch)[0] in (0, 1)


def test_a_default_output_inside_the_inputs_is_refused(
        places: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`cd results && vnetbench history .` wrote ./history into the root it reads."""
    root = Path(places["{root}"])
    monkeypatch.chdir(root)
    before = hashes(root)
    code, output = invoke(["history", "."], places, monkeypatch)
    assert code == 2 and "history --out history (its default): it lies inside" in output
    assert hashes(root) == before


def test_check_outputs_resolves_links_and_dots(tmp_path: Path) -> None:
    from vnetbench.errors import UserError
    from vnetbench.terminal.outputs import Input, Output, check_outputs

    results = tmp_path / "results"
    results.mkdir()
    (results / "run.json").write_text("{}")
    (tmp_path / "alias").symlink_to(results)
    inputs = [Input("results directory results", results)]
    for path in (results / "run.json", tmp_path / "alias" / "run.json",
                 tmp_path / "alias" / ".." / "results" / "run.json",
                 results / "sub" / "new.json"):
        with pytest.raises(UserError, match="inside results directory results"):
            check_outputs("it", [Output("-o", path)], inputs)
    with pytest.raises(UserError, match="it is results directory results"):
        check_outputs("it", [Output("--out", tmp_path / "alias", directory=True)], inputs)
    check_outputs("it", [Output("-o", tmp_path / "elsewhere.json")], inputs)
    check_outputs("it", [Output("", results / "report.md", ours=True)], inputs)
    with pytest.raises(UserError, match="inside results directory"):  # ours: beside only
        check_outputs("it", [Output("", results / "sub" / "report.md", ours=True)], inputs)


# Every option or argument that takes a path, by what the command does with it: a new
# one must be placed here, and an output among the cases above (CLOBBERS, IN_THE_WAY).
READ = {("validate", "files"), ("render", "file"), ("run", "--topology"),
        ("run", "--vnet-profile"), ("sweep", "--topology"), ("capacity", "--topology"),
        ("cost", "directories"), ("matrix", "--topology"), ("report", "directory"),
        ("history", "directories"), ("history", "--noise"), ("export", "directory"),
        ("compare", "old"), ("compare", "new"), ("compare", "--noise"), ("ab", "--topology"),
        ("up", "--topology"), ("images vnet", "--programs"), ("images vnet", "--vnet-profile"),
        # where an earlier command put a run directory, read (shape updates its run.json)
        ("shape", "--out"), ("down", "--out"),
        # (clean's --results, where it removes keys only inside the run directories it
        # marked (test_scratch.py), is read as text, so that an empty one is refused
        # rather than taken for '.': it is no Path parameter)
        }
WRITTEN = {("render", "--output"), ("run", "--out"), ("sweep", "--out"),
           ("capacity", "--out"), ("cost", "--out"), ("matrix", "--out"),
           ("history", "--out"), ("export", "-o"), ("compare", "--json-file"),
           ("history", "--json-file"), ("ab", "--json-file"), ("ab", "--out"), ("ab", "--summary"),
           ("up", "--out"), ("calibrate", "--out"), ("run", "--json-file"),
           ("matrix", "--json-file"), ("sweep", "--json-file"), ("capacity", "--json-file"),
           ("doctor", "--json-file"), ("calibrate", "--json-file")}


def path_parameters() -> set[tuple[str, str]]:
    import typer

    found: set[tuple[str, str]] = set()

    def walk(command: object, prefix: str) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{prefix} {name}".strip())
        for parameter in getattr(command, "params", []):
            described = getattr(parameter, "type_descriptor", None)
            if described is not None and "Path" in str(described.annotation):
                found.add((prefix, parameter.opts[0]))

    walk(typer.main.get_command(app), "")
    return found


def test_every_path_a_command_takes_is_an_input_or_a_checked_output() -> None:
    assert path_parameters() == READ | WRITTEN
    aliases = {("render", "-o"): "--output"}  # export's first name is -o itself
    cases = [args for args, _, _ in CLOBBERS] + [args for args, _, _ in IN_THE_WAY]
    tested = {(args[0], aliases.get((args[0], option), option)) for args in cases
              for option in args}
    assert not WRITTEN - tested, "outputs no case above checks"
