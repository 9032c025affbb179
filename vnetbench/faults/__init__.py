"""Faults: what a topology's `faults:` declares (model), checked against the topology
(checks) and, as a schedule, expanded into timed steps (vnetbench/shaping/schedule.py, above the topology that checks its faults with this package)."""
