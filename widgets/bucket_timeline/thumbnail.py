"""The bucket timeline's picture on the index: the default step's backward and its link."""

from __future__ import annotations

import numpy as np

from widgets.common.picture import Lanes, spans
from widgets.model.buckets import BucketConfig, step_schedule


def picture() -> Lanes:
    """Backward by layer, and each bucket's all-reduce on the link, coloured by bucket."""
    s = step_schedule(BucketConfig())
    buckets = np.arange(len(s.bucket_start))
    return Lanes(
        "Backward by layer above, each bucket's all-reduce on the link below",
        [
            ("Backward", spans(s.layer_backward_start, s.layer_ready, s.layer_bucket)),
            ("Link", spans(s.bucket_start, s.bucket_end, buckets)),
        ],
    )
