"""What a topology's `faults:` declares: one entry (declared.py `Fault`), checked
alone, against the topology (checks.py) and against the measured path (path.py).
Part of the topology's model; what acts on faults (a schedule's expansion, the
executor, the windows) is vnetbench/faults/."""
