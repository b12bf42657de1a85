"""The many-ranks picture on the index: every rank's backward and the link, by default."""

from __future__ import annotations

import numpy as np

from widgets.common.picture import Lanes, spans
from widgets.many_ranks.model import RanksConfig


def picture() -> Lanes:
    """Each rank's backward by layer, and each bucket's all-reduce, coloured by bucket."""
    s = RanksConfig().result().schedule
    lanes = [
        (f"Rank {r}", spans(s.layer_start[r], s.layer_ready[r], s.layer_bucket))
        for r in range(len(s.layer_start))
    ]
    lanes.append(("Link", spans(s.bucket_start, s.bucket_end, np.arange(len(s.bucket_start)))))
    return Lanes("Every rank's backward, and the link every bucket waits for", lanes)
