"""The class histogram's count gridlines: a 1-2-5 step, at most five of them, in Chromium."""

from __future__ import annotations

import math
import re
from pathlib import Path

from playwright.sync_api import Page

SOURCE = Path(__file__).resolve().parents[2] / "app" / "classroom" / "js" / "class_histogram.js"


def count_step_js() -> str:
    """``countStep`` from the histogram's module, as a plain script."""
    text = SOURCE.read_text(encoding="utf-8")
    found = re.search(r"export function countStep\(most\) \{.*?\n\}\n", text, re.S)
    assert found, "class_histogram.js has no countStep"
    return found.group(0).replace("export ", "")


def nice_steps() -> list[int]:
    """1, 2, 5, 10, 20, 50, ... (independent of the code under test)."""
    return [m * 10**k for k in range(5) for m in (1, 2, 5)]


def test_the_count_step_is_the_smallest_nice_step_with_at_most_five_gridlines(
    page: Page,
) -> None:
    page.set_content("<html><body></body></html>")
    page.add_script_tag(content=count_step_js())
    mosts = list(range(1, 3001))
    got = page.evaluate("ms => ms.map(countStep)", mosts)
    # By hand: 14 votes in the fullest bin → 0, 5, 10, 15; 6 → 0, 2, 4, 6; 1000 → steps of 200.
    assert dict(zip(mosts, got, strict=True))[14] == 5
    assert dict(zip(mosts, got, strict=True))[6] == 2
    assert dict(zip(mosts, got, strict=True))[1000] == 200
    assert got[:5] == [1, 1, 1, 1, 1]
    for most, step in zip(mosts, got, strict=True):
        assert step in nice_steps(), (most, step)
        assert math.ceil(most / step) <= 5, (most, step)
        smaller = [s for s in nice_steps() if s < step]
        assert not smaller or math.ceil(most / smaller[-1]) > 5, (most, step)
