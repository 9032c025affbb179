from vnetbench.cli import app

app(prog_name="vnetbench")
