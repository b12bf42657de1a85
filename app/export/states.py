"""Every state a static copy of a widget holds, computed from its settings and the clock.

A state is exactly what the live component syncs to its page (its ``param``
values: fields, values, anchor, state, steady, description, …) for the same
settings, with the chart's data table already asked for; it is computed by the
widget's Panel-free rules and run (``WidgetSpec.rules``, the widget's ``state``
module), the same functions the component calls, with no component built. A
widget's states are its defaults, each named configuration (every choice of a
choice control: presets, scenarios, shipped traces), each value of its declared
export axes from each of those (``WidgetSpec.export_axes``), and in a lesson
each experiment. Each state also holds its *moments*: what the page shows after
each Step from its start to the end of the run (the clock's time advanced by
its Step, as ``Clock.step`` does), so that a paused copy shows the server's
readouts and words for that moment; and the state Reset leads to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import param

from widgets.common.fields import value_text
from widgets.common.widget_state import Run, WidgetState
from widgets.registry import WidgetSpec

#: Params every state of one widget shares are sent once, not per state.
SHARED = ("fields",)
#: The most Steps a run's moments are recorded for (a run has about sixteen).
MAX_MOMENTS = 40
#: What a moment may change, in the order a page receives it.
MOMENT_PARAMS = ("anchor", "state", "steady", "description")


@dataclass
class Shown:
    """One widget's settings as its page shows them, and the messages its last edits left."""

    rules: WidgetState
    settings: param.Parameterized
    errors: dict[str, str] = field(default_factory=dict)

    def edit(self, name: str, text: str) -> None:
        """A page's edit (``WidgetState.edit``); a refused text is said at its control."""
        try:
            self.rules.edit(self.settings, name, text)
        except ValueError as exc:
            self.errors[name] = str(exc)
        else:
            self.errors.pop(name, None)

    def apply(self, **values: Any) -> None:
        """Load ``values`` as a lesson's experiment does (then Reset)."""
        self.rules.apply(self.settings, **values)
        self.errors.clear()

    def reset(self) -> None:
        """What Reset does."""
        self.rules.reset(self.settings)
        self.errors.clear()


def synced(shown: Shown, run: Run | None = None, t: float = 0.0) -> dict[str, Any]:
    """What the component syncs to its page for these settings, paused at model time ``t``
    (the data table included; no message count, no experiment's note)."""
    rules, settings = shown.rules, shown.settings
    run = run if run is not None else rules.run(settings)
    state, steady = rules.split(run.state(t))
    params = {
        "fields": rules.fields(settings),
        "values": rules.values(settings),
        "errors": dict(shown.errors),
        "anchor": {
            "elapsed": t,
            "playing": False,
            "speed": run.speed,
            "horizon": run.horizon,
            "step": run.step,
        },
        "state": state,
        "steady": steady,
        "description": run.description(t),
        "notices": [],
        "share": {},
        "snippets": {},
        "lock": "",
        **rules.extra(settings),
    }
    return json.loads(json.dumps(params))


def _key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True)


def moments(run: Run, start: dict[str, Any]) -> list[dict[str, Any]]:
    """What the page shows after each Step from time zero to the end of the run.

    Each moment holds only the params (and anchor entries) that differ from ``start``,
    the state at time zero.
    """
    found = []
    t = 0.0
    for _ in range(MAX_MOMENTS):
        t = min(run.horizon, t + run.step)
        now = {"anchor": {**start["anchor"], "elapsed": t}, "description": run.description(t)}
        if run.MOMENT_KEYS:
            state = {**start["state"], **start["steady"], **run.state(t)}
            now["state"] = {k: v for k, v in state.items() if k not in start["steady"]}
        now = json.loads(json.dumps(now))
        moment = {k: now[k] for k in MOMENT_PARAMS if k in now and now[k] != start[k]}
        # Most of a moment's anchor is the state's own: keep only what moved.
        moment["anchor"] = {k: v for k, v in now["anchor"].items() if v != start["anchor"][k]}
        found.append(moment)
        if t >= run.horizon:
            break
    return found


