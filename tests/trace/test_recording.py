"""A real recording: 2 gloo ranks on 127.0.0.1 run the demo model under the recorder.

Needs torch (the ``trace`` extra); the README's test command installs it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from app.cli import main
from traces import load_trace, measure, to_chrome_trace

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> tuple[Path, Path]:
    # Two bucket caps in one run, their iterations alternating.
    folder = tmp_path_factory.mktemp("rec")
    outs = (folder / "cap12.json", folder / "cap48.json")
    argv = ["record", "--bucket-cap-mb", "12", "48", "--iterations", "3", "--warmup", "2"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", *map(str, outs)])
    assert exit_info.value.code == 0
    return outs


@pytest.fixture(scope="module")
def recorded(recordings) -> Path:
    return recordings[0]


def test_each_cap_gets_its_own_trace(recordings) -> None:
    one = load_trace(recordings[1])
    assert one.n_buckets == 1 and one.bucket_bytes.tolist() == [48 * MIB]
    assert one.metadata["bucket_cap_mb"] == 48.0
    assert one.metadata["note"].startswith("overlap-lab record --bucket-cap-mb 12 48 ")
    assert "iterations alternating; this trace is cap 48 MiB." in one.metadata["note"]
    two = load_trace(recordings[0])
    # Alternating: on each rank, cap 48's iteration i runs after cap 12's iteration i
    # (each trace counts from its own origin on the shared clock).
    shift = (one.metadata["origin_ns"] - two.metadata["origin_ns"]) / 1e6
    assert np.all(one.forward_start + shift >= two.optimizer_end)
    assert np.all(two.forward_start[1:] - shift >= one.optimizer_end[:-1])


def test_the_trace_is_valid_and_describes_the_run(recorded: Path) -> None:
    t = load_trace(recorded)  # validates against the schema
    assert t.n_ranks == 2 and t.n_iterations == 3
    assert t.iteration.tolist() == [2, 3, 4]
    meta = t.metadata
    assert meta["torch_version"] == torch.__version__
    assert meta["backend"] == "gloo" and meta["world_size"] == 2
    assert meta["bucket_cap_mb"] == 12.0 and meta["threads_per_rank"] == 1
    assert meta["cpu_count"] == os.cpu_count()
    # One thread per rank on 2 ranks: OpenMP's wait policy is left as this process has it.
    assert meta["omp_wait_policy"] == os.environ.get("OMP_WAIT_POLICY")
    assert np.all(np.isnan(t.other_load) | (t.other_load >= 0))


def test_buckets_are_cut_as_ddp_cuts_them(recorded: Path) -> None:
    t = load_trace(recorded)
    assert t.parameter_names == tuple(f"{i}.weight" for i in range(12))
    assert t.parameter_bytes.tolist() == [4 * MIB] * 12
    # A 12 MiB cap closes a bucket at three 4 MiB layers; the last layers go first.
    assert [m.tolist() for m in t.bucket_parameters] == [
        [11, 10, 9],
        [8, 7, 6],
        [5, 4, 3],
        [2, 1, 0],
    ]
    assert t.bucket_bytes.tolist() == [12 * MIB] * 4


def test_events_are_in_causal_order_on_one_clock(recorded: Path) -> None:
    t = load_trace(recorded)
    # Backward computes the last layer first.
    assert np.all(np.diff(t.grad_ready, axis=2) < 0)
    for b, members in enumerate(t.bucket_parameters):
        # A rank launches a bucket after its gradients are ready there...
        assert np.all(t.issue[:, :, b] >= t.grad_ready[:, :, members].max(axis=2))
        # ...and the all-reduce completes nowhere before every rank launched it:
        # only true if the ranks' clocks agree.
        assert np.all(t.complete[:, :, b] >= t.issue[:, :, b].max(axis=1)[:, None])
    assert np.all(np.diff(t.issue, axis=2) >= 0)  # launched in bucket order
    assert np.all(t.enqueued >= t.issue)
    # DDP's backward returns once every bucket is reduced.
    assert np.all(t.complete.max(axis=2) <= t.backward_return)
    assert np.all(t.optimizer_start >= t.backward_return)
    m = measure(t)
    assert np.all(m.exposed_tail_ms >= 0) and np.all(m.step_ms > m.backward_return_ms)


def test_the_real_trace_exports_to_chrome(recorded: Path) -> None:
    doc = to_chrome_trace(load_trace(recorded))
    buckets = [e for e in doc["traceEvents"] if e["name"].startswith("bucket ")]
    assert len(buckets) == 3 * 2 * 4


def test_the_run_also_times_all_reduces_and_backward_alone(recordings) -> None:
    one, three = load_trace(recordings[1]), load_trace(recordings[0])
    assert one.has_isolated and three.has_isolated
    # Both traces of the run carry the same block, measured once per round.
    assert one.document["isolated"] == three.document["isolated"]
    # Seven sizes evenly spaced in log size from one layer (4 MiB) to the whole gradient
    # (48 MiB): 4 MiB x 12 ** (k / 6), each a whole number of float32 values.
    expected = [round(4 * MIB * 12 ** (k / 6) / 4) * 4 for k in range(7)]
    assert one.isolated_bytes.tolist() == expected
    assert expected[0] == 4 * MIB and expected[-1] == 48 * MIB
    # One repetition of each size per kept round (3 iterations after 2 of warm-up).
    assert [ms.size for ms in one.isolated_ms] == [3] * 7
    assert all(np.all(ms > 0) for ms in one.isolated_ms)
    # Backward alone: every rank, every parameter, the last layer's gradient first, and
    # the call returns after the last gradient.
    assert one.alone_grad_ready.shape == (3, 2, 12)
    assert np.all(np.diff(one.alone_grad_ready, axis=2) < 0)
    assert np.all(one.alone_grad_ready.max(axis=2) <= one.alone_backward_ms)
    assert "backward alone (communication held back)" in one.metadata["note"]


def test_a_small_model_of_other_widths_without_isolated_timing(tmp_path) -> None:
    out = tmp_path / "small.json"
    argv = ["record", "--bucket-cap-mb", "1", "--iterations", "2", "--warmup", "1"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--widths", "256", "512", "128", "--isolated-sizes", "0", "--out", str(out)])
    assert exit_info.value.code == 0
    t = load_trace(out)
    # Linear(256, 512) and Linear(512, 128): 512 KiB and 256 KiB of float32 gradient.
    assert t.parameter_bytes.tolist() == [256 * 512 * 4, 512 * 128 * 4]
    assert not t.has_isolated and "isolated" not in t.document
    assert t.metadata["model"] == (
        "Linear(256, 512) -> Linear(512, 128) (bias=False), batch 64 per rank"
    )


def test_all_reduce_sizes_span_one_layer_to_the_whole_gradient() -> None:
    from traces.recorder.isolated import allreduce_sizes

    # 1 MiB to 8 MiB in 4 sizes: a ratio of 2 between neighbours, exactly.
    assert allreduce_sizes([MIB] * 8, 4) == [MIB, 2 * MIB, 4 * MIB, 8 * MIB]
    # Layers of 6 and 10 bytes (16 in all), 3 sizes: 6, 6 * sqrt(16 / 6) = 9.80 and 16
    # bytes, each rounded to whole float32 values (1.5 -> 2 by half-to-even, 2.45 -> 2, 4):
    # 8, 8 and 16 bytes, and a size timed twice is timed once.
    assert allreduce_sizes([6, 10], 3) == [8, 16]
    # One parameter: the whole gradient is the only size.
    assert allreduce_sizes([4 * MIB]) == [4 * MIB]
