"""Reading an upload: one overlap-lab trace, or torch.profiler files (one per rank), as data.

Files are size-limited as sent and once unpacked (a gzip bomb stops one byte past
the limit), recognised by their top-level keys, and parsed, never executed.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from . import FORMAT, MAX_TRACE_BYTES, Trace, TraceError, from_document, parse_trace
from .profiler import import_profiles
from .profiler_convert import to_trace_document
from .profiler_read import GZIP_MAGIC, unpacked_pieces

MIB = 1024 * 1024
#: The files of one upload together, as sent (gzipped or not). The page sends them in
#: base64 (4 characters for 3 bytes) in one websocket message, and Bokeh's server takes
#: messages of at most 20 MiB (its default ``websocket_max_message_size``): 12 MiB of
#: files make a 16 MiB message. Measured in Chromium through ``overlap-lab serve``
#: (the page's own limit lifted): 14.9 MiB of files (20,831,712 characters of base64)
#: arrive; 15.0 MiB (20,971,520 characters, Bokeh's 20 MiB before its envelope) close
#: the page's connection, so the page refuses an upload over this limit before sending.
#: Larger profiles import with ``overlap-lab import``, whose trace is small.
MAX_UPLOAD_BYTES = 12 * MIB
#: The files of one upload together once unpacked (gunzipped): reading profiles takes
#: about 2.5 s of one server core for 64 MiB (measured: a 64 MiB profile, 2.1 s as
#: JSON and 2.6 s gzipped), so a gzip bomb, or a very large profile, stops here.
MAX_UNPACKED_BYTES = 64 * MIB
MAX_UPLOAD_FILES = 32  # one profiler file per rank
NAME_CHARS = 80
SNIFF_BYTES = 256 * 1024  # the top of a file, where a trace or a profile says which it is


@dataclass(frozen=True, eq=False)
class Upload:
    """What an upload gave: the trace to show, what it was made from, and the import's notes."""

    trace: Trace
    kind: str  # "trace" (an overlap-lab trace file) or "profile" (torch.profiler files)
    files: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _gunzip(data: bytes, name: str, budget: int) -> bytes:
    """The file's bytes, gunzipped (recognised by the magic bytes) to at most ``budget``.

    Damaged, cut-short and several-member gzip are refused as a profile file's are
    (``profiler_read.unpacked_pieces``, in bounded pieces: a bomb stops near the budget).
    """
    limit = f"the {MAX_UNPACKED_BYTES // MIB} MiB limit of one upload once unpacked"
    if not data.startswith(GZIP_MAGIC):
        if len(data) > budget:
            raise TraceError(f"{name}: with the files before it, more than {limit}")
        return data
    out = bytearray()
    for piece in unpacked_pieces(io.BytesIO(data), name, len(data)):
        out += piece
        if len(out) > budget:
            raise TraceError(
                f"{name}: unpacks to more than {limit} (refused before unpacking further)"
            )
    if out.startswith(GZIP_MAGIC):
        raise TraceError(f"{name}: gzipped twice; unpack it once")
    return bytes(out)


