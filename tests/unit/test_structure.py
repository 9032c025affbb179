"""The structure stays visible: no import cycle among vnetbench's modules, and no
import from a lower layer up to a higher one (LAYERS), the imports inside functions
included (a deferred import is still a dependency); only `if TYPE_CHECKING:` blocks
are left out (types for the checker, never run)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "vnetbench"


@functools.cache  # five tests read it; parsing every module took 0.8 s a time
def import_graph() -> dict[str, frozenset[str]]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in run_time_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in modules:
                graph[name].add(node.module)
                graph[name] |= {f"{node.module}.{a.name}" for a in node.names
                                if f"{node.module}.{a.name}" in modules}
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules}
    return {name: frozenset(targets) for name, targets in graph.items()}


def run_time_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def cycles(graph: Mapping[str, AbstractSet[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    graph = import_graph()
    topology = "vnetbench.model.topology"
    assert "vnetbench.overlays" not in graph[topology]  # the model knows no adapter
    # nor any scenario: its settings model is built from the registry, not by name
    assert {t for t in graph[topology] if t.startswith("vnetbench.declared.")} == set()
    assert "vnetbench.declared" in graph[topology]
    assert cycles(graph) == []


# The layers, bottom to top: a module imports from its own layer or a lower one, never
# from a higher one. A unit is a top-level module or a subpackage (engines/, measure/...);
# each subpackage sits in one layer, so no two packages import each other either.
LAYERS: list[tuple[str, set[str]]] = [
    ("the program's own", {"vnetbench", "errors", "files"}),
    ("the vocabulary", {"core"}),
    ("the terminal", {"terminal"}),
    ("the runtime's parts", {"runtime"}),
    ("declarations", {"declared"}),
    ("the model", {"model", "methods"}),
    ("engines", {"engines"}),
    ("measuring", {"measure"}),
    ("on a running stack", {"shaping", "overlays"}),
    ("faults on a running stack", {"faults"}),
    ("scenarios", {"scenarios"}),
    ("results and bring-up", {"analysis", "deploy"}),
    ("reports", {"report"}),
    ("runs", {"runs"}),
    ("the command line", {"commands", "cli", "__main__", "pytest_plugin"}),
    ("generated from the code", {"generators"}),
]
# declared/: what each scenario declares (name, settings, metrics, matrix variants),
# part of the model: the topology's settings and the results' catalogue are built
# from it; no code that measures is in it (test_schema holds that).
SUBPACKAGES = {"core", "terminal", "runtime", "model", "analysis", "deploy", "generators",
               "engines", "measure", "overlays", "scenarios", "declared", "shaping", "runs",
               "report", "commands", "methods", "faults"}
# The package's root holds the entry points (cli, __main__, the pytest plugin) and what
# every layer uses (errors, files); everything else lives in a subpackage named for what
# it is, so the root reads as a table of contents.
ROOT_MODULES_AT_MOST = 12


def unit_of(module: str) -> str:
    """vnetbench.engines.swarm.engine -> engines; vnetbench.errors -> errors."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(unit: str, layers: list[tuple[str, set[str]]] = LAYERS) -> int:
    return next(index for index, (_, units) in enumerate(layers) if unit in units)


def upward_imports(graph: Mapping[str, AbstractSet[str]],
                   layers: list[tuple[str, set[str]]] = LAYERS) -> list[str]:
    """Every import from a module to one of a higher layer, as 'a -> b (layer -> layer)'."""
    found = []
    for module, targets in sorted(graph.items()):
        below = layer_of(unit_of(module), layers)
        for target in sorted(targets):
            above = layer_of(unit_of(target), layers)
            if above > below:
                found.append(f"{module} -> {target} ({layers[below][0]} -> {layers[above][0]})")
    return found


def test_every_unit_has_one_layer() -> None:
    units = {unit_of(module) for module in import_graph()}
    placed = [unit for _, members in LAYERS for unit in members]
    assert len(placed) == len(set(placed))  # in one layer only
    assert units == set(placed), "place a new module or package in LAYERS"
    assert units >= SUBPACKAGES


def test_no_import_goes_up_a_layer() -> None:
    assert upward_imports(import_graph()) == []


def test_the_root_holds_a_few_modules() -> None:
    root = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(root) <= ROOT_MODULES_AT_MOST, root
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert folders == SUBPACKAGES, "place a new subpackage in SUBPACKAGES and LAYERS"


