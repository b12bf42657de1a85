"""Many ranks, real events and contention: the event-driven bucket schedule.

Every rank runs its own backward, one layer after another in ``order``; a
layer's gradient is ready when its backward finishes. On each rank ``r``, with
buckets numbered in launch order (bucket 0 first):

- bucket b is **ready** when its last gradient is ready there:
  ``ready_b(r) = max over b's layers of ready_layer(r)``;
- it is **launched** once it is ready and every earlier bucket has been
  launched, plus the host's enqueue cost (the call returns at once; the
  collective has not run): ``launch_b(r) = max_(j<=b) ready_j(r) + enqueue``;
- the collective **starts** when every rank has launched it and the link is
  free, and **ends** one transfer later:
  ``start_b = max(max_r launch_b(r), end_(b-1))``, ``end_b = start_b + T_b``.
  The rank with the latest launch **defines** the bucket's readiness;
- the **optimizer** starts after the last completion and after every rank's
  backward: ``max(end_(B-1), max_r backward_end(r))``. Until then a rank whose
  backward ended earlier is **idle**.

**Contention.** While a transfer is in flight (between some ``start_b`` and
``end_b``), backward runs at ``1 / (1 + c)`` of its normal speed on every rank
(communication kernels take compute units; on CPU, the communication threads
take cores). Optionally the reverse too: with ``transfer_contention`` c_t > 0
a transfer progresses at ``1 / (1 + c_t)`` of its speed while any rank is still
in backward (on a CPU the cores are shared both ways, and an all-reduce moves
at the pace of its slowest participant: one rank still computing holds every
rank's transfer back), so it takes between ``T_b`` and ``(1 + c_t) T_b``.

**Copy-back (optional).** With ``copy_back_ms`` given, each rank, once its
backward has ended, copies every reduced bucket back into the gradients, in
bucket order, each once its transfer has completed, taking ``copy_back_ms[b]``
(DDP's finalize does this on the thread that ran backward, unless gradients
are views of the buckets). A copy is a thread beside the communication's, so
while any rank copies a transfer is slowed by c_t as while a rank computes.
Only the copies of earlier buckets matter to a transfer (bucket b's own copy
starts after it ends); without ``copy_back_ms`` nothing is copied.

Backward then depends on when the link is busy, which depends on readiness, so
the schedule is solved bucket by bucket: bucket b's readiness needs only the
transfers of buckets before it (every later transfer starts after
``ready_b``), so each rank's backward is advanced exactly through the
piecewise speed known so far; and while transfer b runs, which ranks are
computing follows from that same piecewise speed. Everything is piecewise
constant between events, so the solution is exact (no time stepping). With
``c = c_t = 0`` no speed changes, and the numbers are exactly the closed-form
formulas above.

**Collectives in flight at once (optional).** With ``concurrent`` = n > 1 up
to n collectives run at once (gloo runs each on one of a pool of worker
threads, two by default; NCCL's run one after another on one stream: n = 1).
Bucket b then starts once every rank has launched it and collective ``b - n``
has ended, and its transfer has two parts: a **latency** of ``latency_ms``
(waiting on the peers and the hand-offs between threads, which uses no link),
then its **bytes**, which wait for the bytes of bucket b - 1 (the link still
moves one bucket's data at a time, in bucket order):
``end_b = max(start_b + latency, end_(b-1)) + (T_b - latency)``. So a bucket's
latency hides behind the previous bucket's bytes; timed alone on 2 cores, two
all-reduces of 4-48 MiB started together ended 0.6-1.05x as late as two in
turn. Backward is slowed while any collective is in flight. With n = 1 (the
default) the latency changes nothing: each transfer is the formula above.

Not modelled: network topology (one link moves every bucket's bytes, FIFO in
bucket-index order); compute/communication stream priority; how much of a
core each thread gets beyond the two factors; the enqueue cost delaying
backward on the host; forward and the optimizer.

Units are the caller's (ms throughout this project); times start at 0 unless a
rank's backward start is given.
"""

from __future__ import annotations

import numpy as np

from .rank_schedule import RankSchedule


