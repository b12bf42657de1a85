"""Machines people train on: the bucket timeline's hardware presets and their sources.

Each preset's link comes from a published measurement or a stated line rate;
its latency per step from NCCL's own tuning model. The model on them is
BERT-base's encoder (Devlin et al. 2019, "BERT: Pre-training of Deep
Bidirectional Transformers for Language Understanding": 12 layers, hidden
size 768): one layer holds 12 h² + 13 h = 7 087 872 parameters, 28.35 MB of
fp32 gradient (embeddings left out). Its per-layer backward time is **an estimate, not a
measurement**: backward costs about 4 N FLOPs per token (two thirds of the
6 N of a training step; Kaplan et al. 2020, "Scaling Laws for Neural Language
Models", §2.1), for a micro-batch of 32 sequences of 512 tokens, at 40 % of
the GPU's dense bf16 peak (A100: 312 TFLOP/s, H100 SXM: 989 TFLOP/s, NVIDIA's
data sheets). A100: 4 × 7.09e6 × 16 384 / (0.4 × 312e12) = 3.72 ms a layer;
H100: 1.17 ms. Forward is half of backward; the optimizer 5 ms is illustrative.

Latency per step, from NCCL's ``src/graph/tuning.cc`` (table ``hwLat``, the
Simple protocol, Ring column, in µs): NVLink 3.4, PCI 5.7, NET 14.0 (NCCL
2.19 and later; earlier versions had 9.6 for NET). The same α is used for the
tree, whose own Simple entries are close (NVLink 4.0, PCI 4.0, NET 14).
"""

from __future__ import annotations

#: Where each hardware preset's numbers come from, as the page shows it.
HARDWARE_SOURCES: dict[str, str] = {
    "8×A100, NVLink": "Measured: nccl-tests issue #149 (NVIDIA/nccl-tests), all_reduce_perf on "
    "8 A100-SXM4-80GB over NVLink, bus bandwidth about 200 GB/s. Latency 3.4 µs a step: "
    "NCCL tuning.cc hwLat, NVLink, Ring, Simple.",
    "8×H100, NVLink": "Measured: nccl-tests issue #212, where NCCL's maintainer gives about "
    "370 GB/s as the effective NVLink bus bandwidth of 8 H100s with the ring (450 GB/s line "
    "rate less ~20 % protocol overhead). Latency 3.4 µs a step: tuning.cc hwLat, NVLink, "
    "Ring, Simple.",
    "64 nodes, 400 Gb/s fabric": "Line rate, not a measurement: one 400 Gb/s NIC per GPU is "
    "50 GB/s each way; 64 ranks, one per node. Latency 14 µs a step: tuning.cc hwLat, NET, "
    "Ring, Simple.",
    "64 nodes, 100 GbE": "Line rate, not a measurement: 100 Gb/s is 12.5 GB/s each way. "
    "Latency 14 µs a step: tuning.cc hwLat, NET, Ring, Simple.",
    "64 nodes, 25 GbE": "Line rate, not a measurement: 25 Gb/s is 3.125 GB/s each way. "
    "Latency 14 µs a step: tuning.cc hwLat, NET, Ring, Simple.",
    "8 GPUs, PCIe only": "Line rate, not a measurement: PCIe 4.0 x16 moves 31.5 GB/s each "
    "way (PCI-SIG); an all-reduce through the CPU's root complex gets less. Latency 5.7 µs a "
    "step: tuning.cc hwLat, PCI, Ring, Simple.",
}

#: What the teaching presets' page says about their numbers.
ILLUSTRATIVE = (
    "Illustrative: numbers chosen to show one regime clearly (a 2-core CPU's scale), not "
    "measured on a machine."
)

#: The model on every hardware preset (module docstring): BERT-base's 12 encoder layers,
#: cut into buckets by DDP's default 25 MiB cap (one layer each, as one layer per bucket does).
BERT_BASE = dict(grad_mb=28.35, ddp_bucketing=True, layers_per_bucket=1)
A100_LAYER_MS = 3.72
H100_LAYER_MS = 1.17
A100_STEP = dict(backward_ms=A100_LAYER_MS, forward_ms=12 * A100_LAYER_MS / 2, optimizer_ms=5.0)

#: What each hardware preset sets apart from the defaults.
HARDWARE_PRESETS: dict[str, dict] = {
    "8×A100, NVLink": dict(**BERT_BASE, **A100_STEP, ranks=8, bandwidth=200.0, latency_ms=0.0034),
    "8×H100, NVLink": dict(
        **BERT_BASE,
        backward_ms=H100_LAYER_MS,
        forward_ms=12 * H100_LAYER_MS / 2,
        optimizer_ms=5.0,
        ranks=8,
        bandwidth=370.0,
        latency_ms=0.0034,
    ),
    "64 nodes, 400 Gb/s fabric": dict(
        **BERT_BASE, **A100_STEP, ranks=64, bandwidth=50.0, latency_ms=0.014
    ),
    "64 nodes, 100 GbE": dict(**BERT_BASE, **A100_STEP, ranks=64, bandwidth=12.5, latency_ms=0.014),
    "64 nodes, 25 GbE": dict(**BERT_BASE, **A100_STEP, ranks=64, bandwidth=3.125, latency_ms=0.014),
    "8 GPUs, PCIe only": dict(**BERT_BASE, **A100_STEP, ranks=8, bandwidth=31.5, latency_ms=0.0057),
}

HARDWARE_DESCRIPTIONS: dict[str, str] = {
    "8×A100, NVLink": "BERT-base on one NVLink node of A100s with DDP's default buckets: "
    "transfers hide behind backward.",
    "8×H100, NVLink": "BERT-base on one NVLink node of H100s: compute three times faster, "
    "the link not quite twice.",
    "64 nodes, 400 Gb/s fabric": "BERT-base on 64 nodes over a 400 Gb/s fabric: the ring's "
    "2(p−1) steps of latency now show; try the tree.",
    "64 nodes, 100 GbE": "BERT-base on 64 nodes over 100 Gb Ethernet: traffic exceeds compute.",
    "64 nodes, 25 GbE": "BERT-base on 64 nodes over 25 Gb Ethernet: traffic exceeds compute.",
    "8 GPUs, PCIe only": "BERT-base on 8 GPUs with no NVLink, over PCIe 4.0.",
}


def source_of(preset: str) -> str:
    """What the page says about where a preset's numbers come from."""
    return HARDWARE_SOURCES.get(preset, ILLUSTRATIVE)
