"""The benchmark's synthetic profile is a profile the import reads as the generator meant it."""

from __future__ import annotations

from bench.profile_import import write_profile
from traces.profiler import read_profile


def test_the_synthetic_profile_imports_with_its_buckets(tmp_path) -> None:
    path = tmp_path / "rank0.json"
    events = write_profile(path, 1_000_000)
    profile = read_profile(path)
    assert profile.backend == "nccl" and profile.world_size == 8 and profile.device_times
    assert profile.metadata["gpus"] == ["NVIDIA H100"]
    # Per step: 2 x 2500 CPU ops, each with a launch and a kernel, and 5 buckets (each a
    # launch op and a kernel), the step, forward and optimizer ranges: 15013 events.
    assert events % 15013 == 0 and len(profile.steps) == events // 15013
    for step in profile.steps:
        assert [b.bytes for b in step.buckets] == [6_553_600 * 4] * 5
        assert step.others == ()
        assert step.exposed_tail_us > 0
