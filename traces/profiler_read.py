"""Read a torch.profiler Chrome-trace file safely: size-limited, streamed, parsed as data only.

A profile (what ``export_chrome_trace`` or ``tensorboard_trace_handler`` writes,
``.json`` or ``.json.gz``) is one JSON object whose ``traceEvents`` list holds
every event. Files of real runs reach hundreds of MB, so the file is never held
whole: it is read in chunks, gunzipped as a stream (recognised by its magic
bytes, not its name) with a cap on the decompressed size, so a gzip bomb stops
at the cap; each event is decoded on its own by ``json``'s C scanner and handed
to the caller, who keeps only what it needs. ``NaN``, ``Infinity`` and integers
too long to be numbers are refused; nesting deeper than Python's recursion limit
is refused. Every failure is a ``ProfileError`` whose message says what is wrong
with the file, never a traceback.
"""

from __future__ import annotations

import codecs
import io
import json
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from .schema import TraceError

MAX_PROFILE_BYTES = 512 * 1024 * 1024  # on disk or uploaded (gzipped or not)
MAX_UNCOMPRESSED_BYTES = 1024 * 1024 * 1024  # after gunzip
MAX_EVENT_CHARS = 16 * 1024 * 1024  # one event; real ones are well under 10 kB
CHUNK_BYTES = 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"

_DECODER = json.JSONDecoder(parse_constant=lambda c: _refuse_constant(c))
_NUMBER_CHARS = "0123456789.eE+-"
_NOT_BLANK = re.compile(r"[^ \t\n\r]")


class ProfileError(TraceError):
    """A profiler file that can't be imported; the message says which file and what is wrong."""


def _refuse_constant(constant: str) -> None:
    raise ValueError(f"{constant} is not a number JSON allows")


def unpacked_pieces(stream: BinaryIO, name: str, max_bytes: int) -> Iterator[bytes]:
    """The file's bytes in chunks, gunzipped (in bounded pieces) when it starts with the magic."""
    first = stream.read(max(CHUNK_BYTES, len(GZIP_MAGIC)))
    inflate = zlib.decompressobj(wbits=31) if first.startswith(GZIP_MAGIC) else None
    read = 0
    block = first
    while block:
        read += len(block)
        if read > max_bytes:
            raise ProfileError(f"{name}: more than the {max_bytes}-byte limit for a profile file")
        if inflate is None:
            yield block
        else:
            tail = block
            while tail:
                try:
                    # max_length bounds each piece, so a bomb never inflates in one go.
                    yield inflate.decompress(tail, 4 * CHUNK_BYTES)
                except zlib.error as exc:
                    raise ProfileError(f"{name}: damaged gzip data ({exc})") from None
                tail = inflate.unconsumed_tail
            if inflate.eof and inflate.unused_data.strip(b"\0"):
                raise ProfileError(f"{name}: holds more than one gzip member; give one file a rank")
        block = stream.read(CHUNK_BYTES)
    if inflate is not None and not inflate.eof:
        raise ProfileError(f"{name}: the gzip data is cut short (truncated file)")


def _chunks(stream: BinaryIO, name: str, max_bytes: int, max_uncompressed: int) -> Iterator[str]:
    """Text chunks of the (unpacked) file, refused once past ``max_uncompressed`` bytes."""
    text = codecs.getincrementaldecoder("utf-8")()
    produced = 0
    for data in unpacked_pieces(stream, name, max_bytes):
        produced += len(data)
        if produced > max_uncompressed:
            raise ProfileError(
                f"{name}: unpacks to more than the {max_uncompressed}-byte limit "
                "(refused before unpacking further)"
            )
        try:
            yield text.decode(data)
        except UnicodeDecodeError:
            raise ProfileError(f"{name}: not UTF-8 text, so not a profiler trace") from None
    try:
        yield text.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ProfileError(f"{name}: not UTF-8 text (cut short in a character)") from None


