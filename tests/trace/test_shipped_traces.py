"""The shipped example traces load, validate and have the layouts they are named for."""

from __future__ import annotations

import pytest

from traces import fit, load_trace, predict_layout, to_chrome_trace
from traces.shipped import DESCRIPTIONS, FOLDER, shipped

LAYOUTS = {
    "one-layer-per-bucket.json": [1] * 12,
    "three-layers-per-bucket.json": [3] * 4,
    "one-bucket.json": [12],
    "mixed-5-5-2.json": [5, 5, 2],
}


def test_every_described_trace_is_shipped() -> None:
    assert list(shipped()) == list(DESCRIPTIONS) == list(LAYOUTS)
    assert (FOLDER / "README.md").is_file()


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_shipped_trace_is_valid_small_and_as_named(name: str) -> None:
    path = shipped()[name]
    assert path.stat().st_size < 100_000
    t = load_trace(path)
    assert [len(m) for m in t.bucket_parameters] == LAYOUTS[name]
    assert t.n_ranks == 2 and t.n_iterations == 10
    # Backward and all-reduces timed alone: the 10 rounds that ran beside the kept iterations.
    assert t.alone_grad_ready.shape[0] == 10
    assert [ms.size for ms in t.isolated_ms] == [10] * 7
    assert t.metadata["backend"] == "gloo"
    assert "overlap-lab record --bucket-cap-mb 4 12 48 20" in t.metadata["note"]
    assert to_chrome_trace(t)["traceEvents"]


def test_the_shipped_traces_fit_and_predict() -> None:
    traces = {name: load_trace(p) for name, p in shipped().items()}
    f = fit([traces["one-layer-per-bucket.json"], traces["one-bucket.json"]], None)
    assert f.separable and f.contention_identified
    p = predict_layout(f, traces["three-layers-per-bucket.json"].bucket_parameters)
    assert p.quantities["backward_return_ms"] > 0
