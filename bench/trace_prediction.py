"""The validation protocol: several workloads, every fit-two-predict-one case, and a baseline.

Run from the repository root with the ``trace`` extra installed, on a quiet
machine (under ``flock /tmp/overlap-bench.lock`` where others measure too)::

    .venv/bin/python -m bench.trace_prediction [--iterations 30] [--keep DIR] [--wait-quiet 600]
    .venv/bin/python -m bench.trace_prediction --traces DIR   # re-analyse kept traces

For each workload of ``bench.trace_protocol.WORKLOADS`` (layer widths 512,
1024 and 2048 with one thread per rank, 1024 with two, and a model whose
layers differ in size) it records the four bucket layouts in one run, their
iterations alternating, with backward alone and all-reduces alone in every
round (``overlap-lab record``). Then for every case (each pair of layouts
fitted, each other layout predicted) it fits the model
(``traces/fit.py``, with 90 % bootstrap intervals of its terms)
and the plain baseline (the same fit without contention: FIFO alpha-beta),
predicts the target's median with each and prints both beside the
measurement, marking the targets of ``bench.trace_protocol`` and, where the
baseline's tail was closer, whether it was so beyond the measurement's noise
(``trace_protocol.farther_share``). Iterations
during which other processes kept more than ``--max-other-load`` of the cores
busy are left out of fits and medians. Everything goes to
``bench/trace_results.json`` (not committed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.trace_protocol import (
    NOISE_SHARE,
    RETURN_TARGET_PCT,
    SHARE_TARGET,
    TAIL_TARGET_MS,
    TAIL_TARGET_PCT,
    WORKLOADS,
    Workload,
    at_least_as_close,
    cases,
    farther_share,
    median_interval,
    return_ok,
    tail_ok,
    tally,
)
from traces import PredictionRefused, TraceError, compare, fit, load_trace
from traces.measure import measure, quiet_iterations
from traces.recorder import machine
from traces.recorder.demo import record_demo

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "trace_results.json"
RESAMPLES = 50


def machine_load(seconds: float = 2.0) -> float | None:
    """Share of the cores busy (every process) over a short window."""
    before = machine.machine_busy_ticks()
    time.sleep(seconds)
    after = machine.machine_busy_ticks()
    if before is None or after is None:
        return None
    return (after - before) / machine.clock_ticks_per_s() / (seconds * (os.cpu_count() or 1))


def wait_for_quiet(limit_s: float, below: float) -> float:
    """Wait until the machine's load over 3 s is under ``below``, at most ``limit_s``."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        load = machine_load(3.0)
        if load is None or load < below:
            break
    return time.monotonic() - start


def slug(name: str) -> str:
    """A folder name for a workload or layout."""
    return "".join(c if c.isalnum() else "-" for c in name).strip("-")


