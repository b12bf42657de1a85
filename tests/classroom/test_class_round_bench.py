"""The 1,000-learner round's benchmark, at the scale of a few learners in two processes."""

from __future__ import annotations

import tempfile
from pathlib import Path

from class_support import run

from bench.class_round import run_round
from bench.classroom import behind_nginx
from bench.learner_workers import interleave


def test_interleave_puts_each_workers_learners_back_in_order() -> None:
    # Seven learners over three workers: worker 0 has 0, 3, 6; 1 has 1, 4; 2 has 2, 5.
    assert interleave([["a0", "a3", "a6"], ["b1", "b4"], ["c2", "c5"]]) == [
        "a0", "b1", "c2", "a3", "b4", "c5", "a6",
    ]  # fmt: skip
    assert interleave([[1, 2]]) == [1, 2]


def test_a_round_of_learners_in_two_processes_measures_every_learner() -> None:
    # Not pytest's tmp_path: nginx's workers must reach the folder (its cache is there).
    with (
        tempfile.TemporaryDirectory(prefix="overlap-lab-round-") as tmp,
        behind_nginx(Path(tmp)) as target,
    ):
        result = run(run_round(target, 5, before=1, workers=2))
    assert result["learners"] == 5 and result["learner_workers"] == 2
    # Every learner's vote (drawn by the benchmark) is in the class's CSV, none refused.
    assert result["votes_refused"] == 0 and result["no_vote_lost"]
    for part in ("open_to_widget", "reveal_to_answer"):
        stats = result[part]
        assert 0 < stats["p50_s"] <= stats["p95_s"] <= stats["max_s"] < 30
    assert result["scripts_fetched"] and result["live_frames_ok"] == 1
