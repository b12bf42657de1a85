"""Hardware presets: sources named, numbers as published, one hand-checked schedule."""

from __future__ import annotations

import pytest

from widgets.bucket_timeline.hardware import (
    HARDWARE_PRESETS,
    HARDWARE_SOURCES,
    ILLUSTRATIVE,
    source_of,
)
from widgets.bucket_timeline.model import PRESETS
from widgets.model.buckets import step_schedule


def test_every_hardware_preset_names_its_source() -> None:
    assert set(HARDWARE_PRESETS) == set(HARDWARE_SOURCES)
    for name, text in HARDWARE_SOURCES.items():
        assert name in PRESETS
        assert text.startswith(("Measured: nccl-tests issue", "Line rate, not a measurement"))
        assert "tuning.cc hwLat" in text
    assert source_of("Overlap works") == ILLUSTRATIVE


@pytest.mark.parametrize(
    ("name", "bandwidth", "latency"),
    [
        ("8×A100, NVLink", 200.0, 0.0034),  # nccl-tests #149; hwLat NVLink Ring Simple
        ("8×H100, NVLink", 370.0, 0.0034),  # nccl-tests #212
        ("64 nodes, 400 Gb/s fabric", 50.0, 0.014),  # 400 / 8; hwLat NET Ring Simple
        ("64 nodes, 100 GbE", 12.5, 0.014),
        ("64 nodes, 25 GbE", 3.125, 0.014),
        ("8 GPUs, PCIe only", 31.5, 0.0057),  # hwLat PCI Ring Simple
    ],
)
def test_published_numbers(name: str, bandwidth: float, latency: float) -> None:
    c = PRESETS.load(name)
    assert (c.bandwidth, c.latency_ms) == (bandwidth, latency)


def test_a100_node_by_hand() -> None:
    # BERT-base layer: 12 x 768^2 + 13 x 768 = 7,087,872 parameters = 28.35 MB (fp32).
    assert pytest.approx(28.35, abs=0.01) == 4 * (12 * 768**2 + 13 * 768) / 1e6
    s = step_schedule(PRESETS.load("8×A100, NVLink"))
    # 28.35 MB > 25 MiB: DDP's cap closes a bucket after every layer: 12 buckets.
    assert s.n_buckets == 12
    # Each ring transfer: 2 x 7 x 0.0034 + 2 x 7/8 x 28.35 / 200 = 0.0476 + 0.2480625.
    assert s.bucket_transfer_ms == pytest.approx([0.2956625] * 12)
    # Backward 12 x 3.72 = 44.64; the last transfer starts then: tail 0.2957, step
    # 22.32 + 44.64 + 0.2957 + 5 = 72.2557.
    assert s.exposed_tail == pytest.approx(0.2956625)
    assert s.step_time == pytest.approx(72.2556625)
