"""vnetbench's commands, a module per verb (as containerlab's cmd/deploy.go,
cmd/destroy.go); vnetbench/cli.py registers them. Shared pieces: common.py (error
handling, the topology, the results directory) and options.py (option types, the
run options generated from the Settings model)."""