def record(w: Workload, folder: Path, iterations: int, warmup: int) -> None:
    """Record ``w``'s layouts in one run into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    record_demo(
        [folder / f"{slug(n)}.json" for n in w.caps_mb],
        bucket_cap_mb=list(w.caps_mb.values()),
        iterations=iterations,
        warmup=warmup,
        threads=w.threads,
        widths=list(w.widths),
    )


def _pair(q: dict) -> dict:
    return {
        "return": (q["backward_return_ms"]["predicted"], q["backward_return_ms"]["measured"]),
        "tail": (q["exposed_tail_ms"]["predicted"], q["exposed_tail_ms"]["measured"]),
    }


def run_cases(traces: dict, max_load: float | None, resamples: int = RESAMPLES) -> list[dict]:
    """Every case of one workload's ``traces`` (layout name -> Trace): model and baseline.

    Each pair is fitted once for its two targets; the first pair's fit also gets
    bootstrap intervals (``resamples``), reported for the workload.
    """
    rows = []
    fits: dict[tuple[str, str], tuple] = {}
    for pair, target in cases(list(traces)):
        fitted = [traces[n] for n in pair]
        row: dict = {"fitted_on": list(pair), "target": target, "refused": None}
        try:
            if pair not in fits:
                n = resamples if not fits else 0
                fits[pair] = (
                    fit(fitted, max_load, resamples=n),
                    fit(fitted, max_load, contention=False),
                )
            model, baseline = fits[pair]
        except TraceError as exc:
            row["refused"] = f"cannot fit: {exc}"
            rows.append(row)
            continue
        row["fit"] = {
            "overhead_ms": model.overhead_ms,
            "bandwidth_gbps": model.bandwidth_gbps,
            "contention": model.contention,
            "rank_contention": model.rank_contention,
            "transfer_contention": model.transfer_contention,
            "backward_total_ms": sum(model.backward_ms),
            "finalize_ms": model.finalize_ms,
            "finalize_ms_per_mib": model.finalize_ms_per_mib,
            "copy_back_ms_per_mib": model.copy_back_ms_per_mib,
            "uncertainty": model.uncertainty,
            "unidentified": list(model.unidentified),
        }
        try:
            q = compare(model, traces[target], max_load)["quantities"]
        except PredictionRefused as exc:
            row["refused"] = str(exc)
            q = compare(model, traces[target], max_load, extrapolate=True)["quantities"]
            row["model_anyway"] = _pair(q)
        else:
            row["model"] = _pair(q)
        qb = compare(baseline, traces[target], max_load, extrapolate=True)["quantities"]
        row["baseline"] = _pair(qb)
        m = measure(traces[target])
        keep = quiet_iterations(traces[target], max_load)
        row["farther_share"] = farther_share(
            q["exposed_tail_ms"]["predicted"],
            qb["exposed_tail_ms"]["predicted"],
            m.exposed_tail_ms[keep],
        )
        row["return_interval"] = median_interval(m.backward_return_ms[keep])
        row["step"] = (q["step_ms"]["predicted"], q["step_ms"]["measured"])
        rows.append(row)
    return rows


def _cell(p: float, m: float, ok: bool) -> str:
    err = 100 * (p - m) / m if m else float("inf")
    return f"{p:.1f} ({err:+.0f} %){'' if ok else ' ✗'}"


def table(rows: list[dict]) -> str:
    """The cases as a Markdown table (✗ marks a miss of the target)."""
    lines = [
        "| fitted on | target | measured return [90 % interval of its median] / tail (ms) | "
        "model: return | model: tail | "
        "baseline: return | baseline: tail |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        head = f"| {' + '.join(r['fitted_on'])} | {r['target']} |"
        if r["refused"] and "baseline" not in r:
            lines.append(f"{head} — | refused: {r['refused']} | | | |")
            continue
        model = r.get("model") or r["model_anyway"]
        (pr, mr), (pt, mt) = model["return"], model["tail"]
        (br, _), (bt, _) = r["baseline"]["return"], r["baseline"]["tail"]
        closer = at_least_as_close(pt, bt, mt)
        beyond = r.get("farther_share", 0.0) >= NOISE_SHARE
        farther = "" if closer else f" (farther than baseline{', beyond noise' if beyond else ''})"
        refused = " (refused)" if r["refused"] else ""
        low, high = r.get("return_interval", (mr, mr))
        lines.append(
            f"{head} {mr:.1f} [{low:.1f}, {high:.1f}] / {mt:.1f} | "
            f"{_cell(pr, mr, return_ok(pr, mr))}{refused} | "
            f"{_cell(pt, mt, tail_ok(pt, mt))}{farther} | "
            f"{_cell(br, mr, return_ok(br, mr))} | {_cell(bt, mt, tail_ok(bt, mt))} |"
        )
    return "\n".join(lines)


def terms_line(rows: list[dict]) -> str:
    """The fitted terms of the first case, with their bootstrap intervals."""
    for r in rows:
        if "fit" not in r:
            continue
        f, u = r["fit"], r["fit"]["uncertainty"]

        def iv(name: str, value: float, fmt: str = "{:.2f}", u: dict = u) -> str:
            if name not in u:
                return fmt.format(value)
            lo, hi = u[name]
            return f"{fmt.format(value)} [{fmt.format(lo)}, {fmt.format(hi)}]"

        ranks = " / ".join(
            iv(f"rank_contention[{k}]", c) for k, c in enumerate(f["rank_contention"])
        )
        return (
            f"fit on {' + '.join(r['fitted_on'])} (90 % bootstrap intervals): backward "
            f"{iv('backward_total_ms', f['backward_total_ms'], '{:.1f}')} ms, overhead "
            f"{iv('overhead_ms', f['overhead_ms'])} ms, bandwidth "
            f"{iv('bandwidth_gbps', f['bandwidth_gbps'], '{:.3f}')} GB/s, contention {ranks} "
            f"by rank, transfer contention {iv('transfer_contention', f['transfer_contention'])}, "
            f"copy-back {iv('copy_back_ms_per_mib', f['copy_back_ms_per_mib'], '{:.3f}')} ms "
            "per MiB"
        )
    return "no fit"


def analyse(folders: dict[str, Path], max_load: float | None, resamples: int) -> dict:
    """Run every workload's cases from its folder of traces; print and return the results."""
    out: dict = {"max_other_load": max_load, "workloads": {}}
    every = []
    for w in WORKLOADS:
        folder = folders.get(w.name)
        if folder is None:
            continue
        traces = {n: load_trace(folder / f"{slug(n)}.json") for n in w.caps_mb}
        first = next(iter(traces.values()))
        load = first.other_load
        kept = int(((load <= (max_load if max_load is not None else 1e9)) | (load != load)).sum())
        rows = run_cases(traces, max_load, resamples)
        every += rows
        t = tally(rows)
        print(f"\n### {w.name}\n")
        print(
            f"layouts: {', '.join(f'{n} ({traces[n].layout})' for n in traces)}; "
            f"{kept}/{first.n_iterations} quiet iterations"
        )
        print(terms_line(rows) + "\n")
        print(table(rows))
        print(
            f"\nbackward return within {RETURN_TARGET_PCT:g} %: model {t.return_hits}/{t.cases} "
            f"(misses inside the measured median's interval: {t.return_misses_in_noise}), "
            f"baseline {t.baseline_return_hits}/{t.cases}; exposed tail within "
            f"max({TAIL_TARGET_PCT:g} %, {TAIL_TARGET_MS:g} ms): model {t.tail_hits}/{t.cases}, "
            f"baseline {t.baseline_tail_hits}/{t.cases}; model at least as close as the "
            f"baseline on the tail: {t.closer_than_baseline}/{t.cases} (farther beyond the "
            f"measurement's noise: {t.farther_beyond_noise}); refused: {t.refused}"
        )
        out["workloads"][w.name] = {"folder": str(folder), "rows": rows, "tally": t.__dict__}
    t = tally(every)
    print(
        f"\n## all workloads: {t.cases} cases\n\nbackward return within {RETURN_TARGET_PCT:g} %: "
        f"{t.return_hits}/{t.cases} (target {SHARE_TARGET:.0%}; misses inside the measured "
        f"median's interval: {t.return_misses_in_noise}); exposed tail within "
        f"max({TAIL_TARGET_PCT:g} %, {TAIL_TARGET_MS:g} ms): {t.tail_hits}/{t.cases}; "
        f"model at least as close as the baseline on the tail: {t.closer_than_baseline}/"
        f"{t.cases} (target: all; farther beyond the measurement's noise: "
        f"{t.farther_beyond_noise}); refused {t.refused}. Targets met: {'yes' if t.met else 'no'}"
    )
    out["tally"] = t.__dict__
    return out


