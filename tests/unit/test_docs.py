"""The docs stay true to the tree: docs/modules.md names every module of vnetbench/
and no other, every page of docs/ is in mkdocs.yml's nav, the README links only to
pages and anchors that exist, and its room figures are the kept sessions'. (`make docs`
builds the site in strict mode: links and anchors between the pages.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MODULE_MAP = DOCS / "modules.md"
# One module per line: "- `vnetbench/path/module.py`: what it is".
MODULE_LINE = re.compile(r"^- `(vnetbench/[^`\s]+\.py)`")
# A Markdown link's target, [text](target), or a bare mention of a page under docs/.
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS_MENTION = re.compile(r"(?<![\w/.-])(docs/[\w./-]+\.md)")


def mapped_modules(text: str) -> list[str]:
    """The modules a module map names, in its order (repeats kept)."""
    return [found.group(1) for line in text.splitlines()
            if (found := MODULE_LINE.match(line))]


def modules_on_disk(root: Path = ROOT) -> set[str]:
    return {path.relative_to(root).as_posix() for path in (root / "vnetbench").rglob("*.py")
            if "__pycache__" not in path.parts}


def map_problems(named: list[str], present: set[str]) -> list[str]:
    """What keeps the map from equalling the tree, one sentence each (none: equal)."""
    problems = []
    missing = sorted(present - set(named))
    extra = sorted(set(named) - present)
    repeated = sorted({name for name in named if named.count(name) > 1})
    if missing:
        problems.append("not in docs/modules.md (add a line `- `PATH`: what it is` each): "
                        + ", ".join(missing))
    if extra:
        problems.append("in docs/modules.md but not on disk (moved or removed? fix or drop "
                        "the line): " + ", ".join(extra))
    if repeated:
        problems.append("named more than once in docs/modules.md: " + ", ".join(repeated))
    return problems


def test_the_module_map_equals_the_tree() -> None:
    problems = map_problems(mapped_modules(MODULE_MAP.read_text()), modules_on_disk())
    assert not problems, "\n".join(problems)


def test_the_map_check_fails_both_ways() -> None:
    """An entry without a module, and a module without an entry, are each named."""
    present = {"vnetbench/a.py", "vnetbench/b/c.py"}
    assert map_problems(["vnetbench/a.py", "vnetbench/b/c.py"], present) == []
    text = "- `vnetbench/a.py`: a\n- `vnetbench/ghost.py`: gone\n  - `vnetbench/b/c.py`: nested\n"
    problems = map_problems(mapped_modules(text), present)
    assert len(problems) == 2
    assert "not in docs/modules.md" in problems[0] and "vnetbench/b/c.py" in problems[0]
    assert "not on disk" in problems[1] and "vnetbench/ghost.py" in problems[1]
    assert "more than once" in map_problems(["vnetbench/a.py"] * 2, {"vnetbench/a.py"})[0]


def test_the_map_reads_this_trees_modules(tmp_path: Path) -> None:
    """modules_on_disk finds every .py (packages' __init__.py too), none of __pycache__."""
    (tmp_path / "vnetbench" / "sub" / "__pycache__").mkdir(parents=True)
    for name in ("__init__.py", "sub/__init__.py", "sub/m.py", "sub/__pycache__/m.py",
                 "sub/data.yml"):
        (tmp_path / "vnetbench" / name).write_text("")
    assert modules_on_disk(tmp_path) == {"vnetbench/__init__.py", "vnetbench/sub/__init__.py",
                                         "vnetbench/sub/m.py"}


def nav_pages(nav: Any) -> list[str]:
    """Every page a mkdocs nav names (nested sections included)."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


def mkdocs_config() -> dict[str, Any]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert isinstance(config, dict)
    return config


def test_every_page_is_in_the_nav() -> None:
    config = mkdocs_config()
    docs = ROOT / config.get("docs_dir", "docs")
    pages = {path.relative_to(docs).as_posix() for path in docs.rglob("*.md")}
    in_nav = nav_pages(config["nav"])
    assert sorted(pages - set(in_nav)) == [], "pages of docs/ missing from mkdocs.yml's nav"
    assert sorted(set(in_nav) - pages) == [], "mkdocs.yml's nav names pages docs/ lacks"
    assert len(in_nav) == len(set(in_nav)), "a page is in the nav twice"


def test_nav_pages_reads_nested_sections() -> None:
    nav = [{"Home": "index.md"}, "a.md", {"Section": [{"B": "s/b.md"}, "s/c.md"]}]
    assert nav_pages(nav) == ["index.md", "a.md", "s/b.md", "s/c.md"]


def readme_doc_links(text: str) -> list[str]:
    """The docs/ pages the README points at: link targets and bare mentions, anchors cut."""
    targets = [target.split("#")[0] for target in LINK.findall(text)]
    targets += DOCS_MENTION.findall(text)
    return sorted({t for t in targets if t.startswith("docs/") or t.rstrip("/") == "docs"})


def missing_links(text: str, root: Path = ROOT) -> list[str]:
    return [link for link in readme_doc_links(text) if not (root / link).exists()]


def test_the_readme_links_only_to_pages_that_exist() -> None:
    text = (ROOT / "README.md").read_text()
    links = readme_doc_links(text)
    assert "docs/index.md" in links, "the README links to the docs"
    assert missing_links(text) == []
    in_nav = set(nav_pages(mkdocs_config()["nav"]))
    outside = [link for link in links if link.endswith(".md")
               and link.removeprefix("docs/") not in in_nav]
    assert outside == [], "README links to pages that are not in the site"


@pytest.mark.parametrize("text", ["see [x](docs/no-such-page.md)",
                                  "see [x](docs/no-such-page.md#part)",
                                  "as docs/no-such-page.md says"])
def test_a_broken_readme_link_is_found(text: str) -> None:
    assert missing_links(text) == ["docs/no-such-page.md"]


def test_the_readme_keeps_its_test_command() -> None:
    """CI (.ci/run) runs exactly the README's test command."""
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"^make test\b", readme, re.MULTILINE)
    assert re.search(r"^make bench\b", readme, re.MULTILINE)
    assert "make test" in (ROOT / ".ci" / "run").read_text()


