"""The bucket timeline in headless Chromium, driven only by accessible names.

Expected readouts come from the model itself (``step_schedule(BucketConfig(...))``)
formatted the way the widget formats them, so a test states what the learner
must see for a setting, not what the page happened to show last time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from pagekit import (
    BUCKET_FIELDS,
    TIMEOUT,
    assert_readouts,
    bucket_readouts,
    button,
    enter,
    field,
    holds_still,
    readout,
    starts,
    value_of,
)
from playwright.sync_api import Page, expect

from widgets.bucket_timeline.model import PRESET_DESCRIPTIONS, PRESETS
from widgets.common.formatting import MILLISECONDS, plain_number
from widgets.model.buckets import BucketConfig, step_schedule

ROUTE = "/bucket-timeline"

#: Label of each numeric control on the page -> its parameter (URL key).
CONTROLS = BUCKET_FIELDS
DEFAULTS = {name: getattr(BucketConfig(), name) for name in CONTROLS.values()}
#: Readouts that follow the schedule (Elapsed time follows the clock instead).
SCHEDULE_READOUTS = (
    "Backward end",
    "Communication end",
    "Exposed tail",
    "Step time",
    "Buckets",
    "Per-transfer overhead",
    "Overlap",
)


# --- helpers -----------------------------------------------------------------


def preset_select(page: Page):
    return page.get_by_role("combobox", name="Preset", exact=True)


def regime_of(config: BucketConfig) -> str:
    return str(step_schedule(config).regime.kind)


def step_size(config: BucketConfig) -> float:
    """The widget's Step: the 1-2-5 number just below a sixteenth of the step's timeline."""
    s = step_schedule(config)
    x = (s.optimizer_start + s.optimizer_ms) / 16
    exp = 10 ** int(f"{x:e}".split("e")[1])
    base = x / exp
    return (5 if base >= 5 else 2 if base >= 2 else 1) * exp


def assert_schedule(page: Page, config: BucketConfig, context: str = "") -> None:
    """Every schedule readout and the regime shown for ``config``."""
    assert_readouts(page, bucket_readouts(config), context)
    expect(readout(page, "Regime"), f"Regime {context}").to_contain_text(
        regime_of(config), timeout=TIMEOUT
    )


def assert_fields(page: Page, config: BucketConfig) -> None:
    for label, name in CONTROLS.items():
        expect(field(page, label)).to_have_value(plain_number(getattr(config, name)))


def at_defaults(page: Page) -> bool:
    """True when the shared page shows the default settings and no error message."""
    try:
        if page.get_by_role("alert").count():
            return False
        if preset_select(page).input_value() != "Overlap works":
            return False
        for label, name in CONTROLS.items():
            if field(page, label).input_value() != plain_number(DEFAULTS[name]):
                return False
        expected = bucket_readouts(BucketConfig())
        return all(readout(page, k).inner_text().startswith(v) for k, v in expected.items())
    except Exception:
        return False


# --- fixtures ----------------------------------------------------------------


@pytest.fixture
def timeline(page: Page, server: str, ui) -> Page:
    """A fresh page on the widget (for tests that play, step or count traffic)."""
    ui.open_widget(page, server + ROUTE)
    return page


@pytest.fixture(scope="module")
def _shared(browser, server: str, ui) -> Iterator[Page]:
    context = browser.new_context()
    page = context.new_page()
    ui.open_widget(page, server + ROUTE)
    yield page
    context.close()


@pytest.fixture
def shared(_shared: Page, server: str, ui) -> Page:
    """One page reused by the tests that only edit settings; reopened if a test left it dirty.

    Every test using it puts the settings back to the defaults before it ends.
    """
    if not at_defaults(_shared):
        ui.open_widget(_shared, server + ROUTE)
    return _shared


# --- 1: the defaults and each control ------------------------------------------


def test_defaults_show_the_canonical_step(shared: Page):
    assert_fields(shared, BucketConfig())
    expected = bucket_readouts(BucketConfig())
    # The numbers the lesson quotes, so a model change cannot silently move them.
    assert expected == {
        "Backward end": "24.00 ms",
        "Communication end": "29.95 ms",
        "Exposed tail": "5.95 ms",
        "Step time": "43.95 ms",
        "Buckets": "4",
        "Per-transfer overhead": "0.70 ms",
        "Overlap": "75 %",
    }
    assert_schedule(shared, BucketConfig(), "at the defaults")
    expect(readout(shared, "Elapsed time")).to_have_text(starts("0.00 ms"))
    expect(readout(shared, "Regime")).to_contain_text("overlap-limited")
    # The notes under the readouts, and the regime's explanation with its numbers.
    for note in (
        "last transfer alone: 5.95 ms",
        "forward 12.00 ms + 29.95 ms + optimizer 2.00 ms",
        "layers 12–10; 9–7; 6–4; 3–1",
        "× 4 transfers = 2.80 ms",
    ):
        expect(shared.get_by_text(note, exact=True)).to_be_visible()
    expect(shared.get_by_text("Overlap is doing its job.", exact=True)).to_be_visible()
    # The sweep marks the best setting, and its button is there to use it.
    expect(shared.get_by_text("Best: 2 layers per bucket (43.20 ms)", exact=True)).to_be_visible()
    expect(button(shared, "Use the best setting")).to_be_enabled()
    # Every mark of the timeline has a key entry, the optimizer's block included.
    key = shared.get_by_role("list", name="Key", exact=True)
    for entry in ("Optimizer (in the Backward lane)", "Exposed tail", "Playhead"):
        expect(key).to_contain_text(entry)
    expect(shared.get_by_role("img", name=re.compile("^One training step"))).to_be_visible()


EDITS = {
    "Layers per bucket": "1",
    "Backward time per layer": "3",
    "Gradient size per layer": "50",
    "Link bandwidth": "50",
    "Latency per ring step": "0.2",
    "Ranks": "4",
    "Straggler slowdown": "50",
}


@pytest.mark.parametrize("label", list(EDITS))
def test_each_control_changes_the_readouts_to_the_model(shared: Page, label: str):
    name, text = CONTROLS[label], EDITS[label]
    changed = BucketConfig(**{name: float(text) if "." in text else int(text)})
    before, after = bucket_readouts(BucketConfig()), bucket_readouts(changed)
    assert before != after, f"the edit {label} = {text} should change some readout"

    enter(shared, label, text)
    assert_schedule(shared, changed, f"after {label} = {text}")
    # The preset keeps its name and says what differs from it.
    expect(preset_select(shared)).to_have_value("Overlap works")
    said = f"Overlap works, changed: {changed_words(label)}."
    expect(shared.get_by_text(said)).to_be_visible(timeout=TIMEOUT)
    expect(shared.get_by_role("alert")).to_have_count(0)

    enter(shared, label, plain_number(DEFAULTS[name]))
    assert_schedule(shared, BucketConfig(), f"after {label} back to the default")
    expect(preset_select(shared)).to_have_value("Overlap works")
    expect(shared.get_by_text(said)).to_have_count(0, timeout=TIMEOUT)


def changed_words(label: str) -> str:
    """A control's label as the preset's note lists it ("Ranks" -> "ranks")."""
    return label[:1].lower() + label[1:]


def test_loading_the_preset_again_undoes_an_edit(timeline: Page):
    page = timeline
    enter(page, "Ranks", "16")
    expect(page.get_by_text("Overlap works, changed: ranks.")).to_be_visible(timeout=TIMEOUT)
    reload = button(page, "Load the preset again")
    expect(reload).to_be_visible()
    reload.click()
    expect(field(page, "Ranks")).to_have_value("8", timeout=TIMEOUT)
    assert_schedule(page, BucketConfig(), "after loading the preset again")
    expect(reload).to_be_hidden()


# --- 2: presets from the select ----------------------------------------------------

PRESET_REGIMES = {  # preset -> the regime the Regime readout names
    "Latency-bound": "latency-bound",
    "Link saturated": "link-saturated",
    "Traffic exceeds compute": "communication-bound",
    "Embedding layer": "overlap-limited",
    "Overlap works": "overlap-limited",
}


def test_preset_select_switches_regimes(shared: Page):
    for preset, regime in PRESET_REGIMES.items():
        config = PRESETS.load(preset)
        assert regime_of(config) == regime, (preset, regime_of(config))
        preset_select(shared).select_option(label=preset)
        expect(readout(shared, "Regime")).to_contain_text(regime, timeout=TIMEOUT)
        assert_schedule(shared, config, f"for the preset {preset}")
        assert_fields(shared, config)
        # The preset's own description is shown under the select.
        expect(shared.get_by_text(PRESET_DESCRIPTIONS[preset])).to_be_visible()


# --- 3: presets from the URL ------------------------------------------------------------


def test_url_preset_with_an_override(page: Page, server: str, ui):
    ui.open_widget(page, f"{server}{ROUTE}?preset=Latency-bound&ranks=4")
    config = PRESETS.load("Latency-bound", ranks=4)
    assert_fields(page, config)
    assert_schedule(page, config, "for ?preset=Latency-bound&ranks=4")
    # With 4 ranks each 1.5 ms transfer fits in the 2 ms between layers and no larger
    # bucket is faster: the tail is the last transfer, so the step is overlap-limited.
    assert regime_of(config) == "overlap-limited"
    expect(readout(page, "Regime")).to_contain_text("overlap-limited")
    expect(page.get_by_role("status", name="Notices", exact=True)).to_have_count(0)
    # The preset's name is kept, with what the link changed; the link says the same.
    expect(preset_select(page)).to_have_value("Latency-bound")
    expect(page.get_by_text("Latency-bound, changed: ranks.")).to_be_visible()
    expect(field(page, "Link to these settings")).to_have_value(
        re.compile(r"\?preset=Latency-bound&ranks=4$")
    )


def test_url_plain_key(page: Page, server: str, ui):
    ui.open_widget(page, f"{server}{ROUTE}?layers_per_bucket=12")
    config = BucketConfig(layers_per_bucket=12)
    expect(field(page, "Layers per bucket")).to_have_value("12")
    assert_schedule(page, config, "for ?layers_per_bucket=12")
    expect(readout(page, "Buckets")).to_have_text(starts("1"))
    expect(readout(page, "Overlap")).to_have_text(starts("0 %"))
    expect(page.get_by_role("status", name="Notices", exact=True)).to_have_count(0)


# --- 4: Play, Pause, Step --------------------------------------------------------------------


def test_play_pause_step(timeline: Page, ui):
    page = timeline
    config = BucketConfig()
    dt = step_size(config)
    assert dt == 1.0
    button(page, "Step").click()
    expect(readout(page, "Elapsed time")).to_have_text(starts("1.00 ms"), timeout=TIMEOUT)

    button(page, "Play").click()
    expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
    first = ui.wait_until(
        lambda: value_of(page, "Elapsed time") > 1.0 and value_of(page, "Elapsed time"), timeout=10
    )
    second = ui.wait_until(
        lambda: value_of(page, "Elapsed time") > first and value_of(page, "Elapsed time"),
        timeout=10,
    )

    button(page, "Pause").click()
    expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)
    # The server's paused value replaces the browser's animation; then nothing moves
    # over the page's own animation frames.
    frozen = ui.wait_until(
        lambda: holds_still(page, lambda: value_of(page, "Elapsed time")), timeout=10
    )
    assert frozen >= second

    button(page, "Step").click()
    # Within a rounding step of the two-decimal display.
    stepped = ui.wait_until(
        lambda: abs(value_of(page, "Elapsed time") - (frozen + dt)) <= 0.011, timeout=10
    )
    assert stepped, f"Step after pausing at {frozen} ms showed {value_of(page, 'Elapsed time')}"
    # Playing leaves the schedule alone.
    assert_schedule(page, config, "after playing")


# --- 5: bad input is refused where it is typed ------------------------------------------------

BAD_INPUTS = [  # label, what is typed, what the message says
    ("Layers per bucket", "0", "Layers per bucket must be 1 to 12"),
    ("Layers per bucket", "2.5", "must be a whole number"),
    ("Layers per bucket", "abc", "“abc” is not a number"),
    ("Backward time per layer", "0", "must be 0.01 to 1000"),
    ("Backward time per layer", "", "needs a number"),
    ("Gradient size per layer", "-5", "must be 0.001 to 100000"),
    ("Link bandwidth", "nan", "Enter a finite number"),
    ("Latency per ring step", "-1", "must be 0 to 100"),
    ("Ranks", "1", "Ranks must be 2 to 4096"),
    ("Ranks", "8.5", "must be a whole number"),
    ("Straggler slowdown", "600", "must be 0 to 500"),
]


@pytest.mark.parametrize(("label", "text", "message"), BAD_INPUTS)
def test_bad_input_shows_an_alert_and_keeps_the_readouts(
    shared: Page, label: str, text: str, message: str, server_log
):
    start = server_log.size()
    enter(shared, label, text)
    alert = shared.get_by_role("alert")
    expect(alert, f"no alert for {label} = {text!r}").to_have_count(1, timeout=TIMEOUT)
    expect(alert).to_contain_text(message, timeout=TIMEOUT)
    expect(alert).to_be_visible()
    assert_schedule(shared, BucketConfig(), f"after the refused {label} = {text!r}")

    enter(shared, label, plain_number(DEFAULTS[CONTROLS[label]]))
    expect(shared.get_by_role("alert")).to_have_count(0, timeout=TIMEOUT)
    assert_schedule(shared, BucketConfig(), f"after {label} back to a valid value")
    server_log.assert_no_traceback(since=start)


# --- 6: keyboard only --------------------------------------------------------------------------


def test_keyboard_only(timeline: Page, ui):
    page = timeline
    ui.wait_until(lambda: ui.focused(page) is None or ui.focused(page)["tag"] == "body")
    ui.tab_to(page, "Layers per bucket", "input")
    page.keyboard.press("Control+A")
    page.keyboard.type("1")
    page.keyboard.press("Enter")
    config = BucketConfig(layers_per_bucket=1)
    expect(readout(page, "Buckets")).to_have_text(starts("12"), timeout=TIMEOUT)
    assert_schedule(page, config, "after typing Layers per bucket 1")

    dt = step_size(config)
    ui.tab_to(page, "Step", "button", backwards=True)
    page.keyboard.press("Space")
    expect(readout(page, "Elapsed time")).to_have_text(starts(MILLISECONDS(dt)), timeout=TIMEOUT)
    assert (ui.focused(page) or {}).get("name") == "Step", ui.focused(page)
    page.keyboard.press("Enter")
    expect(readout(page, "Elapsed time")).to_have_text(
        starts(MILLISECONDS(2 * dt)), timeout=TIMEOUT
    )


# --- 7: accessibility, locality, traffic -----------------------------------------------------


def test_axe_with_an_error_and_the_embed_panel_open(timeline: Page, ui):
    page = timeline
    ui.assert_no_serious_axe_violations(page)
    enter(page, "Ranks", "1")
    expect(page.get_by_role("alert")).to_be_visible(timeout=TIMEOUT)
    button(page, "Embed").click()
    expect(page.get_by_label("Iframe snippet", exact=True)).to_be_visible(timeout=TIMEOUT)
    button(page, "Step").click()
    expect(readout(page, "Elapsed time")).to_have_text(starts("1.00 ms"), timeout=TIMEOUT)
    ui.assert_no_serious_axe_violations(page)


# --- 8: the link to the queue lab keeps the server's prefix ----------------------------------


def test_the_queue_lab_link_keeps_the_servers_prefix(browser, ui):
    prefix = "/course"
    with ui.running_server("--prefix", prefix, probe=f"{prefix}/liveness") as server:
        context = browser.new_context()
        try:
            page = context.new_page()
            ui.open_widget(page, f"{server.url}{prefix}{ROUTE}")
            link = page.get_by_role("link", name=re.compile("^open the queue lab"))
            # Arrival 300 MB / 24 ms = 12.5; service 25 · 8 / (2 · 7) = 14.29 MB/ms.
            expect(link).to_have_attribute(
                "href",
                f"{server.url}{prefix}/queue-lab?arrival=12.5&service=14.29&initial=0",
                timeout=TIMEOUT,
            )
        finally:
            context.close()


# --- real scale: a hardware preset, the algorithm and accumulation (issue 35) ---------------


def test_hardware_preset_algorithm_and_accumulation(page: Page, server: str, ui):
    from urllib.parse import quote

    preset = "64 nodes, 400 Gb/s fabric"
    ui.open_widget(page, f"{server}{ROUTE}?preset={quote(preset)}&ranks=1024")
    config = PRESETS.load(preset, ranks=1024)
    assert_schedule(page, config, "for the 400 Gb/s fabric at 1024 ranks")
    # Where the preset's numbers come from, by the preset control.
    expect(
        page.get_by_text("Source: Line rate, not a measurement: one 400 Gb/s NIC")
    ).to_be_visible()
    # The algorithm is a labelled select; the tree takes the 316.40 ms ring tail to 1.41 ms.
    algorithm = page.get_by_role("combobox", name="All-reduce algorithm", exact=True)
    expect(algorithm).to_have_value("ring")
    expect(readout(page, "Exposed tail")).to_have_text(starts("316.40 ms"))
    algorithm.select_option(label="tree")
    assert_schedule(page, PRESETS.load(preset, ranks=1024, algorithm="tree"), "with the tree")
    expect(readout(page, "Exposed tail")).to_have_text(starts("1.41 ms"))
    expect(field(page, "Link to these settings")).to_have_value(re.compile(r"algorithm=tree"))
    # Four micro-batches: three no_sync backwards drawn, one reduction.
    enter(page, "Accumulation steps", "4")
    assert_schedule(
        page,
        PRESETS.load(preset, ranks=1024, algorithm="tree", accumulation_steps=4),
        "with four micro-batches",
    )
    expect(
        page.get_by_text("A micro-batch's backward under no_sync(): nothing reduced")
    ).to_be_visible()
    enter(page, "Accumulation steps", "65")
    expect(page.get_by_role("alert").first).to_contain_text("1 to 64")
    ui.assert_no_serious_axe_violations(page)
