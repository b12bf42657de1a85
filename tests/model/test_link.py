"""Launch and link recurrences on the worked example of ``link``'s docstring, by hand."""

from __future__ import annotations

import numpy as np

from widgets.model.buckets import launch_times, link_schedule


def test_launch_in_bucket_order_without_enqueue_time_by_default() -> None:
    # Bucket 0 ready at 10, bucket 1 at 2: bucket 1 waits for bucket 0's launch.
    np.testing.assert_array_equal(launch_times([10.0, 2.0]), [10.0, 10.0])
    np.testing.assert_array_equal(launch_times([1.0, 2.0, 7.0, 3.0]), [1.0, 2.0, 7.0, 7.0])


def test_launch_with_an_enqueue_time() -> None:
    # launch_b = max(ready_b, launch_(b-1)) + 1: 10 + 1 = 11, then max(2, 11) + 1 = 12.
    np.testing.assert_array_equal(launch_times([10.0, 2.0], 1.0), [11.0, 12.0])
    # 0 + 1 = 1, max(0, 1) + 1 = 2, max(5, 2) + 1 = 6.
    np.testing.assert_array_equal(launch_times([0.0, 0.0, 5.0], 1.0), [1.0, 2.0, 6.0])


def test_link_serves_one_transfer_at_a_time() -> None:
    start, end = link_schedule([10.0, 10.0], [3.0, 3.0])
    np.testing.assert_array_equal(start, [10.0, 13.0])
    np.testing.assert_array_equal(end, [13.0, 16.0])
    # A gap: 0-2, then idle until 5, 5-6, then 6-10 right after it.
    start, end = link_schedule([0.0, 5.0, 5.5], [2.0, 1.0, 4.0])
    np.testing.assert_array_equal(start, [0.0, 5.0, 6.0])
    np.testing.assert_array_equal(end, [2.0, 6.0, 10.0])