def _blank(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def file_kind(data: bytes) -> str:
    """``"trace"``, ``"profile"``, ``"foreign"`` (JSON, neither) or ``"unknown"`` (can't tell).

    Reads the top-level keys at the start of the (unpacked) file as JSON data: an
    overlap-lab trace says ``"format": "overlap-lab-trace"`` (its first key, as written),
    a profile has ``traceEvents`` (after a few small keys). Nothing is evaluated.
    """
    text = data[:SNIFF_BYTES].decode("utf-8", errors="replace")
    whole = len(data) <= SNIFF_BYTES
    decoder = json.JSONDecoder()
    pos = _blank(text, 0)
    if not text.startswith("{", pos):
        return "unknown"
    pos = _blank(text, pos + 1)
    while pos < len(text):
        if text[pos] == "}":
            return "foreign" if whole else "unknown"
        try:
            key, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return "unknown"
        if key == "traceEvents":
            return "profile"
        pos = _blank(text, pos)
        if not isinstance(key, str) or not text.startswith(":", pos):
            return "unknown"
        try:
            value, pos = decoder.raw_decode(text, _blank(text, pos + 1))
        except (ValueError, RecursionError):
            return "unknown"
        if key == "format" and value == FORMAT:
            return "trace"
        pos = _blank(text, pos)
        if text.startswith(",", pos):
            pos = _blank(text, pos + 1)
        elif not text.startswith("}", pos):
            return "unknown"
    return "unknown"


def _label(names: Sequence[str]) -> str:
    label = " + ".join(names)
    if len(label) > NAME_CHARS and len(names) > 1:
        label = f"{names[0][: NAME_CHARS - 20]} + {len(names) - 1} more files"
    return label[:NAME_CHARS]


def load_upload_files(files: Sequence[tuple[str, bytes]]) -> Upload:
    """An upload's files (name, bytes) as a trace: one overlap-lab trace, or profiles.

    Within ``MAX_UPLOAD_FILES``, ``MAX_UPLOAD_BYTES`` as sent and
    ``MAX_UNPACKED_BYTES`` once unpacked, every file together. One trace file
    (``.json``, or gzipped) is parsed and validated; profiler files, one per rank,
    gzipped or not, are read as data (``profiler_read``), imported
    (``import_profiles``) and made a trace (``to_trace_document``). Raises
    ``TraceError`` (a ``ValueError``) with a message that names the file and what
    is wrong: too large, damaged or cut short, not JSON, JSON that is neither a
    trace nor a profile, a profile without ``ProfilerStep#N`` or collectives.
    """
    files = [(str(name)[:NAME_CHARS] or "upload.json", bytes(data)) for name, data in files]
    if not files:
        raise TraceError("no file was chosen")
    if len(files) > MAX_UPLOAD_FILES:
        raise TraceError(
            f"{len(files)} files; an upload takes at most {MAX_UPLOAD_FILES} (one per rank)"
        )
    total = sum(len(data) for _, data in files)
    if total > MAX_UPLOAD_BYTES:
        what = files[0][0] if len(files) == 1 else f"{len(files)} files"
        raise TraceError(
            f"{what}: {total:,} bytes is more than the {MAX_UPLOAD_BYTES:,}-byte limit "
            f"({MAX_UPLOAD_BYTES // MIB} MiB) of an upload here; import larger profiles with "
            "`overlap-lab import` and upload the trace it writes"
        )
    budget = MAX_UNPACKED_BYTES
    unpacked = []
    for name, data in files:
        if not data:
            raise TraceError(f"{name} is empty (0 bytes)")
        plain = _gunzip(data, name, budget)
        budget -= len(plain)
        unpacked.append((name, plain))
    names = [name for name, _ in unpacked]
    kinds = [file_kind(plain) for _, plain in unpacked]
    for (name, _), kind in zip(unpacked, kinds, strict=True):
        if kind == "foreign":
            raise TraceError(
                f'{name}: JSON, but neither an overlap-lab trace (it has no "format": '
                f'"{FORMAT}") nor a torch.profiler trace (no "traceEvents")'
            )
    if len(unpacked) == 1:
        name, plain = unpacked[0]
        if kinds[0] == "unknown" and b'"traceEvents"' not in plain:
            if len(plain) > MAX_TRACE_BYTES:
                raise TraceError(
                    f"{name}: {len(plain):,} bytes is more than the {MAX_TRACE_BYTES:,}-byte "
                    "limit of a trace file, and it is not a torch.profiler trace (no "
                    '"traceEvents")'
                )
            kinds[0] = "trace"  # parsing it as a trace says what is wrong with it
        if kinds[0] == "trace":
            return Upload(parse_trace(plain, name=name), "trace", (name,))
    elif "trace" in kinds:
        name = names[kinds.index("trace")]
        raise TraceError(
            f"{name} is an overlap-lab trace: upload it alone (profiler files, one per rank, "
            "go together)"
        )
    profile = import_profiles(
        [plain for _, plain in unpacked],
        names=names,
        max_bytes=MAX_UNPACKED_BYTES,
        max_uncompressed=MAX_UNPACKED_BYTES,
    )
    document = to_trace_document(profile)
    return Upload(from_document(document, _label(names)), "profile", tuple(names), profile.notes)
