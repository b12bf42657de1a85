"""Predict a bucket layout's step from a fit, with the event-driven schedule, and compare.

The prediction runs ``widgets.model.ranks.rank_schedule`` with the fitted
per-parameter backward times (in their measured readiness order), the
target's buckets and their ``a + S / bandwidth`` transfers, the contention
factor of each rank (``rank_contention``, the most slowed rank first), the
transfer contention, the enqueue cost and, when the fit had backward alone,
each bucket's copy back into the gradients after backward (``Fit.copy_back_ms``,
which slows the transfers still running) and the collectives in flight at once
(``Fit.concurrent_collectives``: above one, each transfer's overhead is latency
that hides behind the previous bucket's bytes). The last rank starts backward at 0 and every
other rank ``start_skew_ms`` earlier. Then, in the terms of ``measure``:

- communication end C = the last transfer's end; compute end E = the last
  rank's backward end; exposed tail = ``max(0, C - E)``;
- backward return = ``max(C, E) + finalize`` (finalize grows with the last
  bucket's size when the fit had backward alone: ``Fit.finalize_for``);
- step = forward + backward return + after return.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from widgets.model.ranks import RankSchedule, rank_schedule

from . import identify
from .fit_record import Fit
from .load import Trace, TraceError
from .measure import QUANTITIES, Summary, measure, quiet_iterations, summarize
from .schema import MIB, UNKNOWN_SIZES


@dataclass(frozen=True, eq=False)
class Prediction:
    """Predicted quantities (ms) for one bucket layout, and the schedule behind them."""

    quantities: dict[str, float]
    schedule: RankSchedule
    compute_end_ms: float


def buckets_for_cap(fit: Fit, cap_mib: float) -> list[np.ndarray]:
    """The buckets DDP would make with ``bucket_cap_mb=cap_mib`` after its rebuild.

    From iteration 1 on, DDP fills buckets in the order gradients became ready in
    iteration 0 (``fit.order``), closing a bucket once it reaches the cap (the
    cap given explicitly applies to the first bucket too). Feed the result to
    ``predict_layout`` for a "what if" bucket size.
    """
    if not cap_mib > 0:
        raise ValueError("a bucket cap must be positive")
    if None in fit.parameter_bytes:
        raise identify.PredictionRefused(
            f"a bucket cap of {cap_mib:g} MiB: no layout can be cut from gradients of unknown "
            f"size ({UNKNOWN_SIZES})"
        )
    cap = cap_mib * MIB
    buckets: list[list[int]] = [[]]
    filled = 0
    for p in fit.order:
        if filled >= cap:
            buckets.append([])
            filled = 0
        buckets[-1].append(p)
        filled += fit.parameter_bytes[p]
    return [np.array(b, int) for b in buckets]


def predict_layout(
    fit: Fit, bucket_parameters: list[np.ndarray] | tuple[np.ndarray, ...]
) -> Prediction:
    """Predict the step when the parameters are bucketed as ``bucket_parameters``."""
    n = len(fit.parameter_names)
    bucket = np.full(n, -1)
    for b, members in enumerate(bucket_parameters):
        bucket[np.asarray(members, int)] = b
    if np.any(bucket < 0):
        raise TraceError("every parameter needs a bucket")
    sizes = fit.layout_bytes(bucket_parameters)
    unknown = identify.sizes_refusal(fit, sizes)
    if unknown is not None:
        raise identify.PredictionRefused(f"the fit cannot predict this layout: {unknown}")
    start = np.full(fit.world_size, -fit.start_skew_ms)
    start[0] = 0.0  # the rank that starts last; which one it is doesn't matter to the model
    s = rank_schedule(
        fit.backward_matrix(),
        bucket,
        fit.transfer_ms(sizes),
        order=np.asarray(fit.order, int),
        start_ms=start,
        enqueue_ms=fit.enqueue_ms,
        contention=np.asarray(fit.rank_contention, float),
        transfer_contention=fit.transfer_contention,
        copy_back_ms=fit.copy_back_ms(sizes),
        concurrent=fit.concurrent_collectives,
        latency_ms=fit.overhead_ms,
    )
    compute_end = s.last_backward_end
    backward_return = max(s.comm_end, compute_end) + fit.finalize_for(sizes[-1])
    return Prediction(
        quantities={
            "backward_return_ms": backward_return,
            "communication_end_ms": s.comm_end,
            "exposed_tail_ms": s.exposed_tail,
            "step_ms": fit.forward_ms + backward_return + fit.after_return_ms,
        },
        schedule=s,
        compute_end_ms=compute_end,
    )


def error_pct(predicted: float, measured: float) -> float:
    """Signed error of a prediction, in % of the measurement (inf when that is 0)."""
    if measured == 0:
        return 0.0 if predicted == 0 else float("inf")
    return 100.0 * (predicted - measured) / measured


def compare(
    fit: Fit, target: Trace, max_other_load: float | None = 0.25, *, extrapolate: bool = False
) -> dict:
    """Predicted vs measured (median over quiet iterations, with spread) for ``target``.

    Returns ``{"quantities": {name: {"predicted", "measured", "error_pct",
    "spread": {...}}}, "refusal": ..., ...}`` with the quantities of
    ``measure.QUANTITIES``. A layout the fit cannot constrain
    (``identify.refusal``) raises ``PredictionRefused`` with the reason, unless
    ``extrapolate`` is set: then it is predicted anyway and ``refusal`` holds
    the reason (None when there is none). Unknown bucket sizes are refused
    even then: there is no transfer time to extrapolate.
    """
    if target.parameter_names != fit.parameter_names:
        raise TraceError(f"{target.name}: its parameters differ from the fitted traces'")
    refusal = identify.refusal(fit, target.bucket_bytes)
    if refusal is not None and (
        not extrapolate or identify.sizes_refusal(fit, target.bucket_bytes)
    ):
        raise identify.PredictionRefused(
            f"{target.name} ({target.layout}): the fit cannot predict it: {refusal}"
        )
    prediction = predict_layout(fit, target.bucket_parameters)
    keep = quiet_iterations(target, max_other_load)
    m = measure(target)
    out: dict[str, dict] = {}
    for name in QUANTITIES:
        s: Summary = summarize(m.quantity(name)[keep])
        predicted = prediction.quantities[name]
        out[name] = {
            "predicted": round(predicted, 3),
            "measured": round(s.median, 3),
            "error_pct": round(error_pct(predicted, s.median), 2),
            "spread": {
                "q25": round(s.q25, 3),
                "q75": round(s.q75, 3),
                "min": round(s.low, 3),
                "max": round(s.high, 3),
                "iterations": s.n,
            },
        }
    return {
        "quantities": out,
        "refusal": refusal,
        "target": target.name,
        "target_layout": target.layout,
        "fitted_on": list(fit.sources),
    }
