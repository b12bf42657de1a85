"""``overlap-lab record``, ``fit``, ``predict``, ``trim``, ``chrome``: traces on the command line.

Only ``record`` needs torch (in the worker processes it starts, from the
``trace`` extra); the others read trace files with ``traces``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from traces import (
    QUANTITIES,
    Fit,
    TraceError,
    compare,
    fit,
    keep_quietest,
    load_trace,
    to_chrome_trace,
    write_trace,
)

from .profiles import COMMANDS as PROFILE_COMMANDS
from .profiles import add_profile_commands, run_profile_command

DEFAULT_MAX_LOAD = 0.25
MIB = 1024 * 1024

LABELS = {
    "backward_return_ms": "backward return",
    "communication_end_ms": "communication end",
    "exposed_tail_ms": "exposed tail",
    "step_ms": "step",
}


class CommandError(Exception):
    """A problem the user can fix; printed without a traceback."""


def add_trace_commands(sub: argparse._SubParsersAction) -> None:
    """Add the trace subcommands to the ``overlap-lab`` parser."""
    record = sub.add_parser(
        "record",
        help="record a trace of the 12-layer demo model on 2 local gloo ranks (needs torch)",
        description="Run 12 x Linear(1024, 1024, bias=False) (or the --widths given) with "
        "DistributedDataParallel on 2 gloo ranks on 127.0.0.1 and write a trace (each layer's "
        "gradient is 4 MiB); each round also runs backward alone and times all-reduces alone.",
    )
    record.add_argument(
        "--bucket-cap-mb",
        type=_positive_float,
        nargs="+",
        required=True,
        metavar="X",
        help="DDP's bucket_cap_mb, in MiB (4: one layer per bucket, 12: three, 48: all "
        "twelve); several caps (with as many --out files) are recorded in one run, their "
        "iterations alternating, so that they share the machine's conditions",
    )
    record.add_argument(
        "--iterations", type=_positive_int, default=20, metavar="N", help="iterations to keep"
    )
    record.add_argument(
        "--warmup",
        type=_positive_int,
        default=5,
        metavar="W",
        help="iterations run first and dropped (at least 1: DDP rebuilds its buckets after "
        "iteration 0)",
    )
    record.add_argument(
        "--threads",
        type=_positive_int,
        default=1,
        help="torch threads per rank (default 1); when the ranks' threads outnumber the "
        "cores, they sleep while they wait (OMP_WAIT_POLICY=PASSIVE) unless you set a policy",
    )
    record.add_argument(
        "--widths",
        type=_positive_int,
        nargs="+",
        metavar="W",
        help="feature sizes through the model, L + 1 numbers for L bias-free linear layers "
        "(default: 13 x 1024, the 12-layer demo); e.g. 1024 2048 512 1024 for layers of "
        "different sizes",
    )
    record.add_argument(
        "--isolated-sizes",
        type=int,
        default=7,
        metavar="N",
        help="each round, also run backward alone and time all-reduces alone at N sizes "
        "(from the smallest layer to the whole gradient), so that a fit can tell overhead and "
        "bandwidth from contention (default 7; 0 records DDP alone)",
    )
    record.add_argument(
        "--out", type=Path, nargs="+", required=True, help="trace file to write (one per cap)"
    )
    record.add_argument("--force", action="store_true", help="overwrite --out if it exists")

    fit_p = sub.add_parser(
        "fit",
        help="fit the schedule model to traces",
        description="Fit per-layer backward time, per-transfer overhead, bandwidth and "
        "contention to one or more traces and print them with the fit's quality.",
    )
    fit_p.add_argument("traces", nargs="+", type=Path, metavar="TRACE")
    _load_option(fit_p)
    fit_p.add_argument(
        "--resamples",
        type=int,
        default=50,
        metavar="N",
        help="bootstrap resamples over iterations for each term's 90 %% interval (default 50; "
        "0 skips them)",
    )
    fit_p.add_argument("--json", action="store_true", help="print the fit as JSON")

    predict = sub.add_parser(
        "predict",
        help="predict a trace's step from a fit on other traces",
        description="Fit the model on the --fit traces, predict the --target trace's bucket "
        "layout, and print the prediction beside the target's measured median.",
    )
    predict.add_argument("--fit", nargs="+", type=Path, required=True, metavar="TRACE")
    predict.add_argument("--target", type=Path, required=True, metavar="TRACE")
    _load_option(predict)
    predict.add_argument(
        "--extrapolate",
        action="store_true",
        help="predict even a layout the fit cannot constrain (the reason is printed with it)",
    )
    predict.add_argument("--json", action="store_true", help="print the comparison as JSON")

    trim = sub.add_parser(
        "trim",
        help="keep a trace's quietest iterations (least load from other processes)",
        description="Keep the K iterations with the least load from other processes. Traces "
        "recorded together (several caps in one run) keep the same iterations.",
    )
    trim.add_argument("traces", type=Path, nargs="+", metavar="TRACE")
    trim.add_argument("--quietest", type=_positive_int, required=True, metavar="K")
    trim.add_argument(
        "--out", type=Path, nargs="+", required=True, help="files to write, one per trace"
    )
    trim.add_argument("--force", action="store_true", help="overwrite --out if it exists")

    chrome = sub.add_parser(
        "chrome",
        help="export a trace to the Chrome trace event format (Perfetto, chrome://tracing)",
    )
    chrome.add_argument("trace", type=Path, metavar="TRACE")
    chrome.add_argument("--out", type=Path, required=True, help="file to write")
    chrome.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    add_profile_commands(sub)  # import, summary


def run_trace_command(args: argparse.Namespace) -> int:
    """Run one of the trace subcommands; return the exit code."""
    if args.command in PROFILE_COMMANDS:
        return run_profile_command(args)
    try:
        if args.command == "record":
            return _record(args)
        if args.command == "fit":
            return _fit(args)
        if args.command == "predict":
            return _predict(args)
        if args.command == "chrome":
            return _chrome(args)
        if args.command == "trim":
            return _trim(args)
    except (CommandError, TraceError) as exc:
        print(f"overlap-lab {args.command}: error: {exc}", file=sys.stderr)
        return 2
    raise ValueError(args.command)


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _load_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-other-load",
        type=float,
        default=DEFAULT_MAX_LOAD,
        metavar="SHARE",
        help="leave out iterations during which other processes kept more than this share of "
        f"the cores busy (default {DEFAULT_MAX_LOAD}; a negative value keeps every iteration)",
    )


def _max_load(args: argparse.Namespace) -> float | None:
    return None if args.max_other_load < 0 else args.max_other_load


def _check_out(path: Path, force: bool) -> None:
    if path.exists() and not force:
        raise CommandError(f"{path} exists; pass --force to overwrite it")


def _record(args: argparse.Namespace) -> int:
    from ..recorder.demo import record_demo

    caps, outs = args.bucket_cap_mb, args.out
    if len(caps) != len(outs):
        raise CommandError(f"{len(caps)} bucket caps need {len(caps)} --out files, not {len(outs)}")
    for out in outs:
        _check_out(out, args.force)
    # The ranks import torch in their own processes; this one only checks it is there.
    if importlib.util.find_spec("torch") is None:
        raise CommandError(
            "recording needs torch: pip install 'overlap-lab[trace]' (see the README)"
        )
    if args.widths is not None and len(args.widths) < 2:
        raise CommandError("--widths needs at least two numbers (a layer's input and output)")
    if args.isolated_sizes < 0:
        raise CommandError(f"--isolated-sizes must be 0 or more, got {args.isolated_sizes}")
    tty = sys.stderr.isatty()
    print(
        f"recording {args.iterations} iterations after {args.warmup} of warm-up, bucket cap "
        f"{', '.join(f'{c:g}' for c in caps)} MiB, 2 gloo ranks on 127.0.0.1",
        file=sys.stderr,
    )

    def progress(line: str) -> None:
        print(f"\r{line}" if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)

    try:
        traces = record_demo(
            outs,
            bucket_cap_mb=caps,
            iterations=args.iterations,
            warmup=args.warmup,
            threads=args.threads,
            widths=args.widths,
            isolated_sizes=args.isolated_sizes,
            progress=progress,
        )
    except RuntimeError as exc:
        raise CommandError(str(exc)) from None
    if tty:
        print(file=sys.stderr)
    for out, trace in zip(outs, traces, strict=True):
        buckets = trace["iterations"][0]["ranks"][0]["buckets"]
        layout = "+".join(str(len(b["parameters"])) for b in buckets)
        print(f"wrote {out}: {args.iterations} iterations, buckets of {layout} layers")
    return 0


def _load_all(paths: list[Path]):
    return [load_trace(p) for p in paths]


def _fit(args: argparse.Namespace) -> int:
    if args.resamples < 0:
        raise CommandError(f"--resamples must be 0 or more, got {args.resamples}")
    result = fit(_load_all(args.traces), _max_load(args), resamples=args.resamples)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(describe_fit(result, _max_load(args)))
    return 0


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
    lines = [
        f"Fitted on {', '.join(f.sources)}: {f.iterations_used} iterations{dropped}",
        f"  backward from {backward_from}; overhead and bandwidth from {transfers_from}, "
        f"for buckets of {f.size_range[0] / MIB:.3g} to {f.size_range[1] / MIB:.3g} MiB",
    ]
    if u:
        lines.append(f"  [low, high]: 90 % bootstrap interval over {f.resamples} resamples")
    lines += [
        "",
        f"  backward per layer       {total / n:7.2f} ms on average ({n} parameters, "
        f"{total:.1f} ms at full speed{iv('backward_total_ms', '{:.1f}')})",
        f"  per-transfer overhead    {f.overhead_ms:7.2f} ms{iv('overhead_ms')}",
        f"  bandwidth                {f.bandwidth_gbps:7.3f} GB/s of bucket data"
        f"{iv('bandwidth_gbps', '{:.3f}')}",
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
        f"{f.transfer_quality.rms_ms:.2f} ms over {f.transfer_quality.samples}",
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


def _predict(args: argparse.Namespace) -> int:
    fitted = fit(_load_all(args.fit), _max_load(args))
    target = load_trace(args.target)
    result = compare(fitted, target, _max_load(args), extrapolate=args.extrapolate)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"Predicting {target.name} ({target.layout}) from a fit on {', '.join(fitted.sources)}")
    if result["refusal"] is not None:
        print(f"  (extrapolated: the fit cannot constrain it: {result['refusal']})")
    print()
    print(
        f"  {'':20} {'predicted':>10} {'measured median':>16}   {'spread (IQR)':<22} {'error':>8}"
    )
    for name in QUANTITIES:
        q = result["quantities"][name]
        s = q["spread"]
        spread = f"{s['q25']:.1f}–{s['q75']:.1f} (n={s['iterations']})"
        print(
            f"  {LABELS[name]:20} {q['predicted']:7.1f} ms {q['measured']:13.1f} ms   "
            f"{spread:<22} {q['error_pct']:+7.1f} %"
        )
    return 0


def _trim(args: argparse.Namespace) -> int:
    if len(args.traces) != len(args.out):
        raise CommandError(f"{len(args.traces)} traces need as many --out files")
    for out in args.out:
        _check_out(out, args.force)
    documents = [load_trace(p).document for p in args.traces]
    for out, trimmed in zip(args.out, keep_quietest(documents, args.quietest), strict=True):
        write_trace(trimmed, out)
        print(f"wrote {out}: {trimmed['metadata']['note'].rsplit('. ', 1)[-1]}")
    return 0


def _chrome(args: argparse.Namespace) -> int:
    _check_out(args.out, args.force)
    document = to_chrome_trace(load_trace(args.trace))
    args.out.write_text(json.dumps(document, separators=(",", ":")) + "\n")
    print(f"wrote {args.out}: {len(document['traceEvents'])} events (open it in Perfetto)")
    return 0
