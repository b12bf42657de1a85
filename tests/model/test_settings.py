"""Settings declarations: the metadata each helper writes and what the readers get back."""

from __future__ import annotations

import param

from widgets.model.settings import entry, hint_of, is_setting, setting, setting_names, unit_of


def test_setting_metadata_is_the_unit_the_hint_and_the_flag() -> None:
    assert setting() == {"setting": True, "unit": "", "hint": None}
    assert setting("ms", hint="empty: none") == {
        "setting": True,
        "unit": "ms",
        "hint": "empty: none",
    }


def test_entry_metadata_has_no_setting_flag() -> None:
    assert entry() == {"unit": "", "hint": None}
    assert entry("items", "your guess") == {"unit": "items", "hint": "your guess"}
    assert not is_setting(param.Number(0.0, metadata=entry("items")))


def test_readers_of_a_parameter_without_metadata() -> None:
    bare = param.Number(0.0)
    assert bare.metadata is None
    assert is_setting(bare) is False
    assert unit_of(bare) == ""
    assert hint_of(bare) is None


def test_readers_of_declared_metadata() -> None:
    declared = param.Number(0.0, metadata=setting("GB/s", hint="a hint"))
    assert is_setting(declared) is True
    assert unit_of(declared) == "GB/s"
    assert hint_of(declared) == "a hint"
    typed = param.Number(0.0, metadata=entry())
    assert unit_of(typed) == ""
    assert hint_of(typed) is None
    # A unit given without the hint key at all still reads as "no unit" / "no hint".
    assert unit_of(param.Number(0.0, metadata={"hint": "h"})) == ""
    assert hint_of(param.Number(0.0, metadata={"unit": "ms"})) is None


class _Base(param.Parameterized):
    b = param.Number(1.0, metadata=setting("ms"))
    hidden = param.Number(2.0)


class _Child(_Base):
    a = param.Integer(1, metadata=setting())
    guess = param.Number(None, allow_None=True, metadata=entry("ms"))


def test_setting_names_in_declaration_order_on_classes_and_instances() -> None:
    assert setting_names(_Base) == ["b"]
    assert setting_names(_Child) == ["b", "a"]
    child = _Child(b=3.0)
    assert setting_names(child) == ["b", "a"]
    assert child.b == 3.0
