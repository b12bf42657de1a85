"""What a class round may ask about the bucket timeline, answered by its schedule."""

from __future__ import annotations

from widgets.bucket_timeline.model import TimelineSettings
from widgets.common.round_questions import QuestionError, RoundQuestion, RoundQuestions, within
from widgets.model.buckets import step_schedule, sweep_layers_per_bucket


def _best_layers_per_bucket(config: TimelineSettings, _p: float | None) -> float:
    if config.uses_byte_cap():
        raise QuestionError(
            "These settings size buckets by a byte cap (bucket_cap_mb or DDP's bucketing): "
            "ask this question with layers per bucket instead."
        )
    return float(sweep_layers_per_bucket(config).best_setting)


ROUND = RoundQuestions(
    model=TimelineSettings,
    hides_result=True,
    questions=(
        RoundQuestion(
            "tail",
            "How long is the exposed tail?",
            "Exposed tail (ms)",
            "ms",
            False,
            within(0, 100_000),
            lambda config, _p: float(step_schedule(config).exposed_tail),
        ),
        RoundQuestion(
            "step",
            "How long is the step?",
            "Step time (ms)",
            "ms",
            False,
            within(0, 100_000),
            lambda config, _p: float(step_schedule(config).step_time),
        ),
        RoundQuestion(
            "best",
            "How many layers per bucket give the shortest step?",
            "Layers per bucket",
            "",
            True,
            lambda config: (1, int(config.n_layers)),
            _best_layers_per_bucket,
        ),
    ),
)
