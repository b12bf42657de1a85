"""Fit the schedule model (``widgets.model.ranks``) to measured traces.

Each term comes from the measurement that isolates it. When the traces hold
all-reduces and backward timed alone (their ``isolated`` block,
``traces.fit_isolated``), those give backward per layer, overhead, bandwidth,
finalize's growth and the copy-back; the overlap in the DDP traces then says
only how much the ranks slow each other, one contention for both directions
(``traces.fit_contention``). Traces without the block (version-1 files such as
the shipped ones) are fitted from the overlap alone (``traces.fit_backward``,
``traces.fit_transfers``) and the fit says what that leaves unidentified.
``contention=False`` gives the plain baseline: the same fit with c = c_t = 0
and one collective at a time (FIFO alpha-beta), to show what the other terms
buy. ``traces.fit_observations`` says what is read off the traces; every term
can carry a bootstrap interval over iterations (``traces.bootstrap``), and
``traces.identify`` refuses a layout that needs a term the fitted layouts do
not constrain. How the design came to be, with the measurements behind it, is
in ``bench/README.md`` ("How the fit came to be").

Quality: R^2 and RMS residual of the gradient intervals and of the transfer
durations, each predicted from the fitted numbers and the measured busy/compute
intervals.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .bootstrap import bootstrap_intervals
from .fit_backward import BackwardTerms, fit_backward
from .fit_contention import collectives_in_flight, match_contention
from .fit_isolated import finalize_line, isolated_terms
from .fit_observations import observe
from .fit_quality import FitQuality
from .fit_record import Fit
from .fit_transfers import TransferTerms, transfers_from_overlap
from .load import Trace, TraceError


def _check_alike(traces: list[Trace]) -> None:
    """Raise unless ``traces`` is not empty and every trace has the same parameters and ranks."""
    if not traces:
        raise TraceError("fit needs at least one trace")
    first = traces[0]
    for t in traces[1:]:
        if t.parameter_names != first.parameter_names:
            raise TraceError(f"{t.name}: its parameters differ from {first.name}'s")
        if t.n_ranks != first.n_ranks:
            raise TraceError(f"{t.name}: {t.n_ranks} ranks, {first.name} has {first.n_ranks}")


def _unidentified(
    backward: BackwardTerms,
    transfer: TransferTerms,
    from_alone: bool,
    from_line: bool,
    with_contention: bool,
) -> tuple[str, ...]:
    """What the fitted data could not pin down, in words (``Fit.unidentified``)."""
    unidentified: list[str] = []
    if with_contention and not backward.identified:
        unidentified.append(backward.why_unidentified(from_alone))
    if not from_line:
        unidentified.append(transfer.why_unidentified())
    if with_contention and not transfer.identified:
        unidentified.append(
            "transfer contention: it is backward contention's, which no fitted layout identified"
            if from_line
            else "transfer contention: too few fitted transfers ran under backward and too few "
            "after it"
            if transfer.sizes_known
            else "transfer contention: no fitted transfer has a known size to read it from"
        )
    if not from_alone:
        unidentified.append(
            "backward per layer: the traces hold no backward alone; read from the intervals "
            "free of transfers"
        )
    return tuple(unidentified)


def _fit_once(traces: list[Trace], max_other_load: float | None, with_contention: bool) -> Fit:
    """One fit of ``traces`` (``fit`` without the bootstrap)."""
    _check_alike(traces)
    names, world = traces[0].parameter_names, traces[0].n_ranks
    alone, line = isolated_terms(traces, max_other_load)
    seen = observe(traces, max_other_load)
    backward = fit_backward(
        seen,
        None if alone is None else alone.per_parameter_ms,
        len(names),
        world,
        with_contention,
    )
    # With all-reduces alone, a and bandwidth are their line and c_t is backward's
    # contention, matched once the rest is fitted (``match_contention``).
    measured = seen.transfers.sized()  # what transfer terms and their quality can use
    if line is not None:
        transfer = TransferTerms(
            overhead_ms=line.overhead_ms,
            ms_per_byte=line.ms_per_byte,
            contention=0.0,
            separable=True,
            identified=backward.identified,
            size_range=line.size_range,
            isolated_quality=line.quality,
        )
    else:
        transfer = transfers_from_overlap(seen.transfers, with_contention)
    a, beta = transfer.overhead_ms, transfer.ms_per_byte

    if alone is None:
        finalize_ms, finalize_per_mib = float(max(0.0, np.median(seen.finalize_ms))), 0.0
    else:
        finalize_ms, finalize_per_mib = finalize_line(
            seen.last_bucket_bytes, seen.finalize_ms, alone.finalize_point
        )
    if transfer.sizes_known:
        predicted = measured.durations(a + beta * measured.size, transfer.contention)
        transfer_quality = FitQuality.between(measured.duration, predicted)
    else:  # no transfer has a size, so none is predicted
        transfer_quality = FitQuality(r2=float("nan"), rms_ms=float("nan"), samples=0)
    fitted = Fit(
        parameter_names=names,
        parameter_bytes=tuple(None if np.isnan(b) else int(b) for b in traces[0].parameter_bytes),
        order=tuple(int(i) for i in seen.readiness_order),
        backward_ms=tuple(float(x) for x in backward.per_parameter_ms),
        overhead_ms=a,
        bandwidth_gbps=1.0 / beta / 1e6,
        contention=backward.contention,
        transfer_contention=transfer.contention,
        rank_contention=backward.rank_contention,
        enqueue_ms=seen.enqueue_ms,
        start_skew_ms=seen.start_skew_ms,
        forward_ms=seen.forward_ms,
        finalize_ms=finalize_ms,
        after_return_ms=seen.after_return_ms,
        world_size=world,
        backward_quality=backward.quality,
        transfer_quality=transfer_quality,
        separable=transfer.separable,
        contention_identified=backward.identified,
        sources=tuple(t.name for t in traces),
        iterations_used=seen.iterations_used,
        iterations_dropped=seen.iterations_dropped,
        backward_source="overlap" if alone is None else "alone",
        transfer_source="overlap" if line is None else "isolated",
        size_range=transfer.size_range,
        transfer_contention_identified=bool(transfer.identified),
        contention_terms=with_contention,
        isolated_quality=transfer.isolated_quality,
        unidentified=_unidentified(
            backward, transfer, alone is not None, line is not None, with_contention
        ),
        rank_backward_scale=() if alone is None else alone.rank_scale,
        finalize_ms_per_mib=finalize_per_mib,
        copy_back_ms_per_mib=0.0 if alone is None else alone.copy_back_ms_per_mib,
    )
    if line is not None and with_contention:
        fitted = replace(fitted, concurrent_collectives=collectives_in_flight(traces))
        if backward.identified:
            fitted = match_contention(fitted, traces, max_other_load)
            predicted = measured.durations(a + beta * measured.size, fitted.transfer_contention)
            fitted = replace(
                fitted, transfer_quality=FitQuality.between(measured.duration, predicted)
            )
    return fitted


def fit(
    traces: list[Trace],
    max_other_load: float | None = 0.25,
    *,
    contention: bool = True,
    resamples: int = 0,
    seed: int = 0,
) -> Fit:
    """Fit the model to ``traces`` (same parameters and world size), using quiet iterations.

    Iterations where other processes kept more than ``max_other_load`` of the
    machine's cores busy are left out (``None`` keeps all); a trace with none
    left is an error. ``contention=False`` fits the plain baseline (no
    contention terms). ``resamples > 0`` adds a bootstrap interval over
    iterations to every term (``Fit.uncertainty``), reproducible by ``seed``.
    """
    point = _fit_once(traces, max_other_load, contention)
    if resamples <= 0:
        return point
    intervals = bootstrap_intervals(
        traces, lambda ts: _fit_once(ts, max_other_load, contention), resamples, seed
    )
    return replace(point, uncertainty=intervals, resamples=resamples)