def main(argv: list[str] | None = None) -> int:
    """Record (or read) the workloads, run every case and write ``RESULTS``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--max-other-load", type=float, default=0.1)
    parser.add_argument("--resamples", type=int, default=RESAMPLES, help="bootstrap resamples")
    parser.add_argument("--keep", type=Path, help="folder to keep the recorded traces in")
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before recording each workload, wait up to this long for the machine to be "
        "quiet (under --quiet-below of the cores busy over 3 s)",
    )
    parser.add_argument("--quiet-below", type=float, default=0.15, metavar="SHARE")
    parser.add_argument(
        "--only", nargs="+", metavar="WORKLOAD", help="workload names (default: all)"
    )
    parser.add_argument(
        "--traces", type=Path, help="use the traces already in this folder instead of recording"
    )
    args = parser.parse_args(argv)
    chosen = [w for w in WORKLOADS if not args.only or w.name in args.only]
    root = args.traces or args.keep or Path(tempfile.mkdtemp(prefix="overlap-lab-bench-"))
    folders = {w.name: root / slug(w.name) for w in chosen}
    if not args.traces:
        for w in chosen:
            if args.wait_quiet > 0:
                waited = wait_for_quiet(args.wait_quiet, args.quiet_below)
                print(f"waited {waited:.0f} s for a quiet machine", flush=True)
            load = machine_load()
            print(
                f"recording {w.name}: {args.iterations} iterations of each layout, alternating "
                f"(machine busy before: {load:.0%})",
                flush=True,
            )
            record(w, folders[w.name], args.iterations, args.warmup)
    folders = {n: f for n, f in folders.items() if f.exists()}
    max_load = None if args.max_other_load < 0 else args.max_other_load
    results = analyse(folders, max_load, args.resamples)
    RESULTS.write_text(json.dumps(results, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
