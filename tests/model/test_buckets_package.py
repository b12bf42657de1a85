"""The buckets package's public API: ``__all__`` names exactly what it imports from its modules."""

from __future__ import annotations

import types

import widgets.model.buckets as buckets


def test_all_lists_every_public_name_once_and_each_resolves() -> None:
    public = {
        name
        for name, value in vars(buckets).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert len(buckets.__all__) == len(set(buckets.__all__)) == 41
    assert set(buckets.__all__) == public
    namespace: dict[str, object] = {}
    exec("from widgets.model.buckets import *", namespace)  # what a star import gets
    assert {k for k in namespace if k != "__builtins__"} == public
