"""Bad input, where a learner typed it or a link carried it: a clear message, nothing changed.

One table per place, every widget's rows in it: a control's refused text (the
message under the field; the setting, the drawn state and the clock kept) and a
URL value the page ignores (one notice each, no setting taken).
"""

from __future__ import annotations

import json

import pytest
from drive import FakeWall

from widgets.common.fields import value_text
from widgets.registry import WIDGETS
from widgets.url_state import settings_from_query

#: (widget, control, typed text, the message under the field, or how it starts).
TYPED = [
    ("bucket-timeline", "layers_per_bucket", "0.5",
     "Layers per bucket must be a whole number (1 to 12 layers)."),
    ("bucket-timeline", "layers_per_bucket", "13", "Layers per bucket must be 1 to 12 layers."),
    ("bucket-timeline", "ranks", "1", "Ranks must be 2 to 4096 ranks."),
    ("bucket-timeline", "ranks", "2.5", "Ranks must be a whole number"),
    ("bucket-timeline", "bandwidth", "abc", "“abc” is not a number. Enter"),
    ("bucket-timeline", "latency_ms", "nan", "Enter a finite number"),
    ("bucket-timeline", "backward_ms", "", "Backward time per layer needs a number"),
    ("bucket-timeline", "bucket_cap_mb", "1e99", "Bucket size cap must be"),
    ("queue-lab", "arrival", "-1", "Arrival rate must be 0 to 1000 items/s."),
    ("queue-lab", "arrival", "abc", "“abc” is not a number. Enter 0 to 1000 items/s."),
    ("queue-lab", "arrival", "nan", "Enter a finite number (0 to 1000 items/s)."),
    ("queue-lab", "arrival", "inf", "Enter a finite number (0 to 1000 items/s)."),
    ("queue-lab", "arrival", "", "Arrival rate needs a number (0 to 1000 items/s)."),
    ("queue-lab", "arrival", "1e99", "Arrival rate must be 0 to 1000 items/s."),
    ("queue-lab", "initial", "1e99", "Initial items must be 0 to 100000 items."),
    ("queue-lab", "duration", "0.5", "Run length must be 1 to 1000 s."),
    ("queue-lab", "predicted_drain_time", "-2", "Predicted drain time must be 0 to 100000 s."),
    ("ranks", "drawn_ranks", "9", "Drawn ranks must be 1 to 8 ranks."),
    ("ranks", "drawn_ranks", "2.5", "Drawn ranks must be a whole number"),
    ("ranks", "contention", "-1", "Contention factor must be 0 to 10"),
    ("ranks", "n_layers", "abc", "“abc” is not a number"),
    ("ranks", "enqueue_ms", "", "Host enqueue cost needs a number"),
    ("ranks", "scenario", "Everything fine", "Scenario is one of"),
]  # fmt: skip

#: (widget, URL query, how its one notice starts).
LINKED = [
    ("bucket-timeline", {"layers_per_bucket": [b"0.5"]},
     "Ignored layers_per_bucket=0.5: Layers per bucket must"),
    ("bucket-timeline", {"layers_per_bucket": [b"13"]},
     "Ignored layers_per_bucket=13: Layers per bucket must"),
    ("bucket-timeline", {"ranks": [b"1"]}, "Ignored ranks=1: Ranks must be 2 to 4096 ranks."),
    ("bucket-timeline", {"bandwidth": [b"abc"]}, "Ignored bandwidth=abc: “abc” is not a number."),
    ("bucket-timeline", {"latency_ms": [b"nan"]}, "Ignored latency_ms=nan: Enter a finite number"),
    ("bucket-timeline", {"grad_mb": [b"-1"]}, "Ignored grad_mb=-1: Gradient size per layer must"),
    ("bucket-timeline", {"backward_ms": [b""]},
     "Ignored backward_ms=: Backward time per layer needs a number"),
    ("bucket-timeline", {"straggler_pct": [b"1e99"]},
     "Ignored straggler_pct=1e99: Straggler slowdown must"),
    ("queue-lab", {"arrival": [b"-1"]},
     "Ignored arrival=-1: Arrival rate must be 0 to 1000 items/s."),
    ("queue-lab", {"arrival": [b"abc"]}, "Ignored arrival=abc: “abc” is not a number."),
    ("queue-lab", {"service": [b"nan"]}, "Ignored service=nan: Enter a finite number"),
    ("queue-lab", {"service": [b"inf"]}, "Ignored service=inf: Enter a finite number"),
    ("queue-lab", {"initial": [b"1e99"]},
     "Ignored initial=1e99: Initial items must be 0 to 100000 items."),
    ("queue-lab", {"initial": [b""]}, "Ignored initial=: Initial items needs a number"),
    ("queue-lab", {"duration": [b"0.5"]}, "Ignored duration=0.5: Run length must be 1 to 1000 s."),
    ("queue-lab", {"arrival": [b"\xff"]}, "Ignored arrival=\ufffd:"),
]  # fmt: skip


@pytest.mark.parametrize(("widget", "name", "text", "says"), TYPED)
def test_a_refused_text_says_why_under_its_field_and_keeps_everything(
    widget: str, name: str, text: str, says: str
) -> None:
    view = WIDGETS[widget].create()
    view.clock._wall_clock = FakeWall()
    kept = getattr(view.settings, name)
    drawn = json.dumps([view.drawn_state, view.values, view.anchor], sort_keys=True)
    view._handle_msg({"edit": name, "text": text})
    assert list(view.errors) == [name]
    # A row that ends a sentence is the whole message; one that does not, how it starts.
    assert view.errors[name] == says if says.endswith(".") else view.errors[name].startswith(says)
    assert getattr(view.settings, name) == kept
    assert json.dumps([view.drawn_state, view.values, view.anchor], sort_keys=True) == drawn
    view._handle_msg({"edit": name, "text": value_text(kept)})  # the value as it was
    assert view.errors == {}


@pytest.mark.parametrize(("widget", "query", "notice"), LINKED)
def test_a_bad_url_value_is_ignored_with_one_notice(widget: str, query: dict, notice: str) -> None:
    values, notices = settings_from_query(WIDGETS[widget].settings, query)
    assert values == {}
    assert len(notices) == 1
    assert notices[0].startswith(notice)
