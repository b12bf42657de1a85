"""A profile without bucket sizes (no ``In msg nelems``, ``record_shapes`` off) still makes a trace.

Hand-worked from ``kineto_builder``'s table (us, B = a step's base; ms from the
first step's forward start B+100):

- buckets run [5100, 6000], [7100, 8500], [9100, 10000] -> 5.0..5.9, 7.0..8.4,
  9.0..9.9; each is ready when the last backward kernel before it ended: 5000,
  7000, 9000 -> 4.9, 6.9, 8.9; backward starts when forward ends, 3000 -> 2.9;
- so each pseudo-parameter's backward is 2.0 ms (2.9 -> 4.9 -> 6.9 -> 8.9);
- backward end 8.9, communication end 9.9: exposed tail 1.0 in every step;
- no size, so no bandwidth, overhead or transfer contention, and no what-if.
"""

from __future__ import annotations

import json
import math

import pytest
from kineto_builder import STEPS, ddp_run, write

from app.cli import main
from traces import load_trace, measure
from traces.chrome import to_chrome_trace
from traces.fit import fit
from traces.identify import PredictionRefused
from traces.predict import buckets_for_cap, compare, predict_layout

SIZES = r"bucket sizes unknown.*record with record_shapes=True or a newer Kineto"


def _run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return exit_info.value.code


@pytest.fixture
def imported(tmp_path, capsys):
    """``overlap-lab import`` of two ranks' profiles without sizes: the trace's path and output."""
    paths = write(tmp_path, [ddp_run(r, shapes=False) for r in (0, 1)])
    out = tmp_path / "run.json"
    code = _run(["import", *map(str, paths), "--out", str(out)])
    return out, code, capsys.readouterr()


def test_import_makes_a_trace_whose_buckets_and_times_hold(imported) -> None:
    out, code, said = imported
    assert code == 0
    assert f"{STEPS} iterations, ranks 0, 1, 3 buckets (size unknown), device times" in said.out
    trace = load_trace(out)
    assert not trace.sizes_known and trace.n_buckets == 3
    assert all(math.isnan(b) for b in trace.bucket_bytes)
    assert trace.start[0, 0].tolist() == [5.0, 7.0, 9.0]
    assert trace.complete[0, 0].tolist() == [5.9, 8.4, 9.9]
    assert trace.grad_ready[0, 0].tolist() == [4.9, 6.9, 8.9]
    assert measure(trace).exposed_tail_ms == pytest.approx([1.0] * STEPS)


def test_summary_says_size_unknown(imported, capsys) -> None:
    out, _, _ = imported
    assert _run(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "bucket 0: size unknown, all-reduce 5.000 to 5.900" in text
    assert "exposed tail 1.000" in text and "nan" not in text.lower()
    assert "note: bucket sizes unknown" in text


def test_the_fit_leaves_out_bandwidth_and_names_why(imported) -> None:
    out, _, _ = imported
    f = fit([load_trace(out)], max_other_load=None)
    assert f.backward_ms == pytest.approx((2.0, 2.0, 2.0))
    assert not f.sizes_known and math.isnan(f.bandwidth_gbps) and math.isnan(f.overhead_ms)
    said = " | ".join(f.unidentified)
    assert "overhead and bandwidth: bucket sizes unknown" in said
    assert "record with record_shapes=True or a newer Kineto" in said
    assert "transfer contention: no fitted transfer has a known size" in said
    assert f.transfer_quality.samples == 0
    assert json.loads(json.dumps(f.to_dict(), allow_nan=False))["bandwidth_gbps"] is None


def test_what_ifs_that_need_sizes_are_refused_with_the_reason(imported) -> None:
    out, _, _ = imported
    trace = load_trace(out)
    f = fit([trace], max_other_load=None)
    with pytest.raises(PredictionRefused, match=SIZES):
        compare(f, trace, max_other_load=None, extrapolate=True)
    with pytest.raises(PredictionRefused, match=SIZES):
        predict_layout(f, trace.bucket_parameters)
    with pytest.raises(PredictionRefused, match="gradients of unknown size"):
        buckets_for_cap(f, 25.0)


def test_the_cli_fit_and_predict_say_so(imported, capsys) -> None:
    out, _, _ = imported
    assert _run(["fit", str(out), "--resamples", "3"]) == 0
    text = capsys.readouterr().out
    assert "bandwidth                not fitted: bucket sizes unknown" in text
    assert "transfer durations   not predicted: no transfer of known size" in text
    assert "- overhead and bandwidth: bucket sizes unknown" in text
    assert "nan" not in text.lower()
    assert _run(["predict", "--fit", str(out), "--target", str(out), "--extrapolate"]) == 2
    err = capsys.readouterr().err
    assert "the fit has no per-transfer overhead or bandwidth" in err
    assert "Traceback" not in err


def test_the_chrome_export_says_size_unknown(imported) -> None:
    out, _, _ = imported
    events = to_chrome_trace(load_trace(out))["traceEvents"]
    # Each rank's step: three gradients (the pseudo-parameters) and three buckets.
    sizes = [e["args"]["bytes"] for e in events if "bytes" in e.get("args", {})]
    assert sizes == ["size unknown"] * (6 * 2 * STEPS)
    json.dumps(events, allow_nan=False)  # no NaN anywhere


def test_with_some_sizes_known_the_fit_reads_bandwidth_from_those_alone(tmp_path) -> None:
    documents = [ddp_run(r) for r in (0, 1)]
    for document in documents:  # the BFloat16 bucket (bucket 2) loses its shapes
        for event in document["traceEvents"]:
            if event.get("args", {}).get("Input type") == ["c10::BFloat16"]:
                del event["args"]["Input Dims"]
    paths = write(tmp_path, documents)
    out = tmp_path / "run.json"
    assert _run(["import", *map(str, paths), "--out", str(out)]) == 0
    trace = load_trace(out)
    assert trace.bucket_bytes[:2].tolist() == [1 << 20, 2 << 20]
    assert math.isnan(trace.bucket_bytes[2])
    f = fit([trace], max_other_load=None)
    # Buckets 0 and 1 of each of the 3 steps are fitted; bucket 2's 3 transfers are not.
    assert f.size_range == (1 << 20, 2 << 20)
    assert f.transfer_quality.samples == 2 * STEPS
    assert math.isfinite(f.bandwidth_gbps) and f.bandwidth_gbps > 0
    assert f"{STEPS} transfers left out, bucket sizes unknown" in " | ".join(f.unidentified)
    with pytest.raises(PredictionRefused, match="its transfers have no size to time"):
        compare(f, trace, max_other_load=None, extrapolate=True)
