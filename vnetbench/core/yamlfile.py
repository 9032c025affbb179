"""The one reader of a user's YAML (topologies, workloads, vNet profiles, an arm's value).

PyYAML's safe loader alone takes a second `links:` silently over the first (its shaping
lost), expands an alias bomb until memory runs out, and hands a 5000-digit integer to
int(), which raises past Python's int-string limit. This loader refuses each at its
line, and a file too large to be a topology before reading it. The compose files
vnetbench renders itself are read with yaml.safe_load: they are not a user's input.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

YAML_SIZE_LIMIT = 1 << 20  # bytes: a topology or workload is a few kB
EXPANDED_NODE_LIMIT = 100_000  # values once every alias is expanded
INTEGER_DIGITS_LIMIT = 100  # no setting takes a number this long
MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlRefused(yaml.MarkedYAMLError):
    """A document the loader refuses (valid YAML, but not a user's file to act on)."""

    def __init__(self, problem: str, mark: Any, fix: str) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.fix = fix


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys, alias bombs and over-long integers."""

    def get_single_node(self) -> Node | None:
        node = super().get_single_node()
        if node is not None:
            expanded_size(node, {}, set())
        return node

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG or not isinstance(key_node.value, str):
                continue  # `<<: *defaults` may be overridden; a complex key is PyYAML's
            key = self.construct_object(key_node)
            if not isinstance(key, str | int | float | bool) and key is not None:
                continue
            if key in seen:
                raise YamlRefused(
                    f"the key {key!r} is given twice (first at line {seen[key] + 1}), and "
                    "the second would silently replace the first", key_node.start_mark,
                    f"Merge the two {key!r} entries into one")
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: ScalarNode) -> int:
        text = str(node.value)
        if sum(character.isdigit() for character in text) > INTEGER_DIGITS_LIMIT:
            raise YamlRefused(
                f"an integer of {len(text)} characters; no value vnetbench reads has more "
                f"than {INTEGER_DIGITS_LIMIT} digits", node.start_mark,
                "Give the value in its unit (e.g. 100mbit, 10s)")
        return int(super().construct_yaml_int(node))


StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)


def expanded_size(node: Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """How many values `node` holds once every alias is expanded (a shared node is
    counted each time it is used, as a reader walking the data would meet it)."""
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in open_nodes:
        raise YamlRefused("an alias refers to the value that holds it (a loop)",
                          node.start_mark, "Write the value out instead of the alias")
    open_nodes.add(id(node))
    size = 1
    if isinstance(node, SequenceNode):
        size += sum(expanded_size(child, sizes, open_nodes) for child in node.value)
    elif isinstance(node, MappingNode):
        size += sum(expanded_size(key, sizes, open_nodes) + expanded_size(value, sizes,
                                                                          open_nodes)
                    for key, value in node.value)
    open_nodes.discard(id(node))
    if size > EXPANDED_NODE_LIMIT:
        raise YamlRefused(
            f"its aliases expand to more than {EXPANDED_NODE_LIMIT} values (an alias "
            "bomb?)", node.start_mark, "Write the values out, or use fewer aliases")
    sizes[id(node)] = size
    return size


def load_yaml(text: str) -> Any:
    """A YAML document's data, read by StrictLoader; raises yaml.YAMLError (YamlRefused
    for what it refuses) or RecursionError (nested past Python's stack)."""
    return yaml.load(text, Loader=StrictLoader)


def read_yaml_text(path: Path) -> str:
    """A user's YAML file's text: a regular file of at most YAML_SIZE_LIMIT bytes
    (a FIFO would block the read for ever, /dev/zero fill memory). OSError says why
    not; UnicodeDecodeError when it is not UTF-8."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise OSError(f"it is not a regular file ({stat.filemode(info.st_mode)[0]!r} in "
                      "ls -l)")
    if info.st_size > YAML_SIZE_LIMIT:
        raise OSError(f"it is {info.st_size} bytes; a YAML file vnetbench reads is at most "
                      f"{YAML_SIZE_LIMIT} bytes")
    with path.open("rb") as handle:
        data = handle.read(YAML_SIZE_LIMIT + 1)
    if len(data) > YAML_SIZE_LIMIT:
        raise OSError(f"it is more than {YAML_SIZE_LIMIT} bytes")
    return data.decode("utf-8")


SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (a named pipe)"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def not_a_regular_file(path: Path, fix: str) -> str | None:
    """The paragraph for a path that is there but is no file to read (a FIFO, a device, a
    socket), which `is_file()` reported as missing; None for anything else."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    kind = next((name for test, name in SPECIAL_FILES if test(mode)), None)
    return f"{path} is {kind}, not a regular file. {fix}" if kind else None


def yaml_problem(error: yaml.YAMLError | RecursionError) -> tuple[str, str]:
    """(where and what, the fix) of a refusal, for a one-paragraph message."""
    if isinstance(error, RecursionError):
        return (": it is nested too deeply to read", "Flatten the nesting")
    mark = getattr(error, "problem_mark", None)
    place = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(error, "problem", None) or str(error)
    fix = getattr(error, "fix", "Fix the syntax (indentation, colons, quotes)")
    return (f"{place}: {problem}", fix)

