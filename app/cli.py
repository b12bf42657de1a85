"""``overlap-lab serve``: start Panel's server with every route; and the trace commands."""

from __future__ import annotations

import argparse
import logging

import panel as pn

from .serving import CHECK_UNUSED_SESSIONS_MS, CONNECT_GRACE_MS, UNUSED_SESSION_LIFETIME_MS
from .trace_commands import add_trace_commands, run_trace_command


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(prog="overlap-lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the index, the lessons and the widgets")
    serve.add_argument("--port", type=int, default=5006, help="port to listen on (default 5006)")
    serve.add_argument("--address", default="localhost", help="address to bind (default localhost)")
    serve.add_argument(
        "--allow-websocket-origin",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="a host that may embed the widgets (repeatable), e.g. course.example.org",
    )
    serve.add_argument(
        "--num-procs",
        type=int,
        default=1,
        metavar="N",
        help="worker processes sharing the port (0: one per core); a page's websocket "
        "may reach another process, which builds its session again, so for a class "
        "prefer one serve per core behind nginx (deploy/README.md)",
    )
    serve.add_argument(
        "--prefix",
        default="",
        metavar="PATH",
        help="serve every route under this path, e.g. /widgets behind a proxy (default: none)",
    )
    serve.add_argument(
        "--use-xheaders",
        action="store_true",
        help="trust X-Forwarded-For/-Proto and X-Real-Ip from a reverse proxy in front",
    )
    serve.add_argument(
        "--unused-session-lifetime",
        type=int,
        default=UNUSED_SESSION_LIFETIME_MS,
        metavar="MS",
        help="destroy a session this long after its page closed "
        f"(default {UNUSED_SESSION_LIFETIME_MS})",
    )
    serve.add_argument(
        "--check-unused-sessions",
        type=int,
        default=CHECK_UNUSED_SESSIONS_MS,
        metavar="MS",
        help=f"how often to look for closed sessions (default {CHECK_UNUSED_SESSIONS_MS})",
    )
    serve.add_argument(
        "--connect-grace",
        type=int,
        default=CONNECT_GRACE_MS,
        metavar="MS",
        help="keep a new page's session this long for its websocket before the lifetime "
        f"applies (default {CONNECT_GRACE_MS})",
    )
    serve.add_argument("--show", action="store_true", help="open a browser on the index")
    add_trace_commands(sub)
    return parser


def serve(port: int, address: str, origins: list[str], show: bool, num_procs: int = 1, **options):
    """Serve every route until interrupted (``options``: see :func:`app.serving.server_options`)."""
    from .routes import build_routes
    from .serving import configure_process, server_options, set_connect_grace, set_url_prefix, warm

    pn.extension(inline=False)
    configure_process()
    set_url_prefix(options.get("prefix", ""))
    set_connect_grace(options.pop("connect_grace", CONNECT_GRACE_MS))
    routes = build_routes()
    warm(routes)
    pn.serve(
        routes,
        show=show,
        title="overlap-lab",
        static_dirs={},
        **server_options(
            port=port, address=address, origins=origins, num_procs=num_procs, **options
        ),
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``overlap-lab`` command."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        serve(
            args.port,
            args.address,
            args.allow_websocket_origin,
            args.show,
            args.num_procs,
            prefix=args.prefix,
            use_xheaders=args.use_xheaders,
            unused_session_lifetime=args.unused_session_lifetime,
            check_unused_sessions=args.check_unused_sessions,
            connect_grace=args.connect_grace,
        )
    else:
        raise SystemExit(run_trace_command(args))


if __name__ == "__main__":
    main()
