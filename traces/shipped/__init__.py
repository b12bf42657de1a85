"""Example traces of real DDP runs, shipped with the package (see README.md in this folder).

``shipped()`` maps each file name to its path and ``DESCRIPTIONS`` says what
layout each one records; load one with ``traces.load_trace``.
``profiled_example()`` gives the torch.profiler example's files.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent

# File name -> its bucket layout, in words. Each layer's gradient is 4 MiB.
DESCRIPTIONS: dict[str, str] = {
    "one-layer-per-bucket.json": "bucket cap 4 MiB: twelve buckets of one layer",
    "three-layers-per-bucket.json": "bucket cap 12 MiB: four buckets of three layers",
    "one-bucket.json": "bucket cap 48 MiB: all twelve layers in one bucket",
    "mixed-5-5-2.json": "bucket cap 20 MiB: buckets of five, five and two layers",
}


#: A torch.profiler example: one gzipped profile per rank and the recorder's trace of the same run.
PROFILED = FOLDER / "profiled"


def profiled_example() -> list[Path]:
    """The example's profiler files, rank 0 first (see ``profiled/README.md``)."""
    return sorted(PROFILED.glob("rank*.json.gz"))


def shipped() -> dict[str, Path]:
    """The shipped trace files, by file name, in the order of ``DESCRIPTIONS``."""
    return {name: FOLDER / name for name in DESCRIPTIONS if (FOLDER / name).is_file()}
