"""A learner's page load without a browser: the HTTP GET, then the session's websocket.

What the server does for one learner is: build the session on the GET, send the
document when the page's websocket asks for it (``PULL-DOC-REQ``), then apply
the patches the browser sends once it has rendered (the figures' sizes, the
page's query string on the Location model, the browser's properties on the
BrowserInfo model). :func:`load_page` does exactly that with Bokeh's wire
protocol over Tornado's own HTTP and websocket clients, so a benchmark can
open hundreds of sessions at once and measure the server, not a browser.
``edit`` then changes one control, the way typing into it does.

The patches replayed are the ones Chromium sends on load (see
``bench/README.md``); the model ids come from the document the server sent.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

_TOKEN = re.compile(r'"token":\s*"([^"]+)"')
#: What Chromium reports on BrowserInfo right after load (one PATCH-DOC each).
BROWSER_INFO = {
    "dark_mode": False,
    "device_pixel_ratio": 1,
    "language": "en-US",
    "webdriver": False,
    "timezone": "UTC",
    "timezone_offset": 0,
    "webgl": True,
}
#: Figure sizes a 1280-wide viewport reports (one PATCH-DOC per figure).
FIGURE_SIZE = {"inner_width": 839, "inner_height": 258, "outer_width": 888, "outer_height": 330}


def configure_client(max_clients: int = 2000) -> None:
    """Let Tornado's HTTP client run this many requests at once (its default is 10)."""
    AsyncHTTPClient.configure(None, max_clients=max_clients)


@dataclass
class PageLoad:
    """The timings of one learner's page load, in seconds from the start of its GET."""

    route: str
    #: The first bytes of the page: what a browser can show (the loading notice).
    first_byte: float = float("nan")
    html: float = float("nan")
    document: float = float("nan")
    replayed: float = float("nan")
    error: str | None = None
    doc_bytes: int = 0
    ws: WebSocketClientConnection | None = field(default=None, repr=False)
    drain: asyncio.Future | None = field(default=None, repr=False)
    models: dict = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None


def _objects(node) -> Iterator[dict]:
    """Every serialized Bokeh model in a document's JSON, depth first."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "object" and "id" in item and "name" in item:
                yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _message(msgtype: str, content: dict) -> list[str]:
    header = {"msgid": uuid.uuid4().hex.upper(), "msgtype": msgtype}
    return [json.dumps(header), "{}", json.dumps(content)]


def _patch(events: list[dict]) -> list[str]:
    return _message("PATCH-DOC", {"events": events})


def _changed(model_id: str, attr: str, new) -> dict:
    return {"kind": "ModelChanged", "model": {"id": model_id}, "attr": attr, "new": new}


async def _send(ws: WebSocketClientConnection, frames: list[str]) -> None:
    for frame in frames:
        await ws.write_message(frame)


async def _read_message(ws: WebSocketClientConnection) -> tuple[dict, str]:
    """One protocol message: its header and its content (buffers read and dropped)."""
    header_text = await ws.read_message()
    if header_text is None:
        raise ConnectionError("the websocket closed")
    header = json.loads(header_text)
    await ws.read_message()  # metadata
    content = await ws.read_message()
    for _ in range(2 * int(header.get("num_buffers", 0))):
        await ws.read_message()
    return header, content if isinstance(content, str) else content.decode()


async def _drain(ws: WebSocketClientConnection) -> None:
    """Read (and drop) whatever the server sends until the socket closes."""
    try:
        while await ws.read_message() is not None:
            pass
    except Exception:
        pass


def served_as_file(route: str) -> bool:
    """A widget's or lesson's route, which the server sends as a file first."""
    from widgets.registry import WIDGETS

    name = route.strip("/")
    return name in WIDGETS or name.startswith("lessons/")


async def load_page(
    base: str, route: str, query: str = "", timeout: float = 300.0, replay: bool = True
) -> PageLoad:
    """GET ``base + route``, open its websocket, pull the document, replay the browser's patches.

    Returns with the websocket still open (``PageLoad.ws``); close it with
    :func:`close`. Errors are recorded on the result, not raised.
    """
    result = PageLoad(route)
    start = time.monotonic()
    url = f"{base}{route}{'?' + query if query else ''}"
    if served_as_file(route):
        # A widget or lesson page is sent as a file, with no session; its Bokeh session
        # is what a script-tag embed opens (autoload.js), with the same settings.
        embed = f"bokeh-autoload-element=p1&bokeh-app-path={route}&bokeh-absolute-url={base}{route}"
        url = f"{base}{route}/autoload.js?{embed}{'&' + query if query else ''}"
    try:
        chunks: list[bytes] = []

        def on_chunk(data: bytes) -> None:
            if not chunks:
                result.first_byte = time.monotonic() - start
            chunks.append(data)

        response = await AsyncHTTPClient().fetch(
            HTTPRequest(
                url,
                request_timeout=timeout,
                connect_timeout=timeout,
                streaming_callback=on_chunk,
            )
        )
        result.html = time.monotonic() - start
        match = _TOKEN.search(b"".join(chunks).decode("utf-8", "replace"))
        if match is None:
            raise RuntimeError("no session token in the page")
        parts = urlsplit(url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        path = parts.path.removesuffix("/autoload.js").rstrip("/")
        ws_url = f"{scheme}://{parts.netloc}{path}/ws"
        cookies = response.headers.get_list("Set-Cookie")
        headers = {"Origin": f"{parts.scheme}://{parts.netloc}"}
        if cookies:
            headers["Cookie"] = "; ".join(c.split(";", 1)[0] for c in cookies)
        ws = await websocket_connect(
            HTTPRequest(ws_url, headers=headers, request_timeout=timeout, connect_timeout=timeout),
            subprotocols=["bokeh", match.group(1)],
            max_message_size=64 * 1024 * 1024,
        )
        result.ws = ws
        header, _ = await asyncio.wait_for(_read_message(ws), timeout)
        if header.get("msgtype") != "ACK":
            raise RuntimeError(f"expected ACK, got {header.get('msgtype')}")
        await _send(ws, _message("PULL-DOC-REQ", {}))
        while True:
            header, content = await asyncio.wait_for(_read_message(ws), timeout)
            if header.get("msgtype") == "PULL-DOC-REPLY":
                break
        result.document = time.monotonic() - start
        result.doc_bytes = len(content)
        doc = json.loads(content)["doc"]
        for obj in _objects(doc):
            result.models.setdefault(obj["name"].rsplit(".", 1)[-1], []).append(obj)
        if replay:
            await _replay(ws, result, query)
        result.replayed = time.monotonic() - start
        result.drain = asyncio.ensure_future(_drain(ws))
    except Exception as exc:  # recorded, so one failed learner does not stop the class
        result.error = f"{type(exc).__name__}: {exc}"
    return result


async def _replay(ws: WebSocketClientConnection, page: PageLoad, query: str) -> None:
    """The patches a browser sends once the page has rendered (and its ready event)."""
    ready = {"type": "event", "name": "document_ready", "values": {"type": "map"}}
    await _send(ws, _patch([{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": ready}]))
    for fig in page.models.get("Figure", []):
        await _send(ws, _patch([_changed(fig["id"], k, v) for k, v in FIGURE_SIZE.items()]))
    for loc in page.models.get("Location", []):
        await _send(ws, _patch([_changed(loc["id"], "search", f"?{query}" if query else "")]))
    for info in page.models.get("BrowserInfo", []):
        for key, value in BROWSER_INFO.items():
            await _send(ws, _patch([_changed(info["id"], key, value)]))


def find_input(page: PageLoad, label: str) -> str | None:
    """The id of the text input or slider titled ``label`` in the page's document."""
    for kind in ("TextInput", "Slider"):
        for obj in page.models.get(kind, []):
            if obj.get("attributes", {}).get("title") == label:
                return obj["id"]
    return None