# The README's room figures: every figure in its room table is recomputed here from the
# kept room A/A sessions (research/data/error-rates, real `vnetbench ab room` sessions).
KEPT_ROOMS = ROOT / "research" / "data" / "error-rates"
OVERLAY_NAMES = {"wireguard": "WireGuard", "openvpn": "OpenVPN", "tinc": "tinc",
                 "nebula": "Nebula"}


def kept_room_passes(kept: Path = KEPT_ROOMS) -> Any:
    """One row per kept room pass: its session, overlay, p50, p99 and failed requests,
    with the settings it ran at."""
    import pandas as pd

    frames = []
    for session in sorted(kept.glob("aa-*-room-*")):
        rows = pd.read_parquet(session / "results.parquet")
        rows = rows[rows["metric"].isin(["room_p50_ms", "room_p99_ms", "room_failed"])]
        wide = rows.pivot_table(index=["overlay", "variant", "var_round", "pass", "set_machines",
                                       "set_room_rate", "set_room_loop", "set_seconds"],
                                columns="metric", values="value").reset_index()
        wide["session"] = session.name
        wide["started"] = json.loads((session / "run.json").read_text())["started"][:10]
        frames.append(wide)
    return pd.concat(frames, ignore_index=True)


def readme_room_table(kept: Path = KEPT_ROOMS) -> str:
    """The README's room paragraph's figures and table, from the kept sessions."""
    passes = kept_room_passes(kept)
    machines, = passes["set_machines"].unique()
    rate, = passes["set_room_rate"].unique()
    loop, = passes["set_room_loop"].unique()
    seconds, = passes["set_seconds"].unique()
    lines = [f"Kept results: {passes['session'].nunique()} room A/As "
             f"(`research/data/error-rates`), {len(passes)} passes of {seconds:g} s, "
             f"{machines} machines at {rate:g} requests/s each, the {loop} loop, "
             f"{passes['started'].min()} to {passes['started'].max()}:", "",
             "| overlay | sessions | passes | p50, median | p99, median | p99, middle half "
             "of the passes | requests failed |", "|---|---|---|---|---|---|---|"]
    for overlay, name in OVERLAY_NAMES.items():
        own = passes[passes["overlay"] == overlay]
        p99 = own["room_p99_ms"]
        lines.append(f"| {name} | {own['session'].nunique()} | {len(own)} | "
                     f"{own['room_p50_ms'].median():.2f} ms | {p99.median():.1f} ms | "
                     f"{p99.quantile(0.25):.1f}-{p99.quantile(0.75):.1f} ms | "
                     f"{own['room_failed'].sum():g} |")
    return "\n".join(lines)


