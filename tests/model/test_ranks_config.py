"""The ranks view's settings contract, scenario texts checked on the model, and the records.

Units are MB, GB/s and ms. A ring all-reduce of S MB over p ranks takes
2(p-1)·latency + 2(p-1)/p · S / bandwidth; 8 ranks, 0.05 ms, 25 GB/s:
0.7 ms plus 1.75 ms per 25 MB.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from widgets.model.ranks import rank_schedule
from widgets.model.settings import hint_of, setting_names, unit_of

# Loaded by name: the test files run against each module are chosen by explicit --tests lists.
rv = importlib.import_module("widgets.many_ranks." + "model")

RanksConfig = rv.RanksConfig
ONE_SLOW, TWO_PARTIAL, DATA_LOADING = rv.ONE_SLOW, rv.TWO_PARTIAL, rv.DATA_LOADING
JITTER, CONTENTION, DISAGREE = rv.JITTER, rv.CONTENTION, rv.DISAGREE
READINESS = rv.READINESS

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


def close(actual, expected) -> None:
    np.testing.assert_allclose(np.asarray(actual, float), expected, rtol=1e-9, atol=1e-9)


# --- the settings, as declared -----------------------------------------------------------

# name: (label, unit, hint, bounds, default). Labels name the page's controls; the
# bounds validate typed text and URL values; units and hints are shown with the field.
SETTINGS = {
    "drawn_ranks": ("Drawn ranks", "ranks", None, (1, 8), 4),
    "ranks": ("Ring ranks", "ranks", None, (2, 4096), 8),
    "n_layers": ("Layers", "layers", None, (2, 24), 12),
    "layers_per_bucket": ("Layers per bucket", "layers", None, (1, 24), 3),
    "backward_ms": ("Backward time per layer", "ms", None, (0.01, 1000.0), 1.8),
    "grad_mb": ("Gradient size per layer", "MB", None, (0.001, 100000.0), 25.0),
    "bandwidth": ("Link bandwidth", "GB/s", None, (0.01, 10000.0), 25.0),
    "latency_ms": ("Latency per ring step", "ms", None, (0.0, 100.0), 0.05),
    "iteration": (
        "Iteration",
        "",
        "0 is the first iteration; 1 and later are alike.",
        (0, 1000),
        1,
    ),
    "enqueue_ms": ("Host enqueue cost", "ms", None, (0.0, 100.0), 0.05),
    "contention": (
        "Contention factor",
        "",
        "0 to 10; 1 halves backward speed during a transfer",
        (0.0, 10.0),
        0.0,
    ),
    "slowdown_pct": ("Slowdown", "%", None, (0.0, 500.0), 50.0),
    "delay_ms": ("Data loading delay", "ms", None, (0.0, 1000.0), 6.0),
    "seed": ("Jitter seed", "", None, (0, 9999), 1),
    "forward_ms": ("Forward time", "ms", None, (0.0, 100000.0), 12.0),
    "optimizer_ms": ("Optimizer time", "ms", None, (0.0, 100000.0), 2.0),
}
# The scenario names the lessons load (``scenario:`` lines), in the selector's order.
NAMES = (
    "One slow rank",
    "Two partial stragglers",
    "Data loading delays one rank",
    "Jitter",
    "Contention: busier but slower",
    "Ranks disagree",
    "Readiness order differs",
)


#: Declared between latency_ms and iteration: a choice, not a number.
SELECTORS = ("algorithm",)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_each_numeric_setting_declares_its_label_unit_hint_bounds_and_default(name: str) -> None:
    label, unit, hint, bounds, default = SETTINGS[name]
    p = RanksConfig.param[name]
    assert (p.label, unit_of(p), hint_of(p), tuple(p.bounds), p.default) == (
        label,
        unit,
        hint,
        bounds,
        default,
    )


def test_the_scenario_selector_declares_its_names_and_texts() -> None:
    p = RanksConfig.param.scenario
    assert p.label == "Scenario"
    assert unit_of(p) == ""
    assert hint_of(p) == "How the ranks differ; loads its settings."
    assert p.default == "One slow rank"
    assert list(p.objects) == list(NAMES)
    assert tuple(rv.SCENARIOS) == NAMES


def test_settings_are_the_table_in_declaration_order() -> None:
    names = list(SETTINGS)
    names.insert(names.index("iteration"), "algorithm")
    assert setting_names(RanksConfig) == [*names, "scenario"]


def test_the_algorithm_selector() -> None:
    p = RanksConfig.param.algorithm
    assert (p.label, p.default, list(p.objects)) == (
        "All-reduce algorithm",
        "ring",
        ["ring", "tree", "auto"],
    )


def test_every_scenario_a_lesson_loads_exists() -> None:
    named = set()
    for lesson in LESSONS.glob("*.md"):
        named |= set(re.findall(r"^scenario: (.+)$", lesson.read_text("utf-8"), re.M))
    assert named  # the lessons do load scenarios
    assert named <= set(NAMES)


def test_the_layer_bounds_stop_at_24_layers() -> None:
    RanksConfig(n_layers=24, layers_per_bucket=24)
    with pytest.raises(ValueError):
        RanksConfig(n_layers=25)
    with pytest.raises(ValueError):
        RanksConfig(layers_per_bucket=25)


def test_contention_hint_one_halves_backward_during_a_transfer() -> None:
    # One rank, two 4 ms layers, one per bucket, 1 MB each over 2 ranks at 1 GB/s with
    # 0.5 ms per ring step: each transfer takes 2·0.5 + 1 = 2 ms. Layer 2 ends at 4; its
    # transfer runs 4-6, during which layer 1 does 1 ms of work at half speed, then
    # 3 ms more: it ends at 9, 1 ms later than without contention.
    cfg = RanksConfig(
        drawn_ranks=1,
        ranks=2,
        n_layers=2,
        layers_per_bucket=1,
        backward_ms=4.0,
        grad_mb=1.0,
        bandwidth=1.0,
        latency_ms=0.5,
        enqueue_ms=0.0,
        contention=1.0,
        scenario=CONTENTION,
    )
    s = cfg.schedule()
    close(s.bucket_start, [4, 9])
    close(s.backward_end, [9])
    close(s.slowdown_ms, [1])


# Each scenario's values apart from the defaults above: 2 ms layers except the bucket
# timeline's Straggler (1.8 ms, 50 %); two layers per bucket for Two partial stragglers;
# Jitter up to 40 %; Contention with c = 1, one layer per bucket and 50 GB/s.
OVERRIDES = {
    ONE_SLOW: {},
    TWO_PARTIAL: {"backward_ms": 2.0, "layers_per_bucket": 2},
    DATA_LOADING: {"backward_ms": 2.0},
    JITTER: {"backward_ms": 2.0, "slowdown_pct": 40.0},
    CONTENTION: {
        "backward_ms": 2.0,
        "layers_per_bucket": 1,
        "contention": 1.0,
        "bandwidth": 50.0,
    },
    DISAGREE: {"backward_ms": 2.0},
    READINESS: {"backward_ms": 2.0, "drawn_ranks": 2},
}


@pytest.mark.parametrize("name", NAMES)
def test_each_scenario_loads_its_settings(name: str) -> None:
    defaults = {k: row[4] for k, row in SETTINGS.items()} | {"algorithm": "ring"}
    assert rv.SCENARIOS[name] == {**defaults, **OVERRIDES[name], "scenario": name}


# --- scenario descriptions, each clause checked on the model ------------------------------


def description(name: str, *clauses: str) -> None:
    """The description is exactly these clauses (each checked by its caller)."""
    assert rv.SCENARIO_DESCRIPTIONS[name] == "".join(clauses)


def test_one_slow_rank_description() -> None:
    cfg = rv.SCENARIOS.load(ONE_SLOW)
    work, _ = cfg.rank_work()
    s = cfg.schedule()
    # 1.8 x 1.5 = 2.7 ms on every layer of rank 0, 1.8 ms elsewhere.
    close(work[0], np.full(12, 2.7))
    close(work[1:], np.full((3, 12), 1.8))
    assert s.bucket_defining_rank.tolist() == [0, 0, 0, 0]
    # Rank 0 waits only for its last transfer (6.0 ms); the others 16.8 ms.
    close(s.idle_ms, [6.0, 16.8, 16.8, 16.8])
    description(
        ONE_SLOW,
        "Rank 0's backward is slower on every layer: ",
        "it defines every bucket's readiness, ",
        "and the other ranks wait for it before the optimizer.",
    )


def test_two_partial_stragglers_description() -> None:
    cfg = rv.SCENARIOS.load(TWO_PARTIAL)
    work, _ = cfg.rank_work()
    # Index 0 is layer 1: rank 0 takes 3 ms on layers 7-12, rank 1 4 ms on layers 1-6.
    close(work[0], [2.0] * 6 + [3.0] * 6)
    close(work[1], [4.0] * 6 + [2.0] * 6)
    # The enqueue cost delays every launch equally, so the defining ranks are those of
    # the case without it: 0 for the first four buckets, 1 for the last two.
    assert cfg.schedule().bucket_defining_rank.tolist() == [0, 0, 0, 0, 1, 1]
    description(
        TWO_PARTIAL,
        "Rank 0 is slow on the upper half of the layers, ",
        "rank 1 (twice as slow) on the lower half: ",
        "early buckets wait for rank 0, late ones for rank 1.",
    )


def test_data_loading_description() -> None:
    cfg = rv.SCENARIOS.load(DATA_LOADING)
    work, start = cfg.rank_work()
    close(start, [6.0, 0.0, 0.0, 0.0])
    close(work, np.full((4, 12), 2.0))
    assert cfg.schedule().bucket_defining_rank.tolist() == [0, 0, 0, 0]
    description(
        DATA_LOADING,
        "Rank 0 starts backward late because its data arrived late: ",
        "every bucket waits for it.",
    )


def test_jitter_description() -> None:
    cfg = rv.SCENARIOS.load(JITTER)
    work, _ = cfg.rank_work()
    # 2 ms times 1 + 0.4·u, u in [0, 1): every layer a little slower, by a random amount.
    assert np.all(work > 2.0) and np.all(work < 2.8)
    assert len(np.unique(work)) == work.size
    assert len(set(cfg.schedule().bucket_defining_rank.tolist())) > 1
    description(
        JITTER,
        "Every layer on every rank is randomly a little slower: ",
        "the rank that defines readiness changes from bucket to bucket.",
    )


def test_contention_description() -> None:
    cfg = rv.SCENARIOS.load(CONTENTION)
    assert np.all(cfg.schedule().slowdown_ms > 0)
    sweep = rv.sweep_layers_per_bucket(cfg)
    # One layer per bucket (12 buckets) against five (3 buckets).
    assert sweep.n_buckets[0] > sweep.n_buckets[4]
    assert sweep.overlap_fraction[0] > sweep.overlap_fraction[4]
    assert sweep.step_time[0] > sweep.step_time[4]
    description(
        CONTENTION,
        "Backward slows while a transfer runs: ",
        "more, smaller buckets overlap more, ",
        "yet the step gets slower.",
    )


def test_ranks_disagree_description() -> None:
    r = rv.SCENARIOS.load(DISAGREE).result()
    d = r.disagreement
    assert r.schedule is None
    assert d.skipping_rank == 1
    assert len(d.sequences[1]) < len(d.sequences[0])
    assert d.outcome().startswith("The job hangs")
    description(
        DISAGREE,
        "Rank 1 takes another branch and skips a layer: ",
        "the ranks no longer run the same collectives, ",
        "and the job hangs.",
    )


# --- the disagreement's texts ---------------------------------------------------------


def test_the_outcome_of_the_lessons_case_in_full() -> None:
    # 12 layers, 3 per bucket: buckets hold 12-10, 9-7, 6-4, 3-1; rank 1 skips layer 7
    # (12 // 2 + 1), in bucket 1, so ranks 0, 2 and 3 wait in collective 1.
    d = rv.SCENARIOS.load(DISAGREE).disagreement()
    assert d.outcome() == (
        "The job hangs at collective 1. Ranks 0, 2, 3 launch the all-reduce of bucket 1 "
        "and wait in it for rank 1, which never launches it: layer 7's gradient never "
        "arrives there, and buckets launch in index order, so no later bucket launches on "
        "rank 1 either. The waiting ranks stay blocked until the collective times out (an "
        "NCCL watchdog or gloo timeout error). Rank 1's backward returns with bucket 1 "
        "unreduced, and its next iteration fails with “Expected to have finished reduction "
        "in the prior iteration before starting a new one”. With "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL, PyTorch checks that every rank runs the same "
        "collective, reports the mismatch, and names the parameters that received no "
        "gradient on rank 1."
    )


def test_the_outcome_names_another_collective_and_two_waiting_ranks() -> None:
    # One layer per bucket: layers 12..8 are buckets 0..4, layer 7 is bucket 5; three
    # drawn ranks, so ranks 0 and 2 wait.
    d = rv.SCENARIOS.load(DISAGREE, layers_per_bucket=1, drawn_ranks=3).disagreement()
    assert d.outcome().startswith(
        "The job hangs at collective 5. Ranks 0, 2 launch the all-reduce of bucket 5 and "
        "wait in it for rank 1, which never launches it: layer 7's gradient never arrives"
    )
    assert "Rank 1's backward returns with bucket 5 unreduced, and its next" in d.outcome()


def test_the_fix_makes_the_ranks_agree() -> None:
    fix = rv.Disagreement.fix()
    # Every rank running the same branch is every scenario but Ranks disagree: a timeline.
    r = rv.SCENARIOS.load(ONE_SLOW).result()
    assert r.disagreement is None and r.schedule is not None
    assert fix == (
        "Make every rank run the same branch (the same layers, every step), or construct "
        "DDP with find_unused_parameters=True: it marks parameters that got no gradient "
        "as ready after forward, so their bucket still launches on every rank (at the "
        "cost of a graph traversal every step)."
    )


def test_bucket_config_names_the_bucket_timelines_limit() -> None:
    # The bucket timeline draws at most 12 layers per bucket.
    with pytest.raises(ValueError) as info:
        RanksConfig(n_layers=24, layers_per_bucket=13).bucket_config()
    assert str(info.value) == "the bucket timeline takes at most 12 layers per bucket"


# --- work profiles and bucket layout ----------------------------------------------------


def test_two_partial_stragglers_with_an_odd_layer_count_and_two_ranks() -> None:
    # Five 1 ms layers: the upper half is layers 5..3 (n..n//2+1, the middle layer
    # with it), the lower half layers 2..1. Rank 0: 1.5 ms upper; rank 1: 2 ms lower,
    # also when only two ranks are drawn.
    cfg = RanksConfig(
        scenario=TWO_PARTIAL, n_layers=5, drawn_ranks=2, backward_ms=1.0, slowdown_pct=50.0
    )
    work, start = cfg.rank_work()
    close(work, [[1.0, 1.0, 1.5, 1.5, 1.5], [2.0, 2.0, 1.0, 1.0, 1.0]])
    close(start, [0.0, 0.0])


@pytest.mark.parametrize(
    ("n_layers", "per_bucket", "expected"),
    [
        # Taken from the last layer back; the bucket holding layer 1 may be smaller.
        (12, 3, [[12, 11, 10], [9, 8, 7], [6, 5, 4], [3, 2, 1]]),
        (5, 2, [[5, 4], [3, 2], [1]]),
        (2, 2, [[2, 1]]),
    ],
)
def test_result_lists_each_buckets_layers_highest_first(n_layers, per_bucket, expected) -> None:
    r = RanksConfig(n_layers=n_layers, layers_per_bucket=per_bucket).result()
    assert [b.tolist() for b in r.bucket_layers] == expected
    assert r.n_buckets == len(expected)


def test_issue_to_completion_defaults_to_rank_0() -> None:
    # One slow rank with the 0.05 ms enqueue cost: rank 0 launches each bucket as it
    # starts, so issue to completion is one 5.95 ms transfer; rank 1 launched bucket 0
    # at 5.45 and it ended at 14.1.
    r = rv.SCENARIOS.load(ONE_SLOW).result()
    close(r.issue_to_completion(), [5.95] * 4)
    close(r.issue_to_completion(1)[0], 8.65)


def test_the_sweep_tries_every_layers_per_bucket_from_one() -> None:
    cfg = rv.SCENARIOS.load(ONE_SLOW, n_layers=4, enqueue_ms=0.0)
    sweep = rv.sweep_layers_per_bucket(cfg)
    assert sweep.setting.tolist() == [1, 2, 3, 4]
    assert sweep.n_buckets.tolist() == [4, 2, 2, 1]
    # Four layers of 2.7 ms on rank 0, one bucket of 100 MB: 0.7 + 7 = 7.7 ms after 10.8.
    close(sweep.step_time[3], 12 + 10.8 + 7.7 + 2)


# --- who defines a bucket, and ties ------------------------------------------------------


def with_schedule(work, layer_bucket, transfer) -> rv.RanksResult:
    """A result whose schedule is ``rank_schedule`` of the given arrays (no enqueue cost)."""
    base = RanksConfig().result()
    return dataclasses.replace(base, schedule=rank_schedule(work, layer_bucket, transfer))


def test_defining_mask_and_ties_by_hand() -> None:
    # Three ranks, two layers computed in column order, one per bucket. Launches:
    # ranks 0 and 1 at 2 and 3, rank 2 at 1 and 4. Bucket 0 is last launched by ranks 0
    # and 1 together, bucket 1 by rank 2 alone.
    r = with_schedule([[2.0, 1.0], [2.0, 1.0], [1.0, 3.0]], [0, 1], [0.5, 0.5])
    assert r.defining_mask.tolist() == [[True, False], [True, False], [False, True]]
    assert r.tied.tolist() == [True, False]


@pytest.mark.parametrize(
    ("work", "tied"),
    [
        # Launches at 1000 and 1000 + 1e-7 ms: within 1e-9 relative, a rounding tie.
        ([[1000.0], [1000.0 + 1e-7]], True),
        # 1 ms apart at 1000 ms is a real difference.
        ([[1000.0], [1001.0]], False),
        # Below 1 ms the tolerance is 1e-9 ms absolute: 1.5e-9 apart is no tie.
        ([[0.5], [0.5 + 1.5e-9]], False),
        # Exactly the tolerance behind the last launch still counts as a tie.
        ([[1.0 - 1e-9], [1.0]], True),
    ],
)
def test_ties_are_up_to_a_relative_rounding_tolerance(work, tied: bool) -> None:
    r = with_schedule(work, [0], [1.0])
    assert r.defining_mask[:, 0].tolist() == [tied, True]
    assert r.tied.tolist() == [tied]


# --- the records ------------------------------------------------------------------------


def test_collective_and_disagreement_are_frozen() -> None:
    c = rv.Collective(0, 75.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.bucket = 1
    d = rv.SCENARIOS.load(DISAGREE).disagreement()
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.mismatch_index = 2


def records():
    cfg = rv.SCENARIOS.load(ONE_SLOW, n_layers=4)
    return [
        (cfg.result(), cfg.result(), "scenario"),
        (rv.sweep_layers_per_bucket(cfg), rv.sweep_layers_per_bucket(cfg), "setting"),
    ]


@pytest.mark.parametrize("index", [0, 1], ids=["RanksResult", "RanksSweep"])
def test_array_records_are_frozen_and_compared_by_identity(index: int) -> None:
    a, b, field = records()[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(a, field, None)
    # Equal contents, yet distinct records: equality and hashing follow identity.
    assert a == a and a != b
    assert hash(a) == object.__hash__(a)
    assert len({a, b}) == 2