class _Text:
    """A sliding window over the text chunks, with the decoding primitives the reader needs."""

    def __init__(self, chunks: Iterator[str], name: str) -> None:
        self.chunks = chunks
        self.name = name
        self.buf = ""
        self.pos = 0
        self.offset = 0  # characters dropped from the front of buf
        self.done = False

    def _more(self) -> bool:
        if self.done:
            return False
        for chunk in self.chunks:
            if self.pos > CHUNK_BYTES:
                self.offset += self.pos
                self.buf = self.buf[self.pos :]
                self.pos = 0
            self.buf += chunk
            return True
        self.done = True
        return False

    def peek(self) -> str:
        """The next non-blank character ('' at the end of the file)."""
        while True:
            found = _NOT_BLANK.search(self.buf, self.pos)
            if found is not None:
                self.pos = found.start()
                return self.buf[self.pos]
            self.pos = len(self.buf)
            if not self._more():
                return ""

    def expect(self, char: str, what: str) -> None:
        found = self.peek()
        if found != char:
            shown = repr(found) if found else "the end of the file"
            hint = " (the file is cut short)" if not found else ""
            raise ProfileError(
                f"{self.name}: not a profiler trace: expected {what} at character "
                f"{self.offset + self.pos}, found {shown}{hint}"
            )
        self.pos += 1

    def value(self) -> Any:
        """Decode the next JSON value, reading more text until it is complete."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if len(self.buf) - self.pos < MAX_EVENT_CHARS and self._more():
                    continue
                where = self.offset + exc.pos
                if len(self.buf) - self.pos >= MAX_EVENT_CHARS:
                    raise ProfileError(
                        f"{self.name}: a value longer than {MAX_EVENT_CHARS} characters at "
                        f"character {self.offset + self.pos}; not a profiler event"
                    ) from None
                raise ProfileError(
                    f"{self.name}: not valid JSON at character {where} ({exc.msg})"
                    + (" - the file is cut short" if self.done else "")
                ) from None
            except RecursionError:
                raise ProfileError(
                    f"{self.name}: nested too deeply to be a profiler trace"
                ) from None
            except ValueError as exc:  # NaN / Infinity, integers too long to convert
                raise ProfileError(f"{self.name}: {exc}") from None
            # A number that reaches the end of the buffer (or stops at what could
            # continue it, as "0." before the next chunk's "5") may go on in the next chunk.
            if (
                isinstance(value, int | float)
                and (end >= len(self.buf) or self.buf[end] in _NUMBER_CHARS)
                and self._more()
            ):
                continue
            self.pos = end
            return value


def read_events(
    source: str | Path | bytes,
    on_event: Callable[[dict[str, Any]], None],
    *,
    name: str | None = None,
    max_bytes: int = MAX_PROFILE_BYTES,
    max_uncompressed: int = MAX_UNCOMPRESSED_BYTES,
) -> dict[str, Any]:
    """Stream a profile's ``traceEvents`` to ``on_event``; return the other top-level keys.

    ``source`` is a path or the file's bytes (an upload). Raises ``ProfileError``
    for a file too big (packed or unpacked), damaged, cut short, not JSON, or
    JSON that is not a Chrome trace object with a ``traceEvents`` list of objects.
    """
    if isinstance(source, bytes):
        label = name or "profile"
        if len(source) > max_bytes:
            raise ProfileError(f"{label}: more than the {max_bytes}-byte limit for a profile file")
        return _read(io.BytesIO(source), label, on_event, max_bytes, max_uncompressed)
    path = Path(source)
    label = name or path.name
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ProfileError(
                f"{label}: {size} bytes is more than the {max_bytes}-byte limit for a profile file"
            )
        with path.open("rb") as stream:
            return _read(stream, label, on_event, max_bytes, max_uncompressed)
    except OSError as exc:
        raise ProfileError(f"{label}: cannot read ({exc.strerror})") from None


def _read(
    stream: BinaryIO,
    name: str,
    on_event: Callable[[dict[str, Any]], None],
    max_bytes: int,
    max_uncompressed: int,
) -> dict[str, Any]:
    text = _Text(_chunks(stream, name, max_bytes, max_uncompressed), name)
    first = text.peek()
    if first == "":
        raise ProfileError(f"{name}: the file is empty")
    if first == "[":
        # torch.autograd.profiler's EventList.export_chrome_trace (the profiler of a
        # PyTorch build without Kineto, or use_kineto=False) writes a bare list.
        raise ProfileError(
            f"{name}: a bare list of events, the legacy trace torch.autograd.profiler writes "
            "without Kineto; this import reads Kineto's traces (an object with "
            "'traceEvents', kernels with device times, distributedInfo): profile with "
            "torch.profiler on a PyTorch build with Kineto (torch.profiler.kineto_available())"
        )
    text.expect("{", "a JSON object")
    top: dict[str, Any] = {}
    seen_events = False
    if text.peek() == "}":
        text.pos += 1
    else:
        while True:
            key = text.value()
            if not isinstance(key, str):
                raise ProfileError(f"{name}: not valid JSON (an object key that is not a string)")
            text.expect(":", "':' after a key")
            if key == "traceEvents":
                seen_events = True
                _events(text, name, on_event)
            else:
                top[key] = text.value()
            sep = text.peek()
            if sep == ",":
                text.pos += 1
                continue
            text.expect("}", "',' or '}'")
            break
    if text.peek() != "":
        raise ProfileError(f"{name}: not valid JSON (text after the end of the object)")
    if not seen_events:
        raise ProfileError(
            f"{name}: JSON, but not a profiler trace (no 'traceEvents'; an overlap-lab trace "
            "is opened with summary or /trace, not imported)"
            if top.get("format") == "overlap-lab-trace"
            else f"{name}: JSON, but not a profiler trace (no 'traceEvents' list)"
        )
    return top


def _events(text: _Text, name: str, on_event: Callable[[dict[str, Any]], None]) -> None:
    if text.peek() != "[":
        raise ProfileError(f"{name}: 'traceEvents' is not a list, so not a profiler trace")
    text.pos += 1
    if text.peek() == "]":
        text.pos += 1
        return
    index = 0
    while True:
        event = text.value()
        if not isinstance(event, dict):
            raise ProfileError(
                f"{name}: traceEvents[{index}] is not an object, so not a profiler trace"
            )
        on_event(event)
        index += 1
        sep = text.peek()
        if sep == ",":
            text.pos += 1
            continue
        text.expect("]", "',' or ']' in traceEvents")
        return
