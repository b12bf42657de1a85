"""Every option of ``overlap-lab serve``, declared once.

The command line is made from these declarations (a flag per parameter, its
help from the doc), the server is started from them, and tests build them
directly: nothing else lists a serving option or its default.
"""

from __future__ import annotations

import argparse

import param

from lessons.course import CourseSource

#: The options that choose the course's lessons, shared by ``serve``, ``export`` and ``check``.
COURSE_OPTIONS = ("lessons", "no_builtin_lessons")
#: A closed page's session is destroyed this long after its websocket closed (ms).
UNUSED_SESSION_LIFETIME_MS = 15_000
#: How often the server looks for such sessions (ms).
CHECK_UNUSED_SESSIONS_MS = 5_000
#: How long a new page's session waits for its websocket before the lifetime applies (ms).
CONNECT_GRACE_MS = 300_000


class ServeOptions(param.Parameterized):
    """How one ``overlap-lab serve`` process serves the lessons and the widgets."""

    port = param.Integer(default=5006, bounds=(0, 65535), doc="port to listen on")
    address = param.String(default="localhost", doc="address to bind")
    allow_websocket_origin = param.List(
        default=[],
        item_type=str,
        doc="a host that may embed the widgets (repeatable), e.g. course.example.org",
        metadata={"metavar": "HOST[:PORT]"},
    )
    num_procs = param.Integer(
        default=1,
        bounds=(0, None),
        doc="worker processes sharing the port (0: one per core); a page's websocket may "
        "reach another process, which builds its session again, so for a class prefer one "
        "serve per core behind nginx (deploy/README.md)",
        metadata={"metavar": "N"},
    )
    prefix = param.String(
        default="",
        doc="serve every route under this path, e.g. /widgets behind a proxy (default: none)",
        metadata={"metavar": "PATH"},
    )
    trusted_proxy = param.List(
        default=[],
        item_type=str,
        doc="the address (or network) of a reverse proxy in front whose X-Real-IP, "
        "X-Forwarded-For and X-Forwarded-Proto are believed (repeatable); from any other "
        "peer they are ignored (default: none)",
        metadata={"metavar": "ADDRESS"},
    )
    unused_session_lifetime = param.Integer(
        default=UNUSED_SESSION_LIFETIME_MS,
        bounds=(1, None),
        doc="destroy a session this long after its page closed",
        metadata={"metavar": "MS"},
    )
    check_unused_sessions = param.Integer(
        default=CHECK_UNUSED_SESSIONS_MS,
        bounds=(1, None),
        doc="how often to look for closed sessions",
        metadata={"metavar": "MS"},
    )
    connect_grace = param.Integer(
        default=CONNECT_GRACE_MS,
        bounds=(0, None),
        doc="keep a new page's session this long for its websocket before the lifetime applies",
        metadata={"metavar": "MS"},
    )
    redis = param.String(
        default="",
        doc="keep classes (/class) in Redis at this URL, e.g. redis://127.0.0.1:6379/0, so "
        "that several backends serve one class (default: in this process)",
        metadata={"metavar": "URL"},
    )
    lessons = param.List(
        default=[],
        item_type=str,
        doc="a folder of a course's own Markdown lessons, served beside the product's (repeatable)",
        metadata={"metavar": "DIR"},
    )
    no_builtin_lessons = param.Boolean(
        default=False, doc="leave the product's own lessons out (serve only --lessons)"
    )
    show = param.Boolean(default=False, doc="open a browser on the index")

    @property
    def url_prefix(self) -> str:
        """``/widgets`` for ``--prefix widgets/``, else the empty string."""
        return "/" + self.prefix.strip("/") if self.prefix.strip("/") else ""

    @classmethod
    def add_arguments(
        cls, parser: argparse.ArgumentParser, only: tuple[str, ...] | None = None
    ) -> None:
        """A flag for every option (``--trusted-proxy``), with its default in the help.

        ``only`` names the options to add (another command sharing some of them).
        """
        for name, p in cls.param.objects("existing").items():
            if name == "name" or (only is not None and name not in only):
                continue
            flag = "--" + name.replace("_", "-")
            extra = p.metadata or {}
            if isinstance(p, param.Boolean):
                parser.add_argument(flag, action="store_true", help=p.doc)
            elif isinstance(p, param.List):
                parser.add_argument(
                    flag, action="append", default=[], help=p.doc, metavar=extra.get("metavar")
                )
            else:
                kind = int if isinstance(p, param.Integer) else str
                default = f" (default {p.default})" if p.default not in ("", None) else ""
                parser.add_argument(
                    flag,
                    type=kind,
                    default=p.default,
                    help=p.doc + default,
                    metavar=extra.get("metavar"),
                )
        if only is None or "trusted_proxy" in only:
            parser.add_argument(
                "--use-xheaders", nargs=0, action=_ReplacedByTrustedProxy, help=argparse.SUPPRESS
            )

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServeOptions:
        """The options a parsed command line gives (out-of-bounds values raise ValueError,
        as does a ``--trusted-proxy`` that is not an address or a network)."""
        from .trusted_proxy import trusted_networks

        names = [n for n in cls.param if n != "name"]
        options = cls(**{n: getattr(args, n) for n in names})
        trusted_networks(options.trusted_proxy)
        return options

    def course(self) -> CourseSource:
        """The lessons to serve: the product's (unless left out) and each ``--lessons`` folder.

        Raises ``lessons.LessonError`` naming a folder that holds no lessons.
        """
        return CourseSource.of(self.lessons, builtin=not self.no_builtin_lessons)


class _ReplacedByTrustedProxy(argparse.Action):
    """``--use-xheaders`` (earlier releases) believed forwarded headers from every peer.

    A start command that still says it stops with what to write instead, rather than
    argparse's bare "unrecognized arguments".
    """

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser.error(
            "--use-xheaders is replaced by --trusted-proxy ADDRESS: name the proxy whose "
            "X-Real-IP, X-Forwarded-For and X-Forwarded-Proto are believed "
            "(for nginx on this machine, --trusted-proxy 127.0.0.1)"
        )
