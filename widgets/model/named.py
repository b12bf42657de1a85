"""Named configurations: a named set of settings, what a learner changed, what a link carries.

A widget's presets or scenarios are one ``NamedConfigurations`` over its
settings class. Each name sets every parameter (the class's defaults, then the
name's own values), so loading one never inherits a value from the one before.
The name is itself a parameter of the settings class (``key``: ``preset`` or
``scenario``, its URL key), so settings always know which name they started
from, and what differs from it is worked out by comparing values:

- ``load(name, **overrides)`` is the one way to start from a name;
- ``changed(settings)`` lists the settings that differ from their name's own
  values ("Jitter, changed: seed"), ``changed_labels`` as a list of changes
  writes them;
- ``link_values(settings)`` is what a link carries: the name, then only the
  changed settings.

Some settings replace others when given: a uniform backward time given with a
preset means "every layer" and drops the preset's per-layer profile
(``replaces``). A replaced value counts as a change of the setting that
replaced it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import param

from .settings import setting_names


def same_value(a: object, b: object) -> bool:
    """Whether two setting values are equal (arrays element by element, None only to None)."""
    if a is None or b is None:
        return a is b
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def lower_first(label: str) -> str:
    """A label as a list of changes writes it: "Ranks" -> "ranks"; "DDP bucketing" stays."""
    return label[:1].lower() + label[1:] if label[1:2].islower() else label


class NamedConfigurations(Mapping[str, Mapping[str, Any]]):
    """The named configurations of one settings class, by name: every parameter's value.

    ``own`` gives each name's values that differ from the class's defaults, in
    the order the names are offered; ``descriptions`` one sentence per name.
    """

    def __init__(
        self,
        settings_class: type[param.Parameterized],
        key: str,
        own: Mapping[str, Mapping[str, Any]],
        descriptions: Mapping[str, str],
        *,
        replaces: Mapping[str, str] | None = None,
    ):
        if list(descriptions) != list(own):
            raise ValueError("give one description per named configuration, in the same order")
        defaults = {n: settings_class.param[n].default for n in settings_class.param if n != "name"}
        if key not in defaults:
            raise ValueError(f"{settings_class.__name__} has no parameter {key!r} for the name")
        self.settings_class = settings_class
        self.key = key
        self.replaces: Mapping[str, str] = MappingProxyType(dict(replaces or {}))
        self._values = {
            name: MappingProxyType({**defaults, **values, key: name})
            for name, values in own.items()
        }
        self._descriptions = dict(descriptions)

    def __getitem__(self, name: str) -> Mapping[str, Any]:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def default(self) -> str:
        """The name settings start from when none is given."""
        return self.settings_class.param[self.key].default

    def description(self, name: str) -> str:
        """One sentence on what the name shows."""
        return self._descriptions[name]

    def values_of(self, name: str, **overrides: Any) -> dict[str, Any]:
        """Every parameter of ``name``, then ``overrides`` (dropping what they replace)."""
        values = dict(self[name])
        values.update({self.replaces[k]: None for k in overrides if k in self.replaces})
        return {**values, **overrides}

    def load(self, name: str | None = None, **overrides: Any) -> param.Parameterized:
        """New settings set to ``name`` (by default the class's own), then ``overrides``."""
        return self.settings_class(
            **self.values_of(self.default if name is None else name, **overrides)
        )

    def loaded(self, current: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
        """``current`` after loading ``settings`` as an experiment: a name among them resets
        every other parameter to the name's first; without one they go on top of ``current``."""
        settings = dict(settings)
        if self.key in settings:
            return self.values_of(settings.pop(self.key), **settings)
        dropped = {self.replaces[k]: None for k in settings if k in self.replaces}
        return {**current, **dropped, **settings}

    def changed(self, settings: param.Parameterized) -> list[str]:
        """The settings (URL keys) that differ from their name's own values, in declaration
        order; a replaced value counts as a change of the setting that replaces it."""
        own = self[getattr(settings, self.key)]
        differs = {
            n for n, p in self.replaces.items() if not same_value(getattr(settings, p), own[p])
        }
        return [
            n
            for n in setting_names(settings)
            if n != self.key and (n in differs or not same_value(getattr(settings, n), own[n]))
        ]

    def changed_labels(self, settings: param.Parameterized) -> list[str]:
        """``changed(settings)`` as a list of changes names them ("ranks", "DDP bucketing")."""
        return [lower_first(settings.param[n].label) for n in self.changed(settings)]

    def link_values(self, settings: param.Parameterized) -> dict[str, Any]:
        """What a link carries: the name, then only the settings changed from it."""
        values: dict[str, Any] = {self.key: getattr(settings, self.key)}
        values.update({n: getattr(settings, n) for n in self.changed(settings)})
        return values
