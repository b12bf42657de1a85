"""Fixtures the widget tests share."""

from __future__ import annotations

import pytest
from drive import FakeWall, on_fake_wall


@pytest.fixture
def wall(lab) -> FakeWall:
    """The wall clock of the test file's ``lab``, moved only when the test says."""
    return on_fake_wall(lab)
