"""Join codes and class addresses never reach a log.

Tornado logs each request's path (``200 GET /class/ACD349 (127.0.0.1)``) and
Bokeh the address of a session. Every log record is made by a factory that
masks whatever follows ``/class/`` in a path and the ``room=`` of a class
widget's address before anything formats or writes it.
"""

from __future__ import annotations

import logging
import re

_CLASS_PATH = re.compile(r"(/class/)[^\s'\"?)]+")
_ROOM_ARG = re.compile(r"([?&](?:room|code)=)[^\s&'\")]+", re.IGNORECASE)
_installed = False


def redact(text: str) -> str:
    """``text`` with class paths and room or code arguments masked."""
    return _ROOM_ARG.sub(r"\1…", _CLASS_PATH.sub(r"\1…", text))


def install_redaction() -> None:
    """Mask class addresses in every log record from now on (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args, **kwargs) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is left for logging itself to report
            return record
        if "/class" in message or "room=" in message or "code=" in message:
            record.msg, record.args = redact(message), ()
        return record

    logging.setLogRecordFactory(factory)
