"""A widget's settings as URL query keys: the parameter names, parsed like typed input."""

from __future__ import annotations

import param

from .common.parsing import parse_setting
from .model.settings import setting_names


def settings_from_query(
    spec: type[param.Parameterized], query: dict[str, list[bytes] | list[str]]
) -> tuple[dict[str, object], list[str]]:
    """Valid settings from a query string, and a notice for each key that was ignored.

    The accepted keys are the settings ``spec`` declares. Unknown keys and
    invalid values are ignored with a notice, never an error.
    """
    keys = setting_names(spec)
    values: dict[str, object] = {}
    notices: list[str] = []
    for key, raw_values in query.items():
        if key not in keys:
            shown = ", ".join(sorted(keys))
            notices.append(f"Ignored unknown setting “{key[:40]}” (known: {shown}).")
            continue
        raw = raw_values[-1]
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        try:
            value = parse_setting(text, spec.param[key])
        except ValueError as exc:
            notices.append(f"Ignored {key}={text[:40]}: {exc}")
            continue
        if value is None:
            continue
        values[key] = value
    return values, notices
