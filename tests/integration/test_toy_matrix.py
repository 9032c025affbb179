"""docs/extending.md's toy (tests/toy.py) on the real engine: `vnetbench matrix --quick
--overlay baseline` with the toy scenario registered in a fresh interpreter (its
package on the path, as the unit test has it) runs its cells on a real stack, and
`vnetbench report` of that directory draws its declared figure.

The matrix is restricted to the toy's cells (its CELLS, as if the toy were the one
registered scenario with variants) so it takes seconds: two cells of --quick's two
passes on one shared stack, and the machine's bare-veth limit in 2 s streams."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.installed import run
from tests.integration.conftest import leftovers
from tests.toy import REGISTER, toy_env, write_toy

pytestmark = pytest.mark.integration

# vnetbench's CLI with the toy registered, and the matrix's cells the toy's alone
VNETBENCH = REGISTER + '''
from vnetbench.runs import matrix

matrix.CELLS = {"toy": matrix.CELLS["toy"]}

from vnetbench.cli import app

app(prog_name="vnetbench")
'''
TOPOLOGY = {"name": "toys", "switches": 2, "agents": 2, "overlay": "baseline"}


def test_the_toy_s_matrix_cells_run_on_the_engine_and_its_report_draws_its_figure(
        tmp_path: Path) -> None:
    write_toy(tmp_path)
    (tmp_path / "toys.yml").write_text(yaml.safe_dump(TOPOLOGY))
    env = toy_env(tmp_path)
    run([sys.executable, "-c", VNETBENCH, "matrix", "--quick", "--overlay", "baseline",
         "--topology", "toys.yml", "--out", "results"], cwd=tmp_path, env=env, timeout=600)
    [directory] = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    cells = json.loads((directory / "run.json").read_text())["cells"]
    assert sorted(cells) == ["toy/baseline/heavy", "toy/baseline/light"]
    assert all(state.startswith("completed") for state in cells.values()), cells
    for state in cells.values():  # "completed (RUN; shared stack with: ...)"
        assert leftovers(re.split(r"[ ;)]", state.removeprefix("completed ("))[0]) == []
    # the toy counted the stack's 2 agents once (light) and thrice (heavy), plus the
    # pass's number (1, 2)
    rows = pd.read_parquet(directory / "results.parquet")
    assert sorted(rows[rows["metric"] == "toy_agents"]["value"]) == [3.0, 4.0, 7.0, 8.0]

    said = run([sys.executable, "-c", VNETBENCH, "report", str(directory)],
               cwd=tmp_path, env=env)
    assert "Toy: agents counted" in said  # its headline
    assert "![toy-by-weight](toy-by-weight.png)" in (directory / "report.md").read_text()
    assert (directory / "toy-by-weight.png").exists()
    assert 'id="figure-toy-by-weight"' in (directory / "report.html").read_text()
