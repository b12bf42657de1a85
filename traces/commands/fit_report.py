"""The fit and a prediction as text, the way ``overlap-lab fit`` and ``predict`` print them."""

from __future__ import annotations

from traces import QUANTITIES, Fit, Trace
from traces.schema import MIB

LABELS = {
    "backward_return_ms": "backward return",
    "communication_end_ms": "communication end",
    "exposed_tail_ms": "exposed tail",
    "step_ms": "step",
}


def describe_fit(f: Fit, max_load: float | None) -> str:
    """The fitted numbers and their quality, as text."""
    n = len(f.backward_ms)
    total = sum(f.backward_ms)
    dropped = (
        f", {f.iterations_dropped} left out (other processes used more than "
        f"{max_load:.0%} of the cores)"
        if f.iterations_dropped
        else ""
    )
    u = f.uncertainty

    def iv(name: str, fmt: str = "{:.2f}") -> str:
        if name not in u:
            return ""
        low, high = u[name]
        return f" [{fmt.format(low)}, {fmt.format(high)}]"

    by_rank = " / ".join(
        f"{c:.2f}{iv(f'rank_contention[{k}]')}" for k, c in enumerate(f.rank_contention)
    )
    backward_from = (
        "backward alone, communication held back"
        if f.backward_source == "alone"
        else "intervals free of transfers"
    )
    transfers_from = (
        "all-reduces timed alone"
        if f.transfer_source == "isolated"
        else "the traces' buckets (no all-reduces timed alone)"
    )
    sized = f.sizes_known
    lines = [
        f"Fitted on {', '.join(f.sources)}: {f.iterations_used} iterations{dropped}",
        f"  backward from {backward_from}; overhead and bandwidth from {transfers_from}, "
        + (
            f"for buckets of {f.size_range[0] / MIB:.3g} to {f.size_range[1] / MIB:.3g} MiB"
            if sized
            else "none of them of known size"
        ),
    ]
    if u:
        lines.append(f"  [low, high]: 90 % bootstrap interval over {f.resamples} resamples")
    lines += [
        "",
        f"  backward per layer       {total / n:7.2f} ms on average ({n} parameters, "
        f"{total:.1f} ms at full speed{iv('backward_total_ms', '{:.1f}')})",
        f"  per-transfer overhead    {f.overhead_ms:7.2f} ms{iv('overhead_ms')}"
        if sized
        else "  per-transfer overhead    not fitted: bucket sizes unknown",
        f"  bandwidth                {f.bandwidth_gbps:7.3f} GB/s of bucket data"
        f"{iv('bandwidth_gbps', '{:.3f}')}"
        if sized
        else "  bandwidth                not fitted: bucket sizes unknown",
        f"  contention               {f.contention:7.2f}{iv('contention')}    backward runs at "
        f"1/{1 + f.contention:.2f} of its speed while a transfer is in flight",
        f"  contention by rank       {by_rank}"
        "    each iteration's most slowed rank first (the step waits for it)",
        f"  transfer contention      {f.transfer_contention:7.2f}{iv('transfer_contention')}"
        f"    a transfer runs at 1/{1 + f.transfer_contention:.2f} of its speed while any "
        "rank computes",
        f"  collectives in flight    {f.concurrent_collectives:7d}"
        + (
            "    each transfer's overhead hides behind the previous bucket's bytes"
            if f.concurrent_collectives > 1
            else "    one at a time"
        ),
        f"  enqueue                  {f.enqueue_ms:7.2f} ms{iv('enqueue_ms')} from readiness "
        "to launch",
        f"  start skew               {f.start_skew_ms:7.2f} ms (other ranks start backward "
        "earlier than the last)",
        f"  forward {f.forward_ms:.2f} ms, finalize {f.finalize_ms:.2f} ms{iv('finalize_ms')}"
        + (
            f" + {f.finalize_ms_per_mib:.3f}{iv('finalize_ms_per_mib', '{:.3f}')} ms per MiB "
            "of the last bucket"
            if f.finalize_ms_per_mib
            else ""
        )
        + f", optimizer and after {f.after_return_ms:.2f} ms",
        (
            f"  copy-back                {f.copy_back_ms_per_mib:7.3f} ms per MiB"
            f"{iv('copy_back_ms_per_mib', '{:.3f}')}    after backward, the reduced buckets "
            "are copied back into the gradients, slowing the transfers still running"
            if f.copy_back_ms_per_mib > 0
            else "  copy-back                not measured (needs backward timed alone)"
        ),
        "",
        "Fit quality (predicted from the fit and the measured busy times)",
        f"  gradient intervals   R² {f.backward_quality.r2:5.2f}, RMS "
        f"{f.backward_quality.rms_ms:.2f} ms over {f.backward_quality.samples}",
        f"  transfer durations   R² {f.transfer_quality.r2:5.2f}, RMS "
        f"{f.transfer_quality.rms_ms:.2f} ms over {f.transfer_quality.samples}"
        if f.transfer_quality.samples
        else "  transfer durations   not predicted: no transfer of known size",
    ]
    if f.isolated_quality is not None:
        q = f.isolated_quality
        lines.append(
            f"  all-reduces alone    R² {q.r2:5.2f}, RMS {q.rms_ms:.2f} ms over {q.samples} "
            "sizes (medians)"
        )
    if f.transfer_source != "isolated" and not f.separable:
        lines.append(
            "  every bucket had the same size: overhead and bandwidth can't be told apart "
            "(all time is put on bandwidth); fit on two layouts"
        )
    if f.unidentified:
        lines += ["", "Not identified by these traces:"]
        lines += [f"  - {text}" for text in f.unidentified]
    lines += ["", "Backward per parameter at full speed (ms), in readiness order:"]
    lines.append(
        "  " + ", ".join(f"{f.parameter_names[p]} {f.backward_ms[p]:.2f}" for p in f.order)
    )
    return "\n".join(lines)


def describe_comparison(fitted: Fit, target: Trace, result: dict) -> str:
    """A prediction of ``target`` (``traces.compare``'s ``result``) beside what it measured."""
    lines = [
        f"Predicting {target.name} ({target.layout}) from a fit on {', '.join(fitted.sources)}"
    ]
    if result["refusal"] is not None:
        lines.append(f"  (extrapolated: the fit cannot constrain it: {result['refusal']})")
    lines += [
        "",
        f"  {'':20} {'predicted':>10} {'measured median':>16}   {'spread (IQR)':<22} {'error':>8}",
    ]
    for name in QUANTITIES:
        q = result["quantities"][name]
        s = q["spread"]
        spread = f"{s['q25']:.1f}–{s['q75']:.1f} (n={s['iterations']})"
        lines.append(
            f"  {LABELS[name]:20} {q['predicted']:7.1f} ms {q['measured']:13.1f} ms   "
            f"{spread:<22} {q['error_pct']:+7.1f} %"
        )
    return "\n".join(lines)
