"""Every state a static copy of a widget holds, computed by driving the real component.

A state is exactly what the live component syncs to its page (its ``param``
values: fields, values, anchor, state, steady, description, …) after the
same actions, with the chart's data table already asked for. A widget's
states are its defaults, each named configuration (every choice of a choice
control: presets, scenarios, shipped traces), each value of its declared
export axes from each of those (``WidgetSpec.export_axes``), and in a lesson
each experiment. Each state also holds its *moments*: what the component
sends after each Step from its start to the end of the run, so that a paused
copy shows the server's readouts and words for that moment; and the state
Reset leads to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from panel.custom import JSComponent

from widgets.common.component import WidgetComponent
from widgets.common.fields import value_text
from widgets.registry import WidgetSpec

#: Params every state of one widget shares are sent once, not per state.
SHARED = ("fields",)
#: The most Steps a run's moments are recorded for (a run has about sixteen).
MAX_MOMENTS = 40


def synced(view: WidgetComponent) -> dict[str, Any]:
    """What the component syncs to its page now: every param it declares beyond Panel's."""
    names = [n for n in view.param if n not in JSComponent.param]
    return json.loads(json.dumps({n: getattr(view, n) for n in names}))


def comparable(params: dict[str, Any]) -> dict[str, Any]:
    """A state without what differs between equal states reached by different paths.

    The anchor's revision counts messages, and ``message`` says which experiment
    was loaded last; neither is part of what the settings give.
    """
    out = {k: v for k, v in params.items() if k not in ("message",)}
    if "anchor" in out:
        out["anchor"] = {k: v for k, v in out["anchor"].items() if k != "revision"}
    return out


def _key(params: dict[str, Any]) -> str:
    return json.dumps(comparable(params), sort_keys=True)


def moments(view: WidgetComponent) -> list[dict[str, Any]]:
    """What the page receives after each Step from now (time zero) to the end of the run.

    Each moment holds only the params (and anchor entries) that differ from the
    state now; the component is left at the end of its run.
    """
    names = [n for n in view.param if n not in JSComponent.param and n != "message"]
    before = {n: getattr(view, n) for n in names}
    start = synced(view)
    found = []
    for _ in range(MAX_MOMENTS):
        view.act("step")
        # A param that was not sent again holds the very same object: only the others
        # can differ (the state's arrays are large, and a run has some thirty Steps).
        sent = [n for n in names if getattr(view, n) is not before[n]]
        now = json.loads(json.dumps({n: getattr(view, n) for n in sent}))
        moment = {k: v for k, v in now.items() if v != start[k]}
        anchor = now.get("anchor", start["anchor"])
        # Most of a moment's anchor is the state's own: keep only what moved.
        moment["anchor"] = {k: v for k, v in anchor.items() if v != start["anchor"].get(k)}
        found.append(moment)
        if anchor["elapsed"] >= anchor["horizon"]:
            break
    return found


@dataclass
class WidgetStates:
    """One widget's states on one page, deduplicated, with how a page moves between them."""

    spec: WidgetSpec
    records: list[dict[str, Any]] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)
    #: For each choice control, which state each choice loads.
    configurations: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, view: WidgetComponent) -> int:
        """The index of the component's current state, recorded with its moments if new."""
        view.act("table")
        params = synced(view)
        key = _key(params)
        if key in self._index:
            return self._index[key]
        record = {k: v for k, v in params.items() if k not in (*SHARED, "message")}
        record["query"] = view.query()
        record["experiments"] = {}
        index = self._index[key] = len(self.records)
        self.records.append(record)
        record["moments"] = moments(view)
        # Reset may clear more than the clock (the queue lab's checked prediction).
        view.act("reset")
        record["reset"] = self.add(view)
        return index

    def shared(self, view: WidgetComponent) -> dict[str, Any]:
        """The params every state shares (the controls' specs)."""
        return {k: v for k, v in synced(view).items() if k in SHARED}


def choice_fields(view: WidgetComponent) -> list[dict]:
    """The controls that choose a named configuration (a preset, a scenario, a trace)."""
    return [f for f in view.fields if f.get("kind") == "choice"]


def widget_states(
    spec: WidgetSpec,
    settings: dict[str, Any] | None = None,
    experiments: Sequence[tuple[int, str, dict[str, Any]]] = (),
    axes: bool = True,
    more: Sequence[dict[str, Any]] = (),
) -> tuple[WidgetStates, dict[str, Any]]:
    """Every state of one widget, started from ``settings`` (a page's URL keys or a lesson's).

    ``experiments`` are ``(number, note, settings)`` that a lesson's buttons load; each
    is recorded from every state the widget can be in after them. ``axes`` adds
    the named configurations and the declared axes (a widget's own page); ``more``
    adds a course author's own settings (``export --state``), each with its axes.
    """
    settings = dict(settings or {})
    states = WidgetStates(spec)

    def fresh() -> WidgetComponent:
        return spec.create(**settings)

    first = fresh()
    shared = states.shared(first)
    start = states.add(first)
    starts: list[tuple[int, Callable[[], WidgetComponent]]] = [(start, fresh)]
    for own in more:

        def made(own=own) -> WidgetComponent:
            return spec.create(**{**settings, **own})

        index = states.add(made())
        if all(index != i for i, _ in starts):
            starts.append((index, made))
    if axes:
        for control in choice_fields(first):
            name = control["name"]
            for choice in control["choices"]:

                def loaded(name=name, choice=choice) -> WidgetComponent:
                    view = fresh()
                    view.edit(name, choice)
                    return view

                view = loaded()
                index = states.add(view)
                states.configurations.setdefault(name, {})[choice] = index
                if all(index != i for i, _ in starts):
                    starts.append((index, loaded))
        for _, make in starts:
            base = make()
            for name, values in spec.export_axes.items():
                for value in values(base.settings):
                    view = make()
                    view.edit(name, value_text(value))
                    states.add(view)
    _record_experiments(states, start, fresh, experiments)
    return states, shared


def _record_experiments(
    states: WidgetStates,
    start: int,
    fresh: Callable[[], WidgetComponent],
    experiments: Sequence[tuple[int, str, dict[str, Any]]],
) -> None:
    """Each experiment from every state the experiments can leave the widget in.

    Loading an experiment keeps the settings it does not name, so its result
    depends on what was loaded before: the states reachable by any order of
    presses are all recorded (a lesson has a few experiments per widget).
    """
    if not experiments:
        return
    by_number = {number: (note, settings) for number, note, settings in experiments}
    paths: dict[int, list[int]] = {start: []}
    queue = [start]
    while queue:
        index = queue.pop(0)
        for number, (note, settings) in by_number.items():
            view = fresh()
            for earlier in paths[index]:
                view.apply(note=by_number[earlier][0], **by_number[earlier][1])
            view.apply(note=note, **settings)
            found = states.add(view)
            states.records[index]["experiments"][str(number)] = found
            if found not in paths:
                paths[found] = [*paths[index], number]
                queue.append(found)