def find_field(page: PageLoad, label: str) -> tuple[str, str] | None:
    """A browser-drawn widget's field labelled ``label``: (component id, field name)."""
    data_owner = {}
    for objs in page.models.values():
        for obj in objs:
            ref = obj.get("attributes", {}).get("data")
            if isinstance(ref, dict) and "id" in ref:
                data_owner[ref["id"]] = obj["id"]
    for objs in page.models.values():
        for obj in objs:
            for spec in obj.get("attributes", {}).get("fields") or []:
                if isinstance(spec, dict) and spec.get("type") == "map":
                    spec = dict(spec["entries"])  # Bokeh's wire form of a dict
                if isinstance(spec, dict) and spec.get("label") == label:
                    owner = data_owner.get(obj["id"])
                    if owner is not None:
                        return owner, spec["name"]
    return None


def _data_event(model_id: str, data: dict) -> dict:
    """What a component's ``model.send_msg(data)`` sends (a Panel data event)."""
    entries = [[k, v] for k, v in data.items()]
    values = {
        "type": "map",
        "entries": [["model", {"id": model_id}], ["data", {"type": "map", "entries": entries}]],
    }
    return {
        "kind": "MessageSent",
        "msg_type": "bokeh_event",
        "msg_data": {"type": "event", "name": "data_event", "values": values},
    }


async def edit(page: PageLoad, label: str, value) -> bool:
    """Set the control titled ``label`` to ``value`` as a committed edit; False if not found."""
    if page.ws is None:
        return False
    component = find_field(page, label)
    if component is not None:
        model_id, name = component
        text = value if isinstance(value, str) else f"{value:g}"
        await _send(page.ws, _patch([_data_event(model_id, {"edit": name, "text": text})]))
        return True
    model = find_input(page, label)
    if model is None:
        return False
    events = [_changed(model, "value", value)]
    if isinstance(value, str):
        events.insert(0, _changed(model, "value_input", value))
    await _send(page.ws, _patch(events))
    return True


def close(page: PageLoad) -> None:
    """Close the page's websocket (the learner closed the tab)."""
    if page.ws is not None:
        page.ws.close()
        page.ws = None
