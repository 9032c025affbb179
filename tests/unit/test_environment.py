"""docs/environment.md's table holds every environment variable the code reads:
found by reading the code (each read of the process environment, its name a literal,
a module constant, or a key of a module-level dict it iterates)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "vnetbench"
PAGE = PACKAGE.parent / "docs" / "environment.md"


def constants(tree: ast.Module) -> dict[str, list[str]]:
    """Module-level NAME = "TEXT" (its text) and NAME = {"KEY": ...} (its keys)."""
    found: dict[str, list[str]] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        value = getattr(node, "value", None)
        if not isinstance(target, ast.Name):
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found[target.id] = [value.value]
        elif isinstance(value, ast.Dict):
            found[target.id] = [k.value for k in value.keys if isinstance(k, ast.Constant)]
    return found


def loop_sources(tree: ast.Module) -> dict[str, str]:
    """Loop variable -> the module-level dict whose .items()/keys it runs over."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)):
            source = node.iter
            if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute):
                source = source.func.value
            if not isinstance(source, ast.Name):
                continue
            target = node.target
            first = target.elts[0] if isinstance(target, ast.Tuple) else target
            if isinstance(first, ast.Name):
                found[first.id] = source.id
    return found


def environment_reads(tree: ast.Module) -> list[ast.expr]:
    """The name expression of each os.environ[...], os.environ.get(...), os.getenv(...),
    and of the same on a variable named environ (a copy of os.environ)."""
    def is_environ(node: ast.expr) -> bool:
        return ((isinstance(node, ast.Attribute) and node.attr == "environ")
                or (isinstance(node, ast.Name) and node.id == "environ"))

    reads: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_environ(node.value):
            reads.append(node.slice)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.args and (node.func.attr == "getenv" or (
                  node.func.attr == "get" and is_environ(node.func.value)))):
            reads.append(node.args[0])
    return reads


def variables_read() -> dict[str, str]:
    """Variable -> where it is read; a read whose name cannot be told fails the test."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        named, loops = constants(tree), loop_sources(tree)
        for expression in environment_reads(tree):
            where = f"{path.relative_to(PACKAGE.parent)}:{expression.lineno}"
            if isinstance(expression, ast.Constant):
                names = [expression.value]
            elif isinstance(expression, ast.Name) and expression.id in named:
                names = named[expression.id]
            elif isinstance(expression, ast.Name) and loops.get(expression.id) in named:
                names = named[loops[expression.id]]
            else:
                raise AssertionError(f"{where}: cannot tell which environment variable "
                                     "this reads: name it in a module-level constant")
            found |= {name: where for name in names}
    return found


def variables_listed() -> set[str]:
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", PAGE.read_text(), re.MULTILINE))


def test_every_variable_the_code_reads_is_in_the_table() -> None:
    read = variables_read()
    missing = {name: where for name, where in read.items() if name not in variables_listed()}
    assert not missing, f"read but not in docs/environment.md's table: {missing}"


def test_the_table_lists_no_variable_the_code_no_longer_reads() -> None:
    assert variables_listed() - set(variables_read()) == set()


def test_the_reader_finds_reads_through_constants_and_dicts() -> None:
    read = variables_read()  # one of each way the code names a variable
    assert {"VNETBENCH_STATE", "VNETBENCH_SWARM", "BENCH_FLOOD_MBIT", "BENCH_OUT"} <= set(read)
