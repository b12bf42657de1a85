"""The distribution a round shows: every prediction in exactly one bin, nothing else."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from app.classroom.histogram import bins, summary

finite = st.floats(min_value=0, max_value=100_000, allow_nan=False, allow_infinity=False)


@given(st.lists(finite, max_size=300))
def test_bins_cover_every_prediction_once_and_touch(values):
    found = bins(values)
    assert sum(b["count"] for b in found) == len(values)
    for a, b in itertools.pairwise(found):
        assert a["hi"] == b["lo"] and a["lo"] < a["hi"]
    for v in values:
        assert any(b["lo"] - 1e-9 <= v <= b["hi"] + 1e-9 for b in found)
    assert len(found) <= 25


@given(st.lists(st.integers(min_value=0, max_value=20), min_size=1, max_size=300))
def test_whole_answers_get_one_bin_per_value(values):
    found = bins(values, integer=True)
    centres = [(b["lo"] + b["hi"]) / 2 for b in found]
    assert centres == list(range(min(values), max(values) + 1))
    assert [b["count"] for b in found] == [values.count(c) for c in centres]


@given(st.lists(finite, min_size=1, max_size=301))
def test_the_class_median_is_the_middle_prediction(values):
    xs = sorted(values)
    n = len(xs)
    middle = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    assert summary(values)["median"] == middle


def test_no_prediction_no_bins():
    assert summary([]) == {"count": 0, "median": None, "bins": []}
