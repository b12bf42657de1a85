"""The class's routes, for the server's ``extra_patterns``."""

from __future__ import annotations

from .handlers import (
    EntryPage,
    JoinForm,
    LearnerPage,
    RoundAsset,
    RoundFile,
    StartClass,
    TeachAction,
    TeachPage,
    Vote,
)
from .service import ClassService
from .streams import LearnerEvents, TeachStream


def class_patterns(service: ClassService) -> list[tuple]:
    """Tornado routes of the class (before Bokeh's own), for ``extra_patterns``."""
    from .logs import install_redaction

    install_redaction()
    args = {"service": service}
    code = r"([A-Za-z0-9\-]{1,40})"
    return [
        (r"/class/?", EntryPage, args),
        (r"/class/join", JoinForm, args),
        (r"/class/start", StartClass, args),
        (r"/class/teach", TeachPage, args),
        (r"/class/api/teach/stream", TeachStream, args),
        (r"/class/api/teach/(\w{1,20})", TeachAction, args),
        (r"/class/assets/([\w.-]{1,80}\.js)", RoundAsset),
        (rf"/class/{code}/events", LearnerEvents, args),
        (rf"/class/{code}/round/(\d{{1,6}})/([0-9a-f]{{16}})", RoundFile, args),
        (rf"/class/{code}/vote", Vote, args),
        (rf"/class/{code}/?", LearnerPage, args),
    ]
