"""The validation protocol's pure logic (``bench/trace_protocol.py``), worked by hand.

The protocol itself records real runs and is not part of pytest; what decides
its verdict (the cases, the targets, the tally, the workloads' layouts) is here.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.trace_protocol import (
    MIB,
    MIXED_WIDTHS,
    WORKLOADS,
    Tally,
    Workload,
    at_least_as_close,
    cases,
    farther_share,
    median_interval,
    return_ok,
    tail_ok,
    tally,
)
from traces import buckets_for_cap


def test_three_layouts_give_three_cases() -> None:
    assert cases(["a", "b", "c"]) == [(("a", "b"), "c"), (("a", "c"), "b"), (("b", "c"), "a")]


def test_four_layouts_give_twelve_cases_each_target_outside_its_pair() -> None:
    got = cases(["a", "b", "c", "d"])
    assert len(got) == 12  # 6 pairs x 2 other layouts
    assert len(set(got)) == 12
    assert all(target not in pair for pair, target in got)
    # Each layout is the target of the 3 pairs of the other three.
    assert sorted(t for _, t in got) == ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["d"] * 3


def test_the_return_target_is_ten_percent_either_way() -> None:
    assert return_ok(110.0, 100.0) and return_ok(90.0, 100.0)
    assert not return_ok(110.5, 100.0) and not return_ok(89.5, 100.0)


def test_the_tail_target_is_twenty_percent_or_five_ms_whichever_is_larger() -> None:
    # 10 ms measured: 20 % is 2 ms, so the 5 ms floor applies: 15 passes, 15.5 does not.
    assert tail_ok(15.0, 10.0) and tail_ok(5.0, 10.0) and not tail_ok(15.5, 10.0)
    # 50 ms measured: 20 % is 10 ms: 60 passes, 61 does not.
    assert tail_ok(60.0, 50.0) and not tail_ok(61.0, 50.0) and not tail_ok(39.0, 50.0)


def test_at_least_as_close_allows_a_tie_and_no_more() -> None:
    assert at_least_as_close(12.0, 8.0, 10.0)  # both 2 ms off: a tie
    assert at_least_as_close(9.0, 13.0, 10.0)
    assert not at_least_as_close(13.0, 9.0, 10.0)
    assert at_least_as_close(10.0015, 10.001, 10.0)  # within the microsecond of rounding
    assert not at_least_as_close(10.003, 10.001, 10.0)


def _row(model_return, model_tail, base_return, base_tail, measured=(100.0, 10.0)):
    return {
        "refused": None,
        "model": {"return": (model_return, measured[0]), "tail": (model_tail, measured[1])},
        "baseline": {"return": (base_return, measured[0]), "tail": (base_tail, measured[1])},
    }


def test_the_tally_counts_each_target_and_a_refusal_is_no_hit() -> None:
    rows = [
        _row(105, 12, 80, 20),  # model: both hit, closer on the tail; baseline: both miss
        _row(115, 16, 101, 16),  # model: return misses (15 %), tail misses (6 ms); tie
        _row(95, 10, 95, 9),  # model: both hit; baseline: both hit
        {"refused": "buckets of 64 MiB lie outside ...", "baseline": None},
    ]
    t = tally(rows)
    # Row 3: the model's tail is exact (10 vs 10), the baseline 1 ms off: the model is closer.
    assert t == Tally(
        cases=4,
        refused=1,
        return_hits=2,
        tail_hits=2,
        closer_than_baseline=3,
        baseline_return_hits=2,
        baseline_tail_hits=1,
    )
    assert not t.met  # 2 of 4 is under 90 %, and a refusal counts against it


def test_the_targets_are_met_only_with_ninety_percent_and_never_farther() -> None:
    good = [_row(100, 10, 120, 20)] * 9
    assert tally([*good, _row(120, 10, 120, 20)]).met  # 9 of 10 returns is 90 %
    assert not tally([*good, _row(120, 10, 120, 20), _row(120, 10, 120, 20)]).met  # 9 of 11
    assert not tally([*good[:8], _row(100, 10.5, 100, 10.2)]).met  # farther once
    assert not tally([]).met


def test_farther_beyond_noise_when_every_resampled_median_says_so() -> None:
    # Every iteration measured 10 ms: every resample's median is 10, so a model at 12
    # against a baseline at 11 is farther in all of them, and at 10.5 in none.
    assert farther_share(12.0, 11.0, [10.0] * 30) == 1.0
    assert farther_share(10.5, 11.0, [10.0] * 30) == 0.0


def test_a_difference_inside_the_medians_spread_is_a_coin_toss() -> None:
    # Tails of 8 or 12 ms, half each: a resampled median is 8, 10 or 12, about as often
    # below 10 as above. Predictions of 10.5 and 9.5 are each the closer in about half.
    share = farther_share(10.5, 9.5, [8.0, 12.0] * 15, resamples=4000)
    assert 0.35 < share < 0.65
    # The same predictions against tails that are 10 every time: the model is farther
    # only when the baseline is strictly closer; 1 ms either side is a tie.
    assert farther_share(10.5, 9.5, [10.0] * 30) == 0.0


def test_farther_beyond_noise_is_counted_beside_the_target() -> None:
    rows = [
        {**_row(100, 10.5, 100, 10.2), "farther_share": 0.97},  # farther, beyond noise
        {**_row(100, 10.5, 100, 10.2), "farther_share": 0.6},  # farther, within noise
        _row(100, 10, 100, 12),  # closer, no share known
    ]
    t = tally(rows)
    assert t.closer_than_baseline == 1 and t.farther_beyond_noise == 1
    assert not t.met  # the target itself still asks for every case


def test_the_median_of_identical_measurements_has_no_spread() -> None:
    assert median_interval([20.0] * 30) == (20.0, 20.0)
    # Half 10, half 30: a resampled median of 30 values is 10, 20 or 30, and each end
    # comes up far more often than 5 % of the time.
    assert median_interval([10.0, 30.0] * 15) == (10.0, 30.0)
    with pytest.raises(ValueError):
        median_interval([])


def test_a_missed_return_inside_the_measured_medians_interval_is_counted() -> None:
    rows = [
        {**_row(120, 10, 100, 10), "return_interval": (90.0, 125.0)},  # miss, in noise
        {**_row(130, 10, 100, 10), "return_interval": (90.0, 125.0)},  # miss, beyond it
        {**_row(105, 10, 100, 10), "return_interval": (90.0, 125.0)},  # a hit
    ]
    t = tally(rows)
    assert t.return_hits == 1 and t.return_misses_in_noise == 1


def test_every_workload_makes_the_layouts_it_names() -> None:
    # DDP fills buckets in readiness order (the last layer first), closing a bucket once
    # it reaches the cap.
    counts = {}
    for w in WORKLOADS:
        n = len(w.widths) - 1
        fake_fit = SimpleNamespace(
            order=tuple(range(n))[::-1],
            parameter_bytes=tuple(int(m * MIB) for m in w.layer_mib),
        )
        counts[w.name] = {
            name: [len(b) for b in buckets_for_cap(fake_fit, cap)]
            for name, cap in w.caps_mb.items()
        }
    for name in ("width 1024, 1 thread", "width 512, 1 thread", "width 2048, 1 thread"):
        assert counts[name] == {
            "1 per bucket": [1] * 12,
            "3 per bucket": [3] * 4,
            "one bucket": [12],
            "5+5+2": [5, 5, 2],
        }
    # Layers of 8, 4, 2, 6, 3, 4, 8, 3, 3, 2, 2, 4 MiB, filled from the last: with an
    # 11 MiB cap 4+2+2+3 | 3+8 | 4+3+6 | 2+4+8; with 19 MiB 4+2+2+3+3+8 | 4+3+6+2+4 | 8.
    assert counts["layers of 2 to 8 MiB, 1 thread"] == {
        "1 per bucket": [1] * 12,
        "about 3 per bucket": [4, 2, 3, 3],
        "one bucket": [12],
        "about 19 MiB": [6, 5, 1],
    }


def test_the_mixed_model_has_layers_of_different_sizes() -> None:
    w = Workload("mixed", MIXED_WIDTHS, 1, {})
    assert w.layer_mib == pytest.approx((8, 4, 2, 6, 3, 4, 8, 3, 3, 2, 2, 4))
    assert sum(w.layer_mib) == pytest.approx(49)
    assert {x.threads for x in WORKLOADS} == {1, 2}
