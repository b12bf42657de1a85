"""One step's schedule from the settings, its regime decided against the knob's best.

A function of the settings, not a method of them: it runs a sweep over the
knob in force (``sweep``), which itself evaluates settings.
"""

from __future__ import annotations

from .config import BucketConfig
from .schedule import Schedule, build_schedule
from .sweep import SweepResult, knob_best


def step_schedule(config: BucketConfig, layer_sweep: SweepResult | None = None) -> Schedule:
    """The schedule of one step with these settings, its regime's suggestion
    decided against every setting of the knob in force (see ``regimes``).

    ``layer_sweep`` is ``sweep_layers_per_bucket(config)`` when the caller has
    already computed it (a view that draws the sweep), so that it is not
    computed twice; it is used only when layers per bucket is the knob.
    """
    if layer_sweep is not None and not config.uses_byte_cap():
        best = (layer_sweep.best_setting, layer_sweep.best_step)
    else:
        best = knob_best(config)
    tensors = config.tensors()
    return build_schedule(
        tensors,
        config.assignments(tensors)[0],
        backward_ms=config.backward_profile(),
        layer_grad_mb=config.size_profile(),
        straggler_pct=config.straggler_pct,
        forward_ms=config.forward_ms,
        optimizer_ms=config.optimizer_ms,
        setting=config.knob_setting(),
        best=best,
        accumulation_steps=config.accumulation_steps,
        **config.link_settings(),
    )