def _advance(t: float, work: float, busy: list[tuple[float, float]], first: int, slow: float):
    """Finish time of ``work`` ms of backward begun at ``t``, and the first busy interval
    still relevant after it. Inside busy intervals progress is ``1 / slow`` per ms."""
    k = first
    while k < len(busy) and busy[k][1] <= t:
        k += 1
    while k < len(busy) and work > 0:
        s, e = busy[k]
        if t < s:
            if work <= s - t:
                return t + work, k
            work -= s - t
            t = s
        capacity = (e - t) / slow
        if work <= capacity:
            return t + work * slow, k
        work -= capacity
        t = e
        k += 1
    return t + work, k


def _with_busy(busy: list[tuple[float, float]], start: float, end: float):
    """``busy`` with [start, end] added, merged into the last interval if they overlap.

    Collectives in flight at once overlap in time; backward is slowed while any
    is, so the busy intervals are their union (disjoint and in order, as
    ``_advance`` needs). ``start`` is never before the last interval's start."""
    if busy and start <= busy[-1][1]:
        return [*busy[:-1], (busy[-1][0], max(busy[-1][1], end))]
    return [*busy, (start, end)]


def _transfer_end(
    start: float, work: float, compute_start: np.ndarray, compute_end: np.ndarray, c_t: float
) -> float:
    """End of a transfer of ``work`` ms begun at ``start``, at ``1 / (1 + c_t)`` of its
    speed while any rank computes or copies (over any [compute_start, compute_end))."""
    edges = np.unique(np.concatenate([compute_start, compute_end]))
    t = start
    for edge in [*edges[edges > start].tolist(), np.inf]:
        computing = np.any((compute_start <= t) & (compute_end > t))
        slow = 1.0 + c_t if computing else 1.0
        if work <= (edge - t) / slow:
            return t + work * slow
        work -= (edge - t) / slow
        t = edge
    raise AssertionError("unreachable: the last piece is unbounded")


