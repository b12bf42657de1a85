"""User-facing settings: one ``param`` declaration carries the unit and the hint too.

A setting is an ordinary ``param.Number`` or ``param.Integer`` whose ``metadata``
says it is user-facing (``setting(unit, hint)``). Its label names the control,
its bounds validate typed text and URL values, its doc is the help text, its
unit and hint are shown with the field, and its name is its URL query key.
Nothing else lists a widget's settings.
"""

from __future__ import annotations

import param

_SETTING = "setting"


def setting(unit: str = "", hint: str | None = None) -> dict:
    """The ``metadata`` that makes a parameter a user-facing setting (and a URL key).

    ``unit`` is shown after values and bounds (``"items/s"``); ``hint`` replaces
    the bounds as the line under the field when the bounds alone say too little.
    """
    return {_SETTING: True, "unit": unit, "hint": hint}


def entry(unit: str = "", hint: str | None = None) -> dict:
    """The ``metadata`` of a field a learner types into that is not a setting.

    A prediction, for example: it has a unit and a hint, but a link does not
    carry it.
    """
    return {"unit": unit, "hint": hint}


def is_setting(p: param.Parameter) -> bool:
    """Whether ``p`` was declared with ``setting(...)``."""
    return bool((p.metadata or {}).get(_SETTING))


def unit_of(p: param.Parameter) -> str:
    """The unit a parameter declares ("" when it has none)."""
    return (p.metadata or {}).get("unit", "")


def hint_of(p: param.Parameter) -> str | None:
    """The hint a parameter declares, or None to show its bounds."""
    return (p.metadata or {}).get("hint")


def setting_names(owner: type[param.Parameterized] | param.Parameterized) -> list[str]:
    """The user-facing settings of a Parameterized class, in declaration order."""
    return [name for name, p in owner.param.objects("existing").items() if is_setting(p)]
