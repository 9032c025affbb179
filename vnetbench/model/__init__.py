"""The model of what runs, above the scenarios' declarations (declared/) and the faults
(faults/): a topology as its YAML file declares it, a room's workload, the address
plan and what a scenario needs of an overlay. Pure data, no engine."""
