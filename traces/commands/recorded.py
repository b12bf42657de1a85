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

from traces import TraceError, compare, fit, keep_quietest, load_trace, to_chrome_trace, write_trace

from .fit_report import describe_comparison, describe_fit
from .options import (
    CommandError,
    add_load_option,
    add_out_options,
    check_out,
    max_load,
    positive_float,
    positive_int,
)
from .profiles import COMMANDS as PROFILE_COMMANDS
from .profiles import add_profile_commands, run_profile_command


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
        type=positive_float,
        nargs="+",
        required=True,
        metavar="X",
        help="DDP's bucket_cap_mb, in MiB (4: one layer per bucket, 12: three, 48: all "
        "twelve); several caps (with as many --out files) are recorded in one run, their "
        "iterations alternating, so that they share the machine's conditions",
    )
    record.add_argument(
        "--iterations", type=positive_int, default=20, metavar="N", help="iterations to keep"
    )
    record.add_argument(
        "--warmup",
        type=positive_int,
        default=5,
        metavar="W",
        help="iterations run first and dropped (at least 1: DDP rebuilds its buckets after "
        "iteration 0)",
    )
    record.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        help="torch threads per rank (default 1); when the ranks' threads outnumber the "
        "cores, they sleep while they wait (OMP_WAIT_POLICY=PASSIVE) unless you set a policy",
    )
    record.add_argument(
        "--widths",
        type=positive_int,
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
    add_out_options(record, "trace file to write (one per cap)", many=True)

    fit_p = sub.add_parser(
        "fit",
        help="fit the schedule model to traces",
        description="Fit per-layer backward time, per-transfer overhead, bandwidth and "
        "contention to one or more traces and print them with the fit's quality.",
    )
    fit_p.add_argument("traces", nargs="+", type=Path, metavar="TRACE")
    add_load_option(fit_p)
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
    add_load_option(predict)
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
        "recorded together (several caps in one run) keep the same iterations. A trace's "
        "backward and all-reduces timed alone (its isolated block) keep the rounds of the kept "
        "iterations: the recorder runs them beside each iteration, round by round.",
    )
    trim.add_argument("traces", type=Path, nargs="+", metavar="TRACE")
    trim.add_argument("--quietest", type=positive_int, required=True, metavar="K")
    add_out_options(trim, "files to write, one per trace", many=True)

    chrome = sub.add_parser(
        "chrome",
        help="export a trace to the Chrome trace event format (Perfetto, chrome://tracing)",
    )
    chrome.add_argument("trace", type=Path, metavar="TRACE")
    add_out_options(chrome, "file to write")
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


def _record(args: argparse.Namespace) -> int:
    from ..recorder.demo import record_demo

    caps, outs = args.bucket_cap_mb, args.out
    if len(caps) != len(outs):
        raise CommandError(f"{len(caps)} bucket caps need {len(caps)} --out files, not {len(outs)}")
    for out in outs:
        check_out(out, args.force)
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
    result = fit(_load_all(args.traces), max_load(args), resamples=args.resamples)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(describe_fit(result, max_load(args)))
    return 0


def _predict(args: argparse.Namespace) -> int:
    fitted = fit(_load_all(args.fit), max_load(args))
    target = load_trace(args.target)
    result = compare(fitted, target, max_load(args), extrapolate=args.extrapolate)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(describe_comparison(fitted, target, result))
    return 0


def _trim(args: argparse.Namespace) -> int:
    if len(args.traces) != len(args.out):
        raise CommandError(f"{len(args.traces)} traces need as many --out files")
    for out in args.out:
        check_out(out, args.force)
    documents = [load_trace(p).document for p in args.traces]
    for out, trimmed in zip(args.out, keep_quietest(documents, args.quietest), strict=True):
        write_trace(trimmed, out)
        print(f"wrote {out}: {trimmed['metadata']['note'].rsplit('. ', 1)[-1]}")
    return 0


def _chrome(args: argparse.Namespace) -> int:
    check_out(args.out, args.force)
    document = to_chrome_trace(load_trace(args.trace))
    args.out.write_text(json.dumps(document, separators=(",", ":")) + "\n")
    print(f"wrote {args.out}: {len(document['traceEvents'])} events (open it in Perfetto)")
    return 0