def rank_schedule(
    backward_ms: np.typing.ArrayLike,
    layer_bucket: np.typing.ArrayLike,
    transfer_ms: np.typing.ArrayLike,
    *,
    order: np.typing.ArrayLike | None = None,
    start_ms: np.typing.ArrayLike = 0.0,
    enqueue_ms: float = 0.0,
    contention: float | np.typing.ArrayLike = 0.0,
    transfer_contention: float = 0.0,
    copy_back_ms: np.typing.ArrayLike | None = None,
    concurrent: int = 1,
    latency_ms: float = 0.0,
) -> RankSchedule:
    """Solve one step on every rank, event by event.

    ``backward_ms`` is ``(ranks, layers)`` (or ``(layers,)`` for one rank): each
    layer's backward time at normal speed. ``order`` lists the layer indices in
    the order backward computes them (default: the columns' order; pass
    ``arange(L)[::-1]`` for the bucket timeline's convention, index 0 = layer 1,
    computed last); a ``(ranks, layers)`` array gives each rank its own order (ranks
    whose local readiness order differs), and the schedule's ``order`` is rank
    0's. ``layer_bucket`` gives each layer's bucket (0 is launched
    first; every bucket from 0 to B-1 holds at least one layer). ``transfer_ms``
    is each bucket's transfer time (the caller's alpha-beta cost). ``start_ms``
    is when each rank's backward starts (a rank delayed by data loading starts
    later). ``enqueue_ms`` is the host's cost to launch a collective and
    ``contention`` the factor c >= 0 by which backward slows while a transfer is
    in flight (one for every rank, or one per rank: on shared cores one rank is
    often starved more than the others); ``transfer_contention`` the factor c_t
    by which a transfer slows while any rank computes.

    Worked example of contention: one rank, two layers of 4 ms, one bucket per
    layer, transfers of 2 ms, c = 3. Layer A ends at 4; its transfer runs 4-6.
    Layer B starts at 4 at a quarter speed: by 6 it has done 0.5 ms of work,
    then 3.5 ms more at full speed, ending at 9.5; its transfer runs 9.5-11.5.
    Half of the transfer time is hidden, yet one bucket of both layers (one 3 ms
    transfer, as overhead is paid once) runs 8-11 and ends the step sooner.
    With ``transfer_contention=1`` as well (one rank, so while it computes a
    transfer runs at half speed) and c = 1, transfer 0 and layer B slow each
    other from 4: the transfer's 2 ms take until 8, when B has done 2 ms of its
    work; B ends at 10 and its transfer runs 10-12.

    ``copy_back_ms`` is each bucket's copy back into the gradients after a
    rank's backward (module docstring; None: no copies). Worked example: c = 0,
    c_t = 1, the same two layers, transfers of 2 ms and copies of 2 ms. Transfer
    0 runs from 4 at half speed while B computes and ends at 8, when backward
    ends and transfer 1 starts; bucket 0 is copied back 8-10, so transfer 1 has
    done 1 ms of its work by 10 and ends at 11 (at 10 without the copy).

    ``concurrent`` is how many collectives may be in flight at once and
    ``latency_ms`` the part of each transfer that is latency, not bytes (module
    docstring). Worked example: one rank, layers of 4 and 1 ms, one bucket per
    layer, transfers of 4 ms of which 2 are latency, c = 0, ``concurrent=2``.
    Transfer 0 starts at 4, its latency ends at 6 and its bytes at 8. Transfer
    1 starts at 5, when layer B is ready, and its latency ends at 7; its bytes
    wait for transfer 0's and run 8-10. One at a time it would run 8-12.
    """
    work = np.asarray(backward_ms, float)
    if work.ndim == 1:
        work = work[None, :]
    if work.ndim != 2 or work.size == 0:
        raise ValueError("backward_ms is (ranks, layers) or (layers,)")
    n_ranks, n_layers = work.shape
    if not np.all(np.isfinite(work)) or np.any(work < 0):
        raise ValueError("backward times must be finite and non-negative")
    bucket = np.asarray(layer_bucket)
    if bucket.shape != (n_layers,) or not np.issubdtype(bucket.dtype, np.integer):
        raise ValueError("give one integer bucket index per layer")
    transfer = np.asarray(transfer_ms, float).reshape(-1)
    n_buckets = transfer.size
    if bucket.min() != 0 or set(np.unique(bucket)) != set(range(n_buckets)):
        raise ValueError(f"buckets 0..{n_buckets - 1} must each hold a layer (one per transfer)")
    if not np.all(np.isfinite(transfer)) or np.any(transfer < 0):
        raise ValueError("transfer times must be finite and non-negative")
    seq = np.arange(n_layers) if order is None else np.asarray(order, int)
    if seq.ndim == 1:
        seq = np.broadcast_to(seq, (n_ranks, n_layers))
    if seq.shape != (n_ranks, n_layers) or any(
        sorted(row.tolist()) != list(range(n_layers)) for row in seq
    ):
        raise ValueError("order must list every layer index once")
    start = np.broadcast_to(np.asarray(start_ms, float), (n_ranks,)).copy()
    if not np.all(np.isfinite(start)):
        raise ValueError("backward start times must be finite")
    if not (np.isfinite(enqueue_ms) and enqueue_ms >= 0):
        raise ValueError("enqueue cost must be finite and non-negative")
    c = np.asarray(contention, float)
    if c.ndim == 0:
        c = np.full(n_ranks, float(c))
    if c.shape != (n_ranks,):
        raise ValueError(f"give one contention factor, or one per rank ({n_ranks})")
    if not (np.all(np.isfinite(c)) and np.all(c >= 0)):
        raise ValueError("contention must be finite and non-negative")
    if not (np.isfinite(transfer_contention) and transfer_contention >= 0):
        raise ValueError("transfer contention must be finite and non-negative")
    copies = None
    if copy_back_ms is not None:
        copies = np.asarray(copy_back_ms, float).reshape(-1)
        if copies.shape != (n_buckets,):
            raise ValueError(f"give one copy-back time per bucket ({n_buckets})")
        if not (np.all(np.isfinite(copies)) and np.all(copies >= 0)):
            raise ValueError("copy-back times must be finite and non-negative")
    if isinstance(concurrent, bool) or not isinstance(concurrent, int | np.integer):
        raise ValueError("concurrent collectives must be a whole number")
    if concurrent < 1:
        raise ValueError("at least one collective must be allowed in flight")
    if not (np.isfinite(latency_ms) and latency_ms >= 0):
        raise ValueError("transfer latency must be finite and non-negative")

    # last_position[r, b]: where bucket b's last layer comes in rank r's order.
    last_position = np.full((n_ranks, n_buckets), -1)
    for r in range(n_ranks):
        position = np.empty(n_layers, int)
        position[seq[r]] = np.arange(n_layers)
        np.maximum.at(last_position[r], bucket, position)

    slow = 1.0 + c
    contended = bool(np.any(c > 0))
    busy: list[tuple[float, float]] = []
    layer_start = np.empty((n_ranks, n_layers))
    layer_ready = np.empty((n_ranks, n_layers))
    cursor = np.zeros(n_ranks, int)  # next position in ``seq`` to compute
    clock = start.copy()  # when that position's backward begins
    first_busy = np.zeros(n_ranks, int)

    def advance_to(r: int, stop: int) -> None:
        while cursor[r] <= stop:
            layer = seq[r, cursor[r]]
            layer_start[r, layer] = clock[r]
            clock[r], first_busy[r] = _advance(
                clock[r], work[r, layer], busy, first_busy[r], slow[r]
            )
            layer_ready[r, layer] = clock[r]
            cursor[r] += 1

    bucket_ready = np.empty((n_ranks, n_buckets))
    bucket_launch = np.empty((n_ranks, n_buckets))
    bucket_start = np.empty(n_buckets)
    bucket_end = np.empty(n_buckets)
    defining = np.empty(n_buckets, int)
    launched = np.full(n_ranks, -np.inf)  # latest readiness among buckets launched so far
    link_free = -np.inf
    for b in range(n_buckets):
        members = bucket == b
        for r in range(n_ranks):
            # Every transfer not yet known starts after this bucket is ready here,
            # so the backward computed now is final.
            advance_to(r, last_position[r, b])
        bucket_ready[:, b] = layer_ready[:, members].max(axis=1)
        launched = np.maximum(launched, bucket_ready[:, b])
        bucket_launch[:, b] = launched + enqueue_ms
        defining[b] = int(np.argmax(bucket_launch[:, b]))
        worker_free = bucket_end[b - concurrent] if b >= concurrent else -np.inf
        bucket_start[b] = max(bucket_launch[defining[b], b], worker_free)
        latency = min(latency_ms, transfer[b]) if concurrent > 1 else 0.0
        if transfer_contention > 0 and transfer[b] > 0:
            # While this transfer runs, backward is slowed by it (and by nothing
            # later), so each rank's end of backward under an open-ended busy
            # interval is exact for as long as the transfer lasts.
            ahead = _with_busy(busy, bucket_start[b], np.inf) if contended else busy
            compute_end = np.array(
                [
                    _advance(
                        clock[r], work[r, seq[r, cursor[r] :]].sum(), ahead, first_busy[r], slow[r]
                    )[0]
                    for r in range(n_ranks)
                ]
            )
            slowing_start, slowing_end = [start], [compute_end]
            if copies is not None:
                # Each rank copies buckets 0..b-1 back after its backward, in order, each
                # once it completed; every one of them completed before this transfer ends.
                for r in range(n_ranks):
                    done = compute_end[r]
                    for j in range(b):
                        begin = max(done, bucket_end[j])
                        done = begin + copies[j]
                        slowing_start.append(np.array([begin]))
                        slowing_end.append(np.array([done]))
            slowing = (np.concatenate(slowing_start), np.concatenate(slowing_end))
            latency_end = _transfer_end(bucket_start[b], latency, *slowing, transfer_contention)
            bucket_end[b] = _transfer_end(
                max(latency_end, link_free), transfer[b] - latency, *slowing, transfer_contention
            )
        else:
            bucket_end[b] = max(bucket_start[b] + latency, link_free) + transfer[b] - latency
        link_free = bucket_end[b]
        if contended and transfer[b] > 0:
            busy = _with_busy(busy, bucket_start[b], bucket_end[b])
    for r in range(n_ranks):
        advance_to(r, n_layers - 1)

    backward_end = clock.copy()
    comm_end = float(bucket_end[-1])
    optimizer_start = max(comm_end, float(backward_end.max()))
    return RankSchedule(
        order=seq[0].copy(),
        layer_bucket=bucket.astype(int),
        backward_ms=work,
        transfer_ms=transfer,
        contention=c,
        transfer_contention=float(transfer_contention),
        enqueue_ms=float(enqueue_ms),
        layer_start=layer_start,
        layer_ready=layer_ready,
        bucket_ready=bucket_ready,
        bucket_launch=bucket_launch,
        bucket_start=bucket_start,
        bucket_end=bucket_end,
        bucket_defining_rank=defining,
        backward_start=start,
        backward_end=backward_end,
        comm_end=comm_end,
        optimizer_start=optimizer_start,
        idle_ms=optimizer_start - backward_end,
    )
