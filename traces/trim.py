"""Keep a trace's quietest iterations, and the timed-alone rounds recorded beside them.

The recorder runs its rounds in lockstep: in round ``k`` (warm-up included)
each layout runs iteration ``k``, then backward alone runs once and every
all-reduce size is timed alone once (``traces.recorder.demo``). So the
``isolated`` block's entry ``j`` (backward alone, and repetition ``j`` of each
size) belongs with iteration ``metadata.warmup_iterations + j``: the warm-up
rounds are dropped from both. Trimming keeps, of the isolated block, the
rounds of the kept iterations, so that what a fit reads as "timed alone" ran
under the same machine conditions as the iterations it is compared with.
"""

from __future__ import annotations

from typing import Any

from .schema import TraceError, validate_trace


def keep_quietest(documents: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """Copies of valid trace documents with only their ``count`` quietest iterations.

    Quietest means the least load from other processes (unknown load counts as
    quiet); ties keep the earlier iteration. Several traces of one run whose
    layouts alternated (``overlap-lab record`` with several caps) keep the same
    iteration numbers, those whose worst load across the traces is least. The
    kept iterations stay in order; a trace's ``isolated`` block keeps only the
    rounds of the kept iterations (``isolated_rounds``); the metadata's
    ``note`` says what was kept.
    """
    for document in documents:
        validate_trace(document)
    if count < 1:
        raise TraceError("keep at least one iteration")
    numbers = [it["iteration"] for it in documents[0]["iterations"]]
    for document in documents[1:]:
        if [it["iteration"] for it in document["iterations"]] != numbers:
            raise TraceError("traces trimmed together must have the same iteration numbers")
    rounds = [isolated_rounds(d) for d in documents]
    load = [
        max(
            0.0 if d["iterations"][i]["other_load"] is None else d["iterations"][i]["other_load"]
            for d in documents
        )
        for i in range(len(numbers))
    ]
    chosen = sorted(sorted(range(len(numbers)), key=lambda i: (load[i], i))[:count])
    worst = max(load[i] for i in chosen)
    out = []
    for document, its_rounds in zip(documents, rounds, strict=True):
        note = document["metadata"].get("note", "")
        together = f", in {len(documents)} traces of one run" if len(documents) > 1 else ""
        trimmed = dict(document)
        alone = ""
        if its_rounds is not None:
            keep = [its_rounds[i] for i in chosen]
            trimmed["isolated"] = _isolated_of(document["isolated"], keep)
            alone = (
                f", and the {len(keep)} of {len(document['isolated']['backward'])} rounds of "
                "backward and all-reduces timed alone that ran beside them"
            )
        sentence = (
            f"Kept the {len(chosen)} iteration{'' if len(chosen) == 1 else 's'} of "
            f"{len(numbers)} with the least load from "
            f"other processes{together} (at most {worst:.0%} of the cores){alone}."
        )
        trimmed["metadata"] = {**document["metadata"], "note": f"{note} {sentence}".strip()}
        trimmed["iterations"] = [document["iterations"][i] for i in chosen]
        out.append(trimmed)
    return out


def isolated_rounds(document: dict[str, Any]) -> list[int] | None:
    """For each iteration of a valid document, the index of its round in the ``isolated``
    block (None when the document has no block, or an empty one).

    A block with one round per iteration pairs them in order (a recording, or a
    trace trimmed by ``keep_quietest``). A block with more rounds (every round
    of the recording, beside only some of its iterations) pairs iteration ``n``
    with round ``n - metadata.warmup_iterations``, as the recorder numbers
    both. Raises ``TraceError`` when neither holds.
    """
    block = document.get("isolated")
    if block is None:
        return None
    its = document["iterations"]
    counts = {len(block["backward"])} | {len(e["ms"]) for e in block["allreduce"]}
    if len(counts) != 1:
        raise TraceError(
            "trace.isolated: backward alone and the all-reduces alone hold different numbers "
            f"of rounds ({', '.join(map(str, sorted(counts)))}), so they cannot be matched to "
            "the iterations they ran beside"
        )
    n = counts.pop()
    if n == 0:
        return None
    if n == len(its):
        return list(range(n))
    warmup = document["metadata"].get("warmup_iterations")
    rounds = None if warmup is None else [it["iteration"] - warmup for it in its]
    if rounds is None or not all(0 <= r < n for r in rounds):
        raise TraceError(
            f"trace.isolated: {n} rounds for {len(its)} iterations, and the iteration numbers "
            "less metadata.warmup_iterations do not name rounds of it, so they cannot be "
            "matched to the iterations they ran beside"
        )
    return rounds


def _isolated_of(block: dict[str, Any], keep: list[int]) -> dict[str, Any]:
    """The ``isolated`` block with only rounds ``keep``, in that order."""
    return {
        **block,
        "allreduce": [{**e, "ms": [e["ms"][j] for j in keep]} for e in block["allreduce"]],
        "backward": [block["backward"][j] for j in keep],
    }