def test_the_readme_room_figures_are_the_kept_sessions() -> None:
    """Edit the README's room table and this fails; re-measure (keep more sessions)
    and this fails until the README says what they say."""
    table = readme_room_table()
    assert table in (ROOT / "README.md").read_text(), (
        "README.md's room figures differ from the kept sessions; paste:\n" + table)


def test_the_room_table_reads_every_kept_pass() -> None:
    passes = kept_room_passes()
    assert set(passes["overlay"]) == set(OVERLAY_NAMES)
    assert passes.groupby("overlay")["session"].nunique().min() >= 3
    assert passes[["room_p50_ms", "room_p99_ms"]].notna().all().all()
    assert (passes["room_p99_ms"] >= passes["room_p50_ms"]).all()


def test_the_readme_says_the_room_runs_the_open_loop() -> None:
    """The room's default is the open loop; the README's figures must be of it."""
    from vnetbench.declared.room import RoomSettings

    assert RoomSettings.model_fields["loop"].default == "open"
    assert "the open loop" in readme_room_table()


def heading_anchors(page: Path) -> set[str]:
    """The anchors mkdocs gives a page's headings (toc's slugify, code marks dropped)."""
    from markdown.extensions.toc import slugify

    return {slugify(found.group(1).replace("`", ""), "-")
            for found in re.finditer(r"^#{1,6} (.+?)\s*$", page.read_text(), re.MULTILINE)}


def broken_readme_anchors(text: str, root: Path = ROOT) -> list[str]:
    """The README's links into a page at an anchor the page has no heading for (mkdocs
    checks the links between pages, not the README's)."""
    return [target for target in LINK.findall(text) if "#" in target
            and target.startswith("docs/") and (root / target.split("#")[0]).is_file()
            and target.split("#")[1] not in heading_anchors(root / target.split("#")[0])]


def test_the_readme_links_only_to_anchors_that_exist() -> None:
    assert broken_readme_anchors((ROOT / "README.md").read_text()) == []
    assert broken_readme_anchors("[x](docs/scenarios.md#no-such-part)") == [
        "docs/scenarios.md#no-such-part"]
    assert broken_readme_anchors("[x](docs/scenarios.md#the-seed)") == []


SEED = re.compile(r"\bthe seed\b", re.IGNORECASE)


def pages_using_the_seed_undefined(docs: Path = DOCS) -> list[str]:
    """Pages that say "the seed" without a link to its definition (scenarios.md's "The
    seed"); the generated command pages quote --help and are left out."""
    return sorted(page.relative_to(docs).as_posix() for page in docs.rglob("*.md")
                  if page.relative_to(docs).parts[:2] != ("reference", "commands")
                  and page.name != "scenarios.md" and SEED.search(page.read_text())
                  and "scenarios.md#the-seed)" not in page.read_text())


def test_the_seed_is_defined_and_linked_where_used(tmp_path: Path) -> None:
    assert "## The seed" in (DOCS / "scenarios.md").read_text()
    assert pages_using_the_seed_undefined() == []
    (tmp_path / "a.md").write_text("As the seed does.")
    (tmp_path / "b.md").write_text("As [the seed](scenarios.md#the-seed) does.")
    assert pages_using_the_seed_undefined(tmp_path) == ["a.md"]


