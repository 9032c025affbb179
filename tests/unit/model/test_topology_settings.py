"""A scenario's settings are its own sub-model under its name (`room: {rate: 5}`),
and the flat names of files written before (`room_rate`) still load, as do the
options and variables that use them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vnetbench.core.model import ScenarioSettings
from vnetbench.declared import DECLARATIONS
from vnetbench.declared.room import RoomSettings
from vnetbench.errors import UserError
from vnetbench.model.topology import (
    MEASUREMENT_SETTINGS,
    SCENARIO_SETTINGS,
    Settings,
    SharedSettings,
    load_topology,
    parse_topology,
    setting_fields,
    settings_named_twice,
    with_scenario_settings,
)

OLD = Path(__file__).resolve().parents[2] / "data" / "flat-settings-topology.yml"


def test_a_file_of_flat_settings_written_before_loads_into_each_scenario_s_own() -> None:
    settings = load_topology(OLD).settings
    assert (settings.passes, settings.machines) == (2, 20)  # shared ones stay flat
    assert settings.room == RoomSettings(rate=2.5, sizes=(100, 1000), connection="new",
                                         timeout_s=3)
    assert (settings.join.pool, settings.join.wait_s, settings.join.fresh) == (
        4, 12.0, "containers")
    assert (settings.transfer.bytes, settings.transfer.timeout_s) == (2**20, 30.0)
    assert (settings.failover.window_s, settings.transactions.parallel,
            settings.flood.mbit) == (15.0, 6, 50.0)


def test_the_nested_form_and_the_flat_one_are_the_same_settings(tmp_path: Path) -> None:
    old = load_topology(OLD)
    written = tmp_path / "nested.yml"
    written.write_text(yaml.safe_dump(old.model_dump(mode="json")))
    assert "room_rate" not in written.read_text()  # written nested: room: {rate: 2.5}
    assert yaml.safe_load(written.read_text())["settings"]["room"]["rate"] == 2.5
    assert load_topology(written) == old
    assert old.settings.flat()["room_rate"] == 2.5
    assert set(old.settings.flat()) == set(setting_fields())


def test_an_option_s_flat_name_overrides_the_file_s_nested_setting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = tmp_path / "nested.yml"
    written.write_text("name: n\nswitches: 2\nagents: 2\nsettings:\n"
                       "  room: {rate: 2, timeout_s: 4}\n  flood: {mbit: 10}\n")
    monkeypatch.setenv("BENCH_FLOOD_MBIT", "70")
    settings = load_topology(written, {"room_rate": 9}).settings
    assert (settings.room.rate, settings.room.timeout_s, settings.flood.mbit) == (9, 4, 70)


def test_a_wrong_scenario_setting_is_named_by_its_flat_name_and_its_origin() -> None:
    base = {"name": "n", "switches": 2, "agents": 2}
    with pytest.raises(UserError) as flat:
        parse_topology({**base, "settings": {"room_sizes": [0]}}, "f.yml")
    assert "  - settings.room_sizes: room replies are 1 to" in str(flat.value)
    with pytest.raises(UserError) as nested:
        parse_topology({**base, "settings": {"room": {"nonsense": 1}}}, "f.yml")
    assert "settings.room_nonsense: Extra inputs are not permitted" in str(nested.value)
    with pytest.raises(UserError) as given:
        parse_topology(base, "f.yml", {"join_wait_s": -1}, origins={"join_wait_s": "--x"})
    assert "  - --x (settings.join_wait_s): Input should be greater than 0" in str(
        given.value)


def test_a_scenario_s_measured_settings_leave_the_stack_as_it_is() -> None:
    base = parse_topology({"name": "n", "switches": 2, "agents": 2}, "f")
    rate = base.model_copy(update={"settings": base.settings.updated({"room_rate": 50})})
    pool = base.model_copy(update={"settings": base.settings.updated({"join_pool": 3})})
    assert rate.settings.room.rate == 50 and pool.settings.join.pool == 3
    assert {"room_rate", "rr_parallel", "transfer_bytes"} <= MEASUREMENT_SETTINGS
    assert "join_pool" not in MEASUREMENT_SETTINGS  # agents per container: the stack
    assert rate.stack_key() == base.stack_key() != pool.stack_key()


def test_settings_built_by_keyword_take_flat_names_too() -> None:
    assert Settings(room_rate=1).room.rate == 1  # type: ignore[call-arg]


def test_the_settings_model_holds_each_registered_scenario_s_own_under_its_name() -> None:
    """topology.py names no scenario: the fields come from the declarations."""
    own = {d.name: d.settings for d in DECLARATIONS if d.settings is not None}
    assert own == SCENARIO_SETTINGS
    assert {name: Settings.model_fields[name].annotation for name in own} == own
    settings = Settings(room_rate=7)
    assert settings.of(RoomSettings) is settings.room
    assert settings.of(RoomSettings).rate == 7


def test_settings_of_an_unregistered_scenario_are_refused_by_name() -> None:
    class Unregistered(ScenarioSettings):
        prefix = "nowhere_"

    with pytest.raises(KeyError, match="Unregistered is no registered scenario's settings"):
        Settings().of(Unregistered)


def test_a_scenario_whose_settings_take_a_name_already_used_is_refused() -> None:
    class Seconds(ScenarioSettings):
        prefix = "room_"
        rate: int = 1  # room_rate: the room's

    assert settings_named_twice(SharedSettings, SCENARIO_SETTINGS) == []
    assert settings_named_twice(SharedSettings, {**SCENARIO_SETTINGS, "seconds": Seconds}) == [
        "room_rate", "seconds"]
    with pytest.raises(TypeError, match="settings named twice: room_rate, seconds"):
        with_scenario_settings(SharedSettings, {**SCENARIO_SETTINGS, "seconds": Seconds})
