"""The real trace's picture on the index: the default trace's layers and all-reduces."""

from __future__ import annotations

import numpy as np

from widgets.common.picture import Lanes, spans
from widgets.trace_viewer.model import TraceViewConfig


def picture() -> Lanes:
    """Each rank's layers, then its all-reduces coloured by bucket, as recorded."""
    r = TraceViewConfig().result()
    buckets = np.arange(1, r.bucket_issue.shape[1] + 1)
    lanes = []
    for rank in range(len(r.layer_start)):
        lanes.append((f"Rank {rank} layers", spans(r.layer_start[rank], r.layer_end[rank], 0)))
        lanes.append(
            (
                f"Rank {rank} all-reduces",
                spans(r.bucket_issue[rank], r.bucket_complete[rank], buckets),
            )
        )
    return Lanes("A recorded run: each rank's layers and all-reduces", lanes)
