"""A trace upload without a browser: the ``/trace`` page's upload message over its websocket.

The page's upload control sends one Bokeh ``MessageSent`` event carrying
``{"upload_files": [{"name", "size", "base64"}, ...]}`` (``trace_upload.js``,
``model.send_msg``); the server answers by changing the widget's ``upload``
property (its message at the control). :class:`TracePage` does the same with
Bokeh's wire protocol (:mod:`bench.loadclient`), so a test or a benchmark can
send many uploads from many sessions at once and read each answer.

Also here: :func:`rss_bytes` (a process's resident size from ``/proc``) and
the two heavy profiles the memory measurements send.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

from bench.loadclient import PageLoad, _message, _read_message, _send, load_page

#: Words that start the server's final answer to an upload (anything else is a progress note).
FINAL = ("Not loaded", "Showing your upload")
#: What one line of :func:`oversize_gzip` takes gzipped (96 random bytes as hex, 900 spaces).
LINE_PACKED_BYTES = 122


def rss_bytes(pid: int) -> int:
    """The resident set size of process ``pid`` now, from ``/proc/<pid>/status`` (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def _plain(value):
    """A value as Bokeh serialized it, with its ``{"type": "map"}`` wrappers undone."""
    if isinstance(value, dict):
        if value.get("type") == "map":
            return {k: _plain(v) for k, v in value.get("entries", [])}
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _map(entries: dict) -> dict:
    """A plain object as Bokeh's browser serializer sends it."""
    return {"type": "map", "entries": [[k, v] for k, v in entries.items()]}


@dataclass
class TracePage:
    """One open ``/trace`` session: its websocket and the id of the widget's model."""

    page: PageLoad
    component_id: str

    @classmethod
    async def open(cls, base: str) -> TracePage:
        """GET ``/trace``, open its websocket and pull the document (the browser's patches too)."""
        page = await load_page(base, "/trace")
        if not page.ok:
            raise RuntimeError(page.error)
        if page.drain is not None:  # this client reads the answers itself
            page.drain.cancel()
            page.drain = None
        (component,) = page.models["ReactiveESM"]
        return cls(page, component["id"])

    async def send(self, files: list[tuple[str, bytes]]) -> None:
        """Send ``files`` as the upload control does: one message, the bytes in base64."""
        sent = [
            _map({"name": name, "size": len(data), "base64": base64.b64encode(data).decode()})
            for name, data in files
        ]
        await self.send_message(_map({"upload_files": sent}))

    async def send_message(self, data: dict) -> None:
        """Send one message of the page's (``model.send_msg(data)``), ``data`` as serialized."""
        values = _map({"model": {"id": self.component_id}, "data": data})
        event = {"type": "event", "name": "data_event", "values": values}
        patch = {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": event}
        await _send(self.page.ws, _message("PATCH-DOC", {"events": [patch]}))

    async def note(self, timeout: float = 300.0) -> str:
        """The next message at the upload control: a progress note, its error or its status."""
        while True:
            header, content = await asyncio.wait_for(_read_message(self.page.ws), timeout)
            if header.get("msgtype") != "PATCH-DOC":
                continue
            for event in json.loads(content).get("events", []):
                if event.get("attr") == "upload":
                    upload = _plain(event.get("new"))
                    return upload.get("error") or upload.get("status") or ""

    async def answer(self, timeout: float = 300.0) -> str:
        """The next final message at the upload control (its error, or its status)."""
        while True:
            text = await self.note(timeout)
            if text.startswith(FINAL):
                return text

    async def upload(self, files: list[tuple[str, bytes]], timeout: float = 300.0) -> str:
        """Send ``files`` and return the server's final answer."""
        await self.send(files)
        return await self.answer(timeout)

    def close(self) -> None:
        """Close the websocket (the server reaps the session after its unused lifetime)."""
        if self.page.ws is not None:
            self.page.ws.close()


def heavy_profile(directory: Path, unpacked_mib: int, name: str, seed: int = 0) -> Path:
    """A GPU-shaped torch.profiler file of about ``unpacked_mib`` MiB, gzipped (cached by name)."""
    from bench.profile_import import write_profile

    packed = directory / f"{name}.json.gz"
    if packed.exists():
        return packed
    plain = directory / f"{name}.json"
    write_profile(plain, unpacked_mib * 2**20, seed=seed)
    with plain.open("rb") as src, gzip.open(packed, "wb", compresslevel=6) as out:
        while chunk := src.read(2**20):
            out.write(chunk)
    plain.unlink()
    return packed


def oversize_gzip(directory: Path, packed_mib: float = 11.5, seed: int = 34) -> Path:
    """A gzipped "profile" of about ``packed_mib`` MiB that unpacks far past the 64 MiB limit.

    The start of a profile, then lines of random hex digits and many spaces, so
    that 12 MiB of gzip unpack to some 120 MiB: read up to the limit, then
    refused (what a learner's too-large profile, or a deliberate one, does).
    """
    path = directory / f"oversize-{packed_mib:g}.json.gz"
    if path.exists():
        return path
    rng = random.Random(seed)
    lines = int(packed_mib * 2**20 / LINE_PACKED_BYTES)
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(b'{"schemaVersion": 1, "traceEvents": [\n')
        for _ in range(lines):
            noise = rng.randbytes(96).hex().encode()
            out.write(b'{"name": "' + noise + b'"' + b" " * 900 + b"},\n")
    return path
