"""Driving the class's pages in Chromium: the instructor's and a learner's."""

from __future__ import annotations

import re

SHOTS_ENV = "OVERLAP_LAB_CLASS_SHOTS"


def start_class(page, base: str) -> tuple[str, str]:
    """Start a class from ``/class``; the join code and the instructor's address."""
    page.goto(f"{base}/class")
    page.get_by_role("button", name="Start a class").click()
    page.wait_for_url(re.compile(r".*/class/teach#code=.*"))
    page.locator("#qr svg").wait_for()
    code = page.locator("#code").text_content().replace(" ", "")
    return code, page.url


def open_round(page, widget: str, settings: str, question: str, parameter: str = "") -> None:
    """Set up a round on the instructor's page and open voting."""
    page.get_by_label("Widget").select_option(label=widget)
    page.get_by_label("Settings").fill(settings)
    page.get_by_label("Question").select_option(label=question)
    if parameter:
        page.locator("#parameter").fill(parameter)
    page.get_by_role("button", name="Open voting").click()
    page.get_by_text("voting is open").wait_for()


def predict(page, text: str) -> str:
    """Type a prediction and Submit; the message shown at the field once answered."""
    field = page.get_by_label("Your prediction")
    field.fill(text)
    page.get_by_role("button", name="Submit").click()
    message = page.locator("#prediction-message")
    page.wait_for_function(
        "() => { const m = document.getElementById('prediction-message'); "
        "return m.textContent.startsWith('Stored') || m.className === 'cl-error'; }"
    )
    return message.text_content()


def shown(page, id_: str) -> str:
    return page.locator(f"#{id_}").text_content()
