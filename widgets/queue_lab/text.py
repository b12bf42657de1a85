"""What the fluid queue lab says: its description, and why a queue does not drain.

Every sentence is built from the model's numbers (``widgets.model.fluid_queue``);
nothing is decided here.
"""

from __future__ import annotations

from ..common.formatting import ITEMS, ITEMS_PER_SECOND, SECONDS
from ..model.fluid_queue import Drain, DrainStatus, FluidQueue

#: What the length check says when the run ends before the time asked about.
NOT_REACHED = "It did not happen by the end."


def description(model: FluidQueue, t: float, horizon: float) -> str:
    """The queue at time ``t`` of a run that ends at ``horizon``, in plain sentences."""
    seg = model.segment
    parts = [
        f"At {SECONDS(t)} the queue holds {ITEMS(float(model.length_at(t)))}.",
        f"Since {SECONDS(seg.start)} it "
        + (
            "holds steady"
            if seg.trend == "constant"
            else f"{seg.trend} at {ITEMS_PER_SECOND(abs(seg.net_rate))}"
        )
        + f" (arrival {ITEMS_PER_SECOND(seg.arrival)}, "
        f"service {ITEMS_PER_SECOND(seg.service)}).",
    ]
    drain = model.drain()
    if drain.status == DrainStatus.DRAINS and drain.time <= t:
        parts.append(f"It was first empty at {SECONDS(drain.time)}.")
    elif drain.status != DrainStatus.DRAINS:
        parts.append(never_drains(drain))
    edits = len(model.segment_starts) - 1
    if edits:
        parts.append(f"The rates changed {edits} time{'s' if edits > 1 else ''} in this run.")
    parts.append(f"The run ends at {SECONDS(horizon)}.")
    return " ".join(parts)


def never_drains(drain: Drain) -> str:
    """Why the queue does not empty during the run, in the model's own terms."""
    if drain.status == DrainStatus.GROWS_FROM_EMPTY:
        return "The queue starts empty and grows: it never drains."
    if drain.status == DrainStatus.AFTER_THE_RUN:
        return f"It would empty at {SECONDS(drain.time)}, after the run ends."
    if drain.status == DrainStatus.NEVER:
        return "The queue never drains: it does not shrink."
    return NOT_REACHED
