from vnetbench.shaping.capabilities import MECHANISMS, parse_probe_output, probe_script


def test_probe_output_parsed_with_kernel_answer() -> None:
    text = ("netem|no|Error: Specified qdisc kind is unknown.\n"
            "tbf|yes|\nnoise line\n")
    found = {c.name: c for c in parse_probe_output(text)}
    assert not found["netem"].available
    assert found["netem"].answer == "Error: Specified qdisc kind is unknown."
    assert found["tbf"].available
    assert "noise" not in found


def test_probe_script_tries_every_mechanism() -> None:
    script = probe_script()
    for name, (command, _) in MECHANISMS.items():
        assert command in script
        assert f'"{name}|yes|"' in script
