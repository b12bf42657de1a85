"""What a class round may ask about many ranks, answered by their schedule."""

from __future__ import annotations

from widgets.common.round_questions import (
    Parameter,
    QuestionError,
    RoundQuestion,
    RoundQuestions,
    within,
)
from widgets.many_ranks.model import RanksConfig
from widgets.many_ranks.result import RanksResult


def _timeline(config: RanksConfig) -> RanksResult:
    result = config.result()
    if result.schedule is None:
        raise QuestionError(
            "When ranks disagree there is no timeline to ask about: pick another scenario."
        )
    return result


def _defining_rank(config: RanksConfig, bucket: float | None) -> float:
    ranks = _timeline(config).defining_ranks
    b = int(bucket if bucket is not None else 0)
    if not 0 <= b < len(ranks):
        raise QuestionError(f"These settings have buckets 0 to {len(ranks) - 1}: pick one of them.")
    return float(ranks[b])


ROUND = RoundQuestions(
    model=RanksConfig,
    hides_result=True,
    questions=(
        RoundQuestion(
            "defining",
            "Which rank defines bucket {p}'s readiness?",
            "Rank",
            "",
            True,
            lambda config: (0, int(config.drawn_ranks) - 1),
            _defining_rank,
            Parameter("Bucket", "", True, 0, 100),
        ),
        RoundQuestion(
            "idle",
            "How long does the fastest rank idle before the optimizer?",
            "Idle time (ms)",
            "ms",
            False,
            within(0, 100_000),
            lambda config, _p: float(_timeline(config).fastest_idle_ms),
        ),
    ),
)