# The README's quick-start output: its RESULT lines are the kept run's (the quick start's
# own command, run from a fresh clone: tests/data/quickstart, its results.parquet and
# run.json as written), and its wall time is the run's own, from run.json.
KEPT_QUICKSTART = ROOT / "tests" / "data" / "quickstart"


def readme_quickstart_lines(kept: Path = KEPT_QUICKSTART) -> list[str]:
    """The first pass's RESULT line per overlay, as `vnetbench run` prints it."""
    import pandas as pd

    rows = pd.read_parquet(kept / "results.parquet")
    rows = rows[(rows["pass"] == 1) & rows["interval_s"].isna()] if "interval_s" in rows \
        else rows[rows["pass"] == 1]
    lines = []
    for overlay in ("baseline", "wireguard"):
        own = rows[rows["overlay"] == overlay].drop_duplicates("metric").set_index("metric")
        value = own["value"]
        lines.append(f"RESULT scenario=throughput overlay={overlay} pass=1 "
                     f"tcp_mbit={value['tcp_mbit']:.1f} "
                     f"retransmits={value['tcp_retransmits']:.0f} "
                     f"rtt_ms={value['rtt_mean_ms']:.3f} "
                     f"pings={value['ping_received']:.0f}/{value['ping_sent']:.0f}")
    return lines


def test_the_readme_quick_start_output_is_the_kept_run() -> None:
    """Edit the README's quick-start lines, or keep another run, and this fails until
    the README says what the kept run measured, on its date, in its time."""
    from datetime import datetime

    readme = (ROOT / "README.md").read_text()
    for line in readme_quickstart_lines():
        assert line in readme, f"README.md's quick start differs from the kept run: {line}"
    record = json.loads((KEPT_QUICKSTART / "run.json").read_text())
    began, ended = (datetime.fromisoformat(record[key]) for key in ("started", "ended"))
    seconds = (ended - began).total_seconds()
    assert record["status"] == "completed"
    found = re.search(r"measured here on (\d{4}-\d\d-\d\d).*?exit 0 in\s+(\d+) s", readme,
                      re.S)
    assert found, "the README's quick start says when it was measured and how long it took"
    assert found[1] == record["started"][:10]
    # the run's own span; the command's process start and exit come on top (about 1 s)
    assert seconds <= int(found[2]) <= seconds + 3, (seconds, found[2])


# The README's `matrix --quick` figures: the whole matrix run right after a fresh
# clone's make test, its run.json kept (tests/data/matrix-quick).
KEPT_MATRIX = ROOT / "tests" / "data" / "matrix-quick" / "run.json"


def test_the_readme_matrix_quick_figures_are_the_kept_run() -> None:
    from datetime import datetime

    record = json.loads(KEPT_MATRIX.read_text())
    assert record["quick"] is True and record["status"] == "completed"
    began, ended = (datetime.fromisoformat(record[key]) for key in ("started", "ended"))
    span = (ended - began).total_seconds()
    stacks = [*record["cell_timings"].values(), *record.get("shared_stacks", [])]
    testbed = sum(part.get(key) or 0 for part in stacks
                  for key in ("bring_up_s", "restart_s", "teardown_s"))
    readme = " ".join((ROOT / "README.md").read_text().split())
    found = re.search(r"its (\d+) cells on every overlay took (\d+) s \((\d{4}-\d\d-\d\d); "
                      r"bring-up, restarts and teardown (\d+) s of it\)", readme)
    assert found, "the README says what matrix --quick took, as the kept run measured it"
    assert int(found[1]) == len(record["cells"])
    # the run's own span; the command's process start and exit come on top (seconds)
    assert span <= int(found[2]) <= span + 3, (span, found[2])
    assert found[3] == record["started"][:10]
    assert int(found[4]) == round(testbed), testbed
