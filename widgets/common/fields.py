"""The controls a page draws, described from the ``param`` declarations (no Panel here).

Each user-facing parameter (a ``setting`` or an ``entry``, see
``widgets.model.settings``) becomes one record the browser turns into a native
labelled input: its label, its unit, the line under it (a hint, or its bounds)
and, for a choice, the options. Values travel as the text a person would type.
"""

from __future__ import annotations

import param

from ..common.formatting import plain_number
from ..common.parsing import bounds_text
from ..model.settings import hint_of, unit_of


def field_names(settings: param.Parameterized | type[param.Parameterized]) -> list[str]:
    """Parameters a learner edits: declared settings and entries (they carry a unit)."""
    return [
        name
        for name, p in settings.param.objects("existing").items()
        if p.metadata and "unit" in p.metadata
    ]


def field_kind(p: param.Parameter) -> str:
    """``"boolean"``, ``"choice"`` or ``"number"``."""
    if isinstance(p, param.Boolean):
        return "boolean"
    if isinstance(p, param.Selector):
        return "choice"
    return "number"


def field_spec(p: param.Parameter, name: str) -> dict:
    """What the browser needs to draw one control."""
    kind = field_kind(p)
    spec = {"name": name, "kind": kind, "label": p.label, "unit": unit_of(p)}
    if kind == "number":
        spec["hint"] = hint_of(p) or bounds_text(p)
    else:
        spec["hint"] = hint_of(p) or p.doc or ""
    if kind == "choice":
        spec["choices"] = [str(o) for o in p.objects]
    return spec


def field_specs(settings: param.Parameterized) -> list[dict]:
    """Every control of a settings object, in declaration order."""
    return [field_spec(settings.param[name], name) for name in field_names(settings)]


def value_text(value: object) -> str:
    """A value as the text its field shows (``"4"``, ``"true"``, ``""`` for none)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return plain_number(value)
    return str(value)
