"""The model of what runs, above the scenarios' declarations (declared/): a topology as
its YAML file declares it (its faults in faults/), a room's workload, the address plan
and what a scenario needs of an overlay. Pure data, no engine."""