def test_no_two_packages_import_each_other() -> None:
    """Between units, the imports form no loop either (a module's cycle can hide in two
    packages that each import the other, one module of each)."""
    graph = import_graph()
    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        units.setdefault(unit_of(module), set()).update(
            unit_of(t) for t in targets if unit_of(t) != unit_of(module))
    assert cycles(units) == []


def test_engines_and_measure_depend_one_way() -> None:
    """measure/ runs tools through engines/; engines/ knows nothing of measuring."""
    graph = import_graph()
    back = [f"{module} -> {target}" for module, targets in graph.items()
            if unit_of(module) == "engines" for target in targets
            if unit_of(target) == "measure"]
    assert back == []
    assert any(unit_of(t) == "engines" for m, ts in graph.items() if unit_of(m) == "measure"
               for t in ts)


def test_faults_act_from_one_package_on_what_the_model_declares() -> None:
    """Issue #59: what a topology's `faults:` declares (its model, its checks against
    the topology and the measured path) is part of the topology's model
    (model/faults/); the schedule's expansion, the one executor and the windows are
    faults/, above shaping/ and below the scenarios, importing none of them. The model
    imports nothing of faults/: no arrow runs back up."""
    graph = import_graph()
    assert {"vnetbench.model.faults.declared", "vnetbench.model.faults.checks",
            "vnetbench.model.faults.path"} <= set(graph)
    assert {"vnetbench.faults.schedule", "vnetbench.faults.executor",
            "vnetbench.faults.window"} <= set(graph)
    assert layer_of("model") < layer_of("shaping") < layer_of("faults") \
        < layer_of("scenarios")
    wrong = [f"{m} -> {t}" for m, ts in graph.items() for t in ts
             if (unit_of(m) == "faults" and unit_of(t) == "scenarios")
             or (unit_of(m) == "model" and unit_of(t) == "faults")]
    assert wrong == []


def test_the_layer_check_finds_an_import_going_up() -> None:
    layers = [("low", {"a"}), ("high", {"b"})]
    graph = {"pkg.a.x": {"pkg.b"}, "pkg.b": {"pkg.a.y"}, "pkg.a.y": set()}
    assert upward_imports(graph, layers) == ["pkg.a.x -> pkg.b (low -> high)"]


def test_imports_inside_functions_count_and_type_checking_ones_do_not() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n"
                     "def f():\n    from b import c\n")
    assert [getattr(n, "module", None) for n in run_time_imports(tree)] == ["typing", "b"]


CLIENTS = ("python_on_whales", "docker")  # the CLI's wrapper and the engine's SDK


def is_client(module: str) -> bool:
    return any(module == c or module.startswith(f"{c}.") for c in CLIENTS)


def reaches_the_client(path: Path) -> bool:
    """Does the module import python-on-whales or the Docker SDK (at run time)? (Not
    `from . import docker`: a relative import names vnetbench's own module.)"""
    return any((getattr(n, "level", 0) == 0 and is_client(getattr(n, "module", None) or ""))
               or (isinstance(n, ast.Import) and any(is_client(a.name) for a in n.names))
               for n in run_time_imports(ast.parse(path.read_text())))


def in_engines(path: Path) -> bool:
    return "engines" in path.relative_to(PACKAGE).parts


def test_no_module_outside_engines_reaches_the_engine_s_client() -> None:
    """The engines are behind one interface: only vnetbench/engines/ imports
    python-on-whales or the Docker SDK."""
    reaching = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                      if reaches_the_client(path))
    assert [path for path in reaching if not path.startswith("engines/")] == []
    # the check sees an import where there is one, of either client
    assert {"engines/docker.py", "engines/docker_api.py"} <= set(reaching)


# Keys of Docker's JSON (`docker container inspect`, `docker events`): read only in
# engines/, which hands back the interface's own values (ContainerRecord, EngineEvent).
DOCKER_KEYS = {"State", "NetworkSettings", "Config", "HostConfig", "Healthcheck", "Networks",
               "IPAddress", "Mounts", "StartedAt", "FinishedAt", "ExitCode", "Running",
               "Labels", "Id", "Actor", "Attributes", "Action", "Type", "timeNano"}


