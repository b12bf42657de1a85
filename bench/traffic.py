"""Bokeh protocol messages on a page's websockets, counted in both directions.

Playwright reports websocket frames; Bokeh sends each protocol message as a
header frame followed by its metadata, content and buffer frames, so frames are
grouped into messages at each header.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page, WebSocket

QUIET_MS = 500  # an edit is over once nothing arrived for this long
QUIET_LIMIT_MS = 5_000  # ...or after this long, whatever happens


@dataclass
class Message:
    """One Bokeh protocol message: a header frame and the frames after it."""

    msgtype: str
    frames: int = 0
    size: int = 0
    content: str = ""  # the start of the content frame (the third), for the record


def _header_type(payload) -> str | None:
    """The msgtype when ``payload`` is a Bokeh message header frame."""
    if not isinstance(payload, str) or len(payload) > 2000 or '"msgtype"' not in payload:
        return None
    try:
        header = json.loads(payload)
    except ValueError:
        return None
    if isinstance(header, dict) and "msgid" in header and "msgtype" in header:
        return str(header["msgtype"])
    return None


@dataclass
class Direction:
    """Frames, bytes and messages that went one way."""

    frames: int = 0
    size: int = 0
    messages: list[Message] = field(default_factory=list)

    def add(self, payload: str | bytes) -> None:
        """Count one frame, starting a new message at a header frame."""
        size = len(payload.encode("utf-8")) if isinstance(payload, str) else len(payload)
        self.frames += 1
        self.size += size
        kind = _header_type(payload)
        if kind is not None or not self.messages:
            self.messages.append(Message(kind or "?"))
        message = self.messages[-1]
        message.frames += 1
        message.size += size
        if message.frames == 3 and isinstance(payload, str):
            message.content = payload[:200]


class Traffic:
    """Frames and messages on every websocket a page opens (attach before navigating)."""

    def __init__(self, page: Page):
        self.sent = Direction()
        self.received = Direction()
        self.last_received = time.monotonic()
        page.on("websocket", self._watch)

    def _watch(self, ws: WebSocket) -> None:
        ws.on("framesent", self._sent)
        ws.on("framereceived", self._received)

    def _sent(self, payload: str | bytes) -> None:
        self.sent.add(payload)

    def _received(self, payload: str | bytes) -> None:
        self.received.add(payload)
        self.last_received = time.monotonic()

    def reset(self) -> None:
        """Start counting afresh (the previous directions stay as they were)."""
        self.sent = Direction()
        self.received = Direction()


def wait_quiet(page: Page, traffic: Traffic, limit_ms: int = QUIET_LIMIT_MS) -> None:
    """Wait until nothing has arrived for QUIET_MS (at most ``limit_ms``)."""
    deadline = time.monotonic() + limit_ms / 1000
    while time.monotonic() < deadline:
        page.wait_for_timeout(100)
        if time.monotonic() - traffic.last_received >= QUIET_MS / 1000:
            return
