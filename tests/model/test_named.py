"""Named configurations: loading a name, what a learner changed from it, what a link carries.

A small settings class written here: two settings, a per-item profile that a
uniform setting replaces, and the name itself. Expected values are written
out by hand from the definitions below.
"""

from __future__ import annotations

import numpy as np
import param
import pytest

from widgets.model.named import NamedConfigurations, lower_first, same_value
from widgets.model.settings import entry, setting


class Pump(param.Parameterized):
    rate = param.Number(2.0, bounds=(0, 10), label="Rate", metadata=setting("l/s"))
    pipes = param.Integer(1, bounds=(1, 9), label="DN pipes", metadata=setting())
    profile = param.Array(None, allow_None=True, precedence=-1, label="Rate profile")
    preset = param.Selector(
        default="Calm", objects=["Calm", "Storm"], label="Preset", metadata=entry()
    )


PRESETS = NamedConfigurations(
    Pump,
    "preset",
    {"Calm": {}, "Storm": {"rate": 8.0, "profile": np.array([1.0, 9.0])}},
    {"Calm": "Little flow.", "Storm": "Much flow."},
    replaces={"rate": "profile"},
)


def test_each_name_sets_every_parameter_from_the_defaults_and_its_own() -> None:
    assert list(PRESETS) == ["Calm", "Storm"] and len(PRESETS) == 2
    assert dict(PRESETS["Calm"]) == {"rate": 2.0, "pipes": 1, "profile": None, "preset": "Calm"}
    storm = PRESETS["Storm"]
    assert (storm["rate"], storm["pipes"], storm["preset"]) == (8.0, 1, "Storm")
    assert storm["profile"].tolist() == [1.0, 9.0]
    assert PRESETS.default == "Calm" and PRESETS.description("Storm") == "Much flow."
    with pytest.raises(TypeError):
        PRESETS["Calm"]["rate"] = 5.0  # a name's values are read-only


def test_load_starts_from_a_name_then_the_overrides() -> None:
    p = PRESETS.load("Storm", pipes=3)
    assert (p.rate, p.pipes, p.preset, p.profile.tolist()) == (8.0, 3, "Storm", [1.0, 9.0])
    # A uniform rate given with the name drops the name's profile.
    p = PRESETS.load("Storm", rate=4.0)
    assert (p.rate, p.profile) == (4.0, None)
    assert PRESETS.load().preset == "Calm"


def test_changed_compares_with_the_names_own_values() -> None:
    p = PRESETS.load("Storm")
    assert PRESETS.changed(p) == []
    p.pipes = 4
    assert PRESETS.changed(p) == ["pipes"]
    assert PRESETS.link_values(p) == {"preset": "Storm", "pipes": 4}
    p.profile = None  # replacing the profile is a change of the rate it follows
    assert PRESETS.changed(p) == ["rate", "pipes"]
    assert PRESETS.changed_labels(p) == ["rate", "DN pipes"]
    p.param.update(rate=8.0, pipes=1, profile=np.array([1.0, 9.0]))
    assert PRESETS.link_values(p) == {"preset": "Storm"}


def test_loaded_is_what_an_experiment_button_leaves() -> None:
    current = {**PRESETS["Storm"], "pipes": 5}
    # A name resets every other parameter first.
    assert PRESETS.loaded(current, {"preset": "Calm", "rate": 3.0}) == {
        "rate": 3.0,
        "pipes": 1,
        "profile": None,
        "preset": "Calm",
    }
    # Without one the settings go on top, a uniform rate dropping the profile.
    after = PRESETS.loaded(current, {"rate": 3.0})
    assert (after["rate"], after["pipes"], after["profile"], after["preset"]) == (
        3.0,
        5,
        None,
        "Storm",
    )


def test_a_description_per_name_and_a_name_parameter_are_required() -> None:
    with pytest.raises(ValueError, match="description"):
        NamedConfigurations(Pump, "preset", {"Calm": {}}, {})
    with pytest.raises(ValueError, match="no parameter 'scenario'"):
        NamedConfigurations(Pump, "scenario", {"Calm": {}}, {"Calm": "x."})


def test_helpers() -> None:
    assert [lower_first(x) for x in ("Ranks", "DDP bucketing", "find_unused", "")] == [
        "ranks",
        "DDP bucketing",
        "find_unused",
        "",
    ]
    assert same_value(None, None) and not same_value(None, 0.0) and not same_value(0.0, None)
    assert same_value(np.array([1.0, 2.0]), [1.0, 2.0]) and not same_value([1.0], [1.0, 2.0])
    assert same_value(3, 3.0) and not same_value("a", "b")