def docker_keys_read(source: str) -> list[str]:
    """Each Docker JSON key the code reads: `x["State"]`, `x.get("State")`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "pop", "setdefault") and node.args
              and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        if key in DOCKER_KEYS:
            found.append(str(key))
    return found


def test_no_module_outside_engines_reads_docker_s_json() -> None:
    """Container records and events reach shaping/, measure/ and runs/ as the engine
    interface's values, never as Docker's JSON read there."""
    reads = {str(path.relative_to(PACKAGE)): keys for path in sorted(PACKAGE.rglob("*.py"))
             if (keys := docker_keys_read(path.read_text()))}
    assert {path: keys for path, keys in reads.items() if not path.startswith("engines/")} == {}
    # the check sees the reads where they are: engines/docker.py's inspection and events
    assert {"State", "NetworkSettings", "Config", "Actor", "timeNano"} <= set(
        reads.get("engines/docker.py", []))


def test_the_docker_json_check_finds_subscripts_and_gets_only() -> None:
    source = ('a = record["State"]["Running"]\nb = event.get("Actor", {})\n'
              'c = frame["time"]\nd = "Config"\ne = settings.get(key)\n')
    assert sorted(docker_keys_read(source)) == ["Actor", "Running", "State"]


def test_the_engine_interface_hands_back_its_own_values() -> None:
    """No method of the interface returns Any (a client's object passes as one) or a
    process whose output the caller parses."""
    import inspect

    from vnetbench.engines.base import Deployment, Engine, HostRuntime

    loose = sorted(f"{interface.__name__}.{name}: {returned}"
                   for interface in (Engine, HostRuntime, Deployment)
                   for name, member in vars(interface).items()
                   if callable(getattr(member, "__func__", member)) and not name.startswith("_")
                   and any(word in (returned := str(inspect.signature(
                       getattr(member, "__func__", member)).return_annotation))
                           for word in ("Any", "Popen")))
    assert loose == []


CONCRETE_ENGINES = ("vnetbench.engines.docker", "vnetbench.engines.compose",
                    "vnetbench.engines.swarm",
                    "vnetbench.engines.build")  # images: HostRuntime's image methods
# `vnetbench swarm up|down` makes and removes the test swarm: the swarm engine's own verb
ENGINE_COMMANDS = {"vnetbench.commands.swarm -> vnetbench.engines.swarm.testbed"}


def test_no_module_outside_engines_reaches_a_concrete_engine() -> None:
    """Above engines/, an engine is the interface (engines/base.py) and the registry
    (engines/__init__.py: engine_for, every_engine, local()), never a class of its own."""
    reaching = sorted(f"{module} -> {target}" for module, targets in import_graph().items()
                      if unit_of(module) != "engines" for target in targets
                      if target.startswith(CONCRETE_ENGINES))
    assert set(reaching) - ENGINE_COMMANDS == set()


# Where this machine's runtime (engines.local()) is fetched outside engines/ and
# commands/ (the top, which passes it down), each with why it is not passed in.
LOCAL_FETCHED = {
    "runs/session.py": "a run's images, built here whichever engine runs them (run_tasks, up)",
    "runs/matrix.py": "the matrix's images and calibration, at run_matrix's top, for its cells",
    "deploy/testing.py": "the pytest plugin's stacks' images, at running_topology's top",
    "analysis/metadata.py": "every run record's host facts (runrecord.new_record: a dozen callers)",
    "shaping/apply.py": "the kernel's shaping mechanisms, probed once a process (cached)",
    "overlays/vnet/adapter.py": "vNet's images, checked in Overlay.detect (no runtime in that "
                                "interface)",
}


def fetches_local(source: str) -> bool:
    """Does the code call `local()` (engines.local, imported by name)?"""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id == "local" for node in ast.walk(ast.parse(source)))


def test_this_machine_s_runtime_is_passed_in_below_the_top() -> None:
    fetching = {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
                if fetches_local(path.read_text())}
    below_the_top = {path for path in fetching
                     if path.split("/")[0] not in ("engines", "commands")}
    assert below_the_top == set(LOCAL_FETCHED)
    assert "commands/doctor.py" in fetching  # the check sees a call where there is one


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


UNIT = Path(__file__).resolve().parent
PROJECT_TESTS = {"test_docs.py", "test_structure.py",
                 "test_environment.py",  # docs/environment.md against every module's reads
                 "test_repeat.py"}  # of the project (test_repeat: make test-repeat's reader)


def misplaced_tests(unit: Path = UNIT, package: Path = PACKAGE) -> list[str]:
    """Unit test files not laid out by package: tests/unit/<package>/test_<module>.py
    (or test_<module>_<aspect>.py) for vnetbench/<package>/<module>.py."""
    misplaced = []
    for test in sorted(unit.rglob("test_*.py")):
        folder = test.parent.relative_to(unit)
        if folder == Path(".") and test.name in PROJECT_TESTS:
            continue
        modules = {p.stem for p in (package / folder).glob("*.py")}
        stem = test.stem.removeprefix("test_")
        if not any(stem == m or stem.startswith(f"{m}_") for m in modules):
            misplaced.append(str(test.relative_to(unit)))
    return misplaced


def test_unit_tests_are_laid_out_by_package() -> None:
    assert misplaced_tests() == []


def test_a_test_beside_no_module_is_found(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "engines").mkdir(parents=True)
    (tmp_path / "pkg" / "engines" / "compose.py").write_text("")
    (tmp_path / "unit" / "engines").mkdir(parents=True)
    for name in ("test_compose.py", "test_compose_bring_up.py", "test_kubernetes.py"):
        (tmp_path / "unit" / "engines" / name).write_text("")
    assert misplaced_tests(tmp_path / "unit", tmp_path / "pkg") == [
        "engines/test_kubernetes.py"]


RESEARCH = PACKAGE.parent / "research"


def test_research_campaigns_live_in_research_and_their_tests_run_with_the_unit_suite() -> None:
    """Issue #59: a campaign (a script run by hand on the engine) and its kept data are
    in research/, beside its tests, which make unit and make test collect; its README
    names each one."""
    campaigns = sorted(p.stem for p in RESEARCH.glob("*.py")
                       if p.stem != "__init__" and not p.stem.startswith("test_"))
    assert campaigns and all((RESEARCH / f"test_{name}.py").exists() for name in campaigns)
    readme = (RESEARCH / "README.md").read_text()
    assert [name for name in campaigns if f"`{name}.py`" not in readme] == []
    makefile = (PACKAGE.parent / "Makefile").read_text()
    assert "UNIT_TESTS := tests/unit research" in makefile
    assert makefile.count("pytest $(UNIT_TESTS)") == 2  # make unit, make test
    assert not (UNIT.parent / "data" / "error-rates").exists()


# Issue #59: a scenario is one package. The room's modules live in vnetbench/scenarios/room/,
# and the room is reached through its face (its __init__.py). Modules of the room's that stay
# outside, each imported from outside the package (moving it in would make that import run
# up a layer, or into the room's internals):
ROOM = "vnetbench.scenarios.room"
ROOM_ELSEWHERE = {
    "vnetbench.declared.room": "declared/__init__.py's DECLARATIONS (the declarations layer, "
                               "read by the model's topology) registers it",
    "vnetbench.measure.room": "measure/room_faults.py reads its marks, floor and errors",
    "vnetbench.measure.room_faults": "throughput's faults read it too (measure/stream_faults.py, "
                                     "faults/on_stack.py)",
    "vnetbench.model.workload": "model/topology.py reads a topology's `workload:` with it",
}


def inside(package: str, module: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def importers(graph: Mapping[str, AbstractSet[str]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for module, targets in graph.items():
        for target in targets:
            found.setdefault(target, set()).add(module)
    return found


def serving_one_package(graph: Mapping[str, AbstractSet[str]], package: str) -> list[str]:
    """Modules outside PACKAGE that only PACKAGE's modules import: they belong in it."""
    return sorted(module for module, by in importers(graph).items()
                  if not inside(package, module) and all(inside(package, b) for b in by))


def reaching_internals(graph: Mapping[str, AbstractSet[str]], package: str) -> list[str]:
    """Imports from outside PACKAGE of a module inside it other than its face."""
    return sorted(f"{module} -> {target}" for module, targets in graph.items()
                  if not inside(package, module) for target in targets
                  if inside(package, target) and target != package)


def test_the_room_is_one_package() -> None:
    graph = import_graph()
    assert f"{ROOM}.runtime" in graph and f"{ROOM}.open_loop" in graph
    assert serving_one_package(graph, ROOM) == []
    assert reaching_internals(graph, ROOM) == []
    named_for_it = {module for module in graph if not inside(ROOM, module)
                    and ("room" in module.split(".")[-1] or module.endswith(".workload"))}
    assert named_for_it == set(ROOM_ELSEWHERE), "move it into scenarios/room/ or say why not"
    # (each of ROOM_ELSEWHERE is imported from outside the room: else serving_one_package
    # names it above)


def test_the_package_checks_find_a_stray_module_and_a_reach_inside() -> None:
    graph = {"pkg.s.room": {"pkg.s.room.run"}, "pkg.s.room.run": {"pkg.m.only", "pkg.m.shared"},
             "pkg.m.only": set(), "pkg.m.shared": set(), "pkg.r.cap": {"pkg.m.shared",
                                                                       "pkg.s.room.run"}}
    assert serving_one_package(graph, "pkg.s.room") == ["pkg.m.only"]
    assert reaching_internals(graph, "pkg.s.room") == ["pkg.r.cap -> pkg.s.room.run"]


def scenario_modules(graph: Mapping[str, AbstractSet[str]], names: list[str]) -> set[str]:
    """The modules of the named scenarios: vnetbench.declared.NAME, vnetbench.scenarios.NAME
    (a module, or a package and what is in it) and vnetbench.scenarios.NAME_* (what serves
    it alone: failover_result, throughput_faults)."""
    return {module for module in graph for name in names
            if module == f"vnetbench.declared.{name}"
            or inside(f"vnetbench.scenarios.{name}", module)
            or module.startswith(f"vnetbench.scenarios.{name}_")}


def naming_a_scenario(graph: Mapping[str, AbstractSet[str]], names: list[str],
                      packages: tuple[str, ...]) -> list[str]:
    """Imports from a module of PACKAGES of a scenario's own module."""
    own = scenario_modules(graph, names)
    return sorted(f"{module} -> {target}" for module, targets in graph.items()
                  if any(inside(p, module) for p in packages) for target in targets & own)


NEUTRAL = ("vnetbench.report", "vnetbench.runs")


def test_reports_and_runs_name_no_scenario() -> None:
    """report/ draws what each declaration declares and runs/ finds a scenario by the role
    it plays (vnetbench/declared/declaration.py's ROLES), never by its module: a scenario
    added or renamed needs no line in either."""
    from vnetbench.declared import DECLARATIONS

    graph = import_graph()
    names = [d.name for d in DECLARATIONS]
    own = scenario_modules(graph, names)
    # not vacuous: every registered scenario's declaration is among the modules looked for,
    # and so are the room's package and throughput's own modules
    assert {f"vnetbench.declared.{n}" for n in names} <= own
    assert {"vnetbench.scenarios.room.runtime", "vnetbench.scenarios.throughput_faults",
            "vnetbench.scenarios.failover_result"} <= own
    checked = [m for m in graph if any(inside(p, m) for p in NEUTRAL)]
    assert {"vnetbench.report.plots", "vnetbench.report.figures", "vnetbench.report.tables",
            "vnetbench.runs.capacity", "vnetbench.runs.calibration"} <= set(checked)
    assert len(checked) > 30
    assert naming_a_scenario(graph, names, NEUTRAL) == []


LOOKUPS = ("get_scenario", "SCENARIOS", "DECLARED")  # the registries, by name


def lookups_by_name(source: str, names: list[str]) -> list[str]:
    """A registry asked for a scenario by a literal name: get_scenario("room"),
    SCENARIOS["room"], DECLARED["room"]."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(LOOKUPS):
            keys = node.args
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith(LOOKUPS):
            keys = [node.slice]
        else:
            continue
        found += [ast.unparse(node) for key in keys
                  if isinstance(key, ast.Constant) and key.value in names]
    return found


def test_reports_and_runs_look_no_scenario_up_by_its_name() -> None:
    from vnetbench.declared import DECLARATIONS

    names = [d.name for d in DECLARATIONS]
    paths = [p for package in ("report", "runs") for p in (PACKAGE / package).rglob("*.py")]
    assert len(paths) > 30
    assert {p: found for p in paths
            if (found := lookups_by_name(p.read_text(), names))} == {}
    assert lookups_by_name('get_scenario("room")\nx = SCENARIOS["join"]\n'
                           'get_scenario(method.scenario)', names) == [
        "get_scenario('room')", "SCENARIOS['join']"]


def test_the_scenario_check_finds_a_declaration_and_a_scenario_s_module() -> None:
    graph = {"vnetbench.report.plots": {"vnetbench.declared.room", "vnetbench.declared"},
             "vnetbench.runs.cap": {"vnetbench.scenarios.room.runtime",
                                    "vnetbench.scenarios.base"},
             "vnetbench.runs.cal": {"vnetbench.scenarios.throughput_faults"},
             "vnetbench.declared.room": set(), "vnetbench.declared": set(),
             "vnetbench.scenarios.room.runtime": set(), "vnetbench.scenarios.base": set(),
             "vnetbench.scenarios.throughput_faults": set()}
    assert naming_a_scenario(graph, ["room", "throughput"], NEUTRAL) == [
        "vnetbench.report.plots -> vnetbench.declared.room",
        "vnetbench.runs.cal -> vnetbench.scenarios.throughput_faults",
        "vnetbench.runs.cap -> vnetbench.scenarios.room.runtime"]
