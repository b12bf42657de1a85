"""Whether a fit can predict a bucket layout: the terms the layout needs, and what constrains them.

A prediction is refused, with its reason, when the layout needs a term the
fitted data did not pin down:

- **known sizes**: a fit of traces whose bucket sizes are unknown has no
  overhead or bandwidth, and a layout of unknown sizes has no transfer times:
  no ``extrapolate`` predicts either (``sizes_refusal``);
- **transfer sizes**: every bucket must lie within ``Fit.size_range`` (with
  ``SIZE_SLACK``): the sizes of the all-reduces timed alone when the traces have
  them, else the sizes of the fitted buckets (overhead and bandwidth read off
  buckets that overlapped backward hold contention too, and do not extrapolate);
- **backward contention**: a layout of two or more buckets runs transfers under
  backward, so it needs c, which only a fitted layout that did that identifies;
- **transfer contention**: likewise c_t, from fitted transfers that ran while
  a rank computed.

The baseline (``Fit.contention_terms`` False) needs no contention, by
construction, so only the sizes are checked for it.
"""

from __future__ import annotations

import numpy as np

from .fit_record import Fit
from .schema import MIB, UNKNOWN_SIZES, TraceError

SIZE_SLACK = 0.02  # a bucket 2 % beyond the measured sizes still counts as inside


class PredictionRefused(TraceError):
    """The fit cannot constrain a term the layout needs; the message says which and why."""


def _mib(nbytes: float) -> str:
    return f"{nbytes / MIB:.3g} MiB"


def sizes_refusal(fit: Fit, bucket_bytes: np.typing.ArrayLike) -> str | None:
    """Why no transfer time can be had for ``bucket_bytes`` from ``fit``, or None."""
    if not fit.sizes_known:
        return (
            f"the fit has no per-transfer overhead or bandwidth: the fitted traces' {UNKNOWN_SIZES}"
        )
    if np.isnan(np.asarray(bucket_bytes, float)).any():
        return f"its transfers have no size to time: {UNKNOWN_SIZES}"
    return None


def refusal(fit: Fit, bucket_bytes: np.typing.ArrayLike) -> str | None:
    """Why ``fit`` cannot predict buckets of ``bucket_bytes`` (bucket 0 first), or None."""
    sizes = np.asarray(bucket_bytes, float).reshape(-1)
    unknown = sizes_refusal(fit, sizes)
    reasons = [] if unknown is None else [unknown]
    low, high = fit.size_range
    outside = (
        []
        if unknown is not None
        else sizes[(sizes < low * (1 - SIZE_SLACK)) | (sizes > high * (1 + SIZE_SLACK))]
    )
    if len(outside):
        seen = f"{_mib(low)}" if low == high else f"{_mib(low)} to {_mib(high)}"
        which = ", ".join(_mib(s) for s in sorted(set(outside.tolist())))
        if fit.transfer_source == "isolated":
            reasons.append(
                f"buckets of {which} lie outside the all-reduce sizes timed alone ({seen})"
            )
        else:
            reasons.append(
                f"buckets of {which} lie outside the fitted buckets' sizes ({seen}), and the "
                "traces hold no all-reduces timed alone: overhead and bandwidth read off "
                "buckets that overlapped backward hold contention too and do not extrapolate "
                "(record with `overlap-lab record`, which times them)"
            )
    if fit.contention_terms and sizes.size > 1:
        if not fit.contention_identified:
            reasons.append(
                "its transfers run under backward, and no fitted layout identified how much "
                "they slow backward (backward contention)"
            )
        if not fit.transfer_contention_identified:
            reasons.append(
                "its transfers run under backward, and too few fitted transfers did to "
                "identify how much backward slows them (transfer contention)"
            )
    return "; ".join(reasons) if reasons else None


def check_predictable(fit: Fit, bucket_bytes: np.typing.ArrayLike, what: str) -> None:
    """Raise ``PredictionRefused`` naming ``what`` when ``refusal`` has a reason."""
    reason = refusal(fit, bucket_bytes)
    if reason is not None:
        raise PredictionRefused(f"{what}: the fit cannot predict it: {reason}")
