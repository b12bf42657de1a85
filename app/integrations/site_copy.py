"""The static copy a course site's build writes beside its pages."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .embed_block import COPY_FOLDER, EmbedBlock


def write_copy(site_dir: Path, blocks: Iterable[EmbedBlock], live: str = "") -> Path:
    """Export the course into ``site_dir/overlap-lab``, with every block's settings precomputed.

    Returns the copy's folder. Files of an earlier build are replaced.
    """
    from app.export.course import export_course
    from app.export.wanted import wanted_states

    out = Path(site_dir) / COPY_FOLDER
    more = wanted_states(sorted({block.state for block in blocks if block.settings}))
    export_course(out, live, more=more)
    return out
