"""Faults: what a topology's `faults:` declares (model), checked against the topology
(checks); as a schedule they are expanded into timed steps in
vnetbench/shaping/schedule.py, above the topology that checks its faults here."""
