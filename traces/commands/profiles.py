"""``overlap-lab import`` and ``summary``: torch.profiler files to a trace, and a trace's numbers.

- ``import PROFILE... --out TRACE.json [--force]``: one torch.profiler trace per
  rank (``.json`` or ``.json.gz``, any subset of the ranks) becomes an
  overlap-lab trace (format version 2; ``traces.profiler_convert`` says
  how each field is made);
- ``summary FILE... [--json]``: per iteration and rank the buckets, backward end,
  communication end, exposed tail, step and overlap, then the medians, of a
  recorded or imported trace, or straight from profiler files.

Neither needs torch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from traces import TraceError, load_trace, write_trace
from traces.profiler import ProfileError, import_profiles
from traces.profiler_convert import to_trace_document
from traces.summary import summary, summary_text
from traces.upload import SNIFF_BYTES, file_kind

from .options import CommandError, add_out_options, check_out

COMMANDS = ("import", "summary")


def add_profile_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``import`` and ``summary`` to the ``overlap-lab`` parser."""
    imp = sub.add_parser(
        "import",
        help="turn torch.profiler traces (one file per rank) into an overlap-lab trace",
        description="Read one torch.profiler Chrome-trace file per rank (.json or .json.gz, "
        "as export_chrome_trace or tensorboard_trace_handler write them; any subset of the "
        "ranks) and write an overlap-lab trace of its ProfilerStep iterations: DDP's "
        "buckets, backward compute and the optimizer, in device times on GPUs.",
    )
    imp.add_argument("profiles", type=Path, nargs="+", metavar="PROFILE")
    add_out_options(imp, "file to write", metavar="TRACE")
    summ = sub.add_parser(
        "summary",
        help="per iteration and rank: buckets, backward end, exposed tail, step, overlap",
        description="Summarize a recorded or imported overlap-lab trace (or torch.profiler "
        "files, one per rank): per iteration and rank each bucket (index in launch order, "
        "MiB, all-reduce start and end), backward end, communication end, exposed tail, step "
        "and overlap, in ms from the rank's forward start; then the medians.",
    )
    summ.add_argument("files", type=Path, nargs="+", metavar="FILE")
    summ.add_argument("--json", action="store_true", help="print the summary as JSON")


def run_profile_command(args: argparse.Namespace) -> int:
    """Run ``import`` or ``summary``; return the exit code (2 with a message on bad input)."""
    try:
        if args.command == "import":
            return _import(args)
        if args.command == "summary":
            return _summary(args)
    except (CommandError, ProfileError, TraceError, ValueError) as exc:
        print(f"overlap-lab {args.command}: error: {exc}", file=sys.stderr)
        return 2
    raise ValueError(args.command)


def _import(args: argparse.Namespace) -> int:
    out: Path = args.out
    check_out(out, args.force)
    profile = import_profiles(args.profiles)
    document = to_trace_document(profile)
    staged = out.with_name(out.name + ".partial")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_trace(document, staged)
    staged.replace(out)
    buckets = document["parameters"]
    sizes = (
        "+".join(f"{b['bytes'] / 2**20:.3g}" for b in buckets) + " MiB"
        if all(b["bytes"] is not None for b in buckets)
        else "size unknown"
    )
    meta = document["metadata"]
    ranks = meta.get("ranks_in_run", range(meta["world_size"]))
    print(
        f"wrote {out}: {len(document['iterations'])} iterations, ranks "
        f"{', '.join(map(str, ranks))}, {len(buckets)} buckets "
        f"({sizes}), {meta['times']} times"
    )
    for note in profile.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def _is_trace(path: Path) -> bool:
    """Whether ``path`` holds an overlap-lab trace (not a profiler file), by its top-level keys."""
    try:
        with path.open("rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError as exc:
        raise ProfileError(f"{path.name}: cannot read ({exc.strerror})") from None
    return file_kind(head) == "trace"


def _summary(args: argparse.Namespace) -> int:
    files: list[Path] = args.files
    traces = [p for p in files if _is_trace(p)]
    if traces and len(files) > 1:
        raise ProfileError("give one overlap-lab trace, or profiler files (one per rank), not both")
    data = summary(load_trace(files[0]) if traces else import_profiles(files))
    print(json.dumps(data, indent=1) if args.json else summary_text(data))
    return 0