@dataclass
class WidgetStates:
    """One widget's states on one page, deduplicated, with how a page moves between them."""

    spec: WidgetSpec
    #: The server the states' links point at (``WidgetState.run``), or None for a copy.
    origin: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)
    #: For each choice control, which state each choice loads.
    configurations: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, shown: Shown) -> int:
        """The index of the settings' state, recorded with its moments if new (then Reset)."""
        run = shown.rules.run(shown.settings, self.origin)
        params = synced(shown, run)
        key = _key(params)
        if key in self._index:
            return self._index[key]
        record = {k: v for k, v in params.items() if k not in SHARED}
        record["query"] = self.spec.query_string(shown.rules.link_values(shown.settings))
        record["experiments"] = {}
        index = self._index[key] = len(self.records)
        self.records.append(record)
        record["moments"] = moments(run, params)
        # Reset may clear more than the clock (the queue lab's checked prediction); when
        # it changes no setting and clears no message, it leads back to this same state.
        before = (shown.rules.values(shown.settings), bool(shown.errors))
        shown.reset()
        same = before == (shown.rules.values(shown.settings), False)
        record["reset"] = index if same else self.add(shown)
        return index

    def shared(self, shown: Shown) -> dict[str, Any]:
        """The params every state shares (the controls' specs)."""
        return json.loads(json.dumps({"fields": shown.rules.fields(shown.settings)}))


def choice_fields(shown: Shown) -> list[dict]:
    """The controls that choose a named configuration (a preset, a scenario, a trace)."""
    return [f for f in shown.rules.fields(shown.settings) if f.get("kind") == "choice"]


def widget_states(
    spec: WidgetSpec,
    settings: dict[str, Any] | None = None,
    experiments: Sequence[tuple[int, str, dict[str, Any]]] = (),
    axes: bool = True,
    more: Sequence[dict[str, Any]] = (),
    origin: str | None = None,
) -> tuple[WidgetStates, dict[str, Any]]:
    """Every state of one widget, started from ``settings`` (a page's URL keys or a lesson's).

    ``experiments`` are ``(number, note, settings)`` that a lesson's buttons load; each
    is recorded from every state the widget can be in after them. ``axes`` adds
    the named configurations and the declared axes (a widget's own page); ``more``
    adds a course author's own settings (``export --state``), each with its axes;
    ``origin`` is the server whose page holds the states (for the links they draw).
    """
    settings = dict(settings or {})
    states = WidgetStates(spec, origin)
    rules = spec.rules()

    def made(**values: Any) -> Shown:
        return Shown(rules, rules.make(**values)[0])

    def fresh() -> Shown:
        return made(**settings)

    first = fresh()
    shared = states.shared(first)
    start = states.add(first)
    starts: list[tuple[int, Callable[[], Shown]]] = [(start, fresh)]
    for own in more:

        def authors(own=own) -> Shown:
            return made(**{**settings, **own})

        index = states.add(authors())
        if all(index != i for i, _ in starts):
            starts.append((index, authors))
    if axes:
        for control in choice_fields(first):
            name = control["name"]
            for choice in control["choices"]:

                def loaded(name=name, choice=choice) -> Shown:
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
    fresh: Callable[[], Shown],
    experiments: Sequence[tuple[int, str, dict[str, Any]]],
) -> None:
    """Each experiment from every state the experiments can leave the widget in.

    Loading an experiment keeps the settings it does not name, so its result
    depends on what was loaded before: the states reachable by any order of
    presses are all recorded (a lesson has a few experiments per widget).
    """
    if not experiments:
        return
    # The note an experiment shows is not part of its state (the page has each in ``notes``).
    by_number = {number: settings for number, _note, settings in experiments}
    paths: dict[int, list[int]] = {start: []}
    queue = [start]
    while queue:
        index = queue.pop(0)
        for number, settings in by_number.items():
            view = fresh()
            for earlier in paths[index]:
                view.apply(**by_number[earlier])
            view.apply(**settings)
            found = states.add(view)
            states.records[index]["experiments"][str(number)] = found
            if found not in paths:
                paths[found] = [*paths[index], number]
                queue.append(found)
