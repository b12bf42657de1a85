"""Launch and link recurrences on the worked example of ``link``'s docstring, by hand."""

from __future__ import annotations

import numpy as np

from widgets.model.buckets import evaluate, gradient_tensors, launch_times, link_schedule


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


def test_evaluate_two_buckets_by_hand() -> None:
    # Two layers of 1 ms and 1 MB, one bucket each (layer 2's first), 2 ranks, 1 GB/s,
    # 0.5 ms a ring step: T = 2 x 0.5 + 2 x 1/2 x 1 / 1 = 2 ms. Layer 2 is ready at 1 ms,
    # layer 1 at 2: bucket 0 runs 1-3, bucket 1 waits for the link from 2 to 3 and runs 3-5.
    tensors = gradient_tensors(np.array([1.0, 1.0]), np.array([1.0, 1.0]))
    assert list(tensors.layer) == [1, 1, 2, 2]  # w1 b1 w2 b2
    r = evaluate(
        tensors, np.array([[1, 1, 0, 0], [0, 0, 0, 0]]), ranks=2, bandwidth=1.0, latency_ms=0.5
    )
    assert r["backward_end"] == 2.0
    np.testing.assert_allclose(r["size"][:, :2], [[1.0, 1.0], [2.0, 0.0]])
    np.testing.assert_allclose(r["ready"][0, :2], [1.0, 2.0])
    np.testing.assert_allclose(r["launch"][0, :2], [1.0, 2.0])
    np.testing.assert_allclose(r["start"][0, :2], [1.0, 3.0])
    np.testing.assert_allclose(r["end"][0, :2], [3.0, 5.0])
    # One bucket of 2 MB, ready at 2: T = 1 + 2 = 3, so 2-5 as well.
    np.testing.assert_allclose(r["transfer"][:, :2], [[2.0, 2.0], [3.0, 0.0]])
    np.testing.assert_array_equal(r["n_buckets"], [2, 1])
    np.testing.assert_allclose(r["comm_end"], [5.0, 5.0])
    np.testing.assert_allclose(r["exposed_tail"], [3.0, 3.0])
    np.testing.assert_allclose(r["last_transfer"], [2.0, 3.0])
    np.testing.assert_allclose(r["last_wait"], [1.0, 0.0])
    np.testing.assert_allclose(r["total_transfer"], [4.0, 3.0])
    # Hidden: bucket 0's 1-2 runs during backward, nothing else does.
    np.testing.assert_allclose(r["hidden"], [1.0, 0.0])
    np.testing.assert_allclose(r["overlap_fraction"], [0.25, 0.0])
    np.testing.assert_allclose(r["overhead"], [2.0, 1.0])
    np.testing.assert_allclose(r["traffic"], [2.0, 2.0])
