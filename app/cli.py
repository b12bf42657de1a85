"""``overlap-lab serve``: start Panel's server with every route; and the trace commands."""

from __future__ import annotations

import argparse
import logging

import panel as pn

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
        help="worker processes sharing the port (0: one per core); each session is "
        "built in one process, so a large class wants one per core",
    )
    serve.add_argument("--show", action="store_true", help="open a browser on the index")
    add_trace_commands(sub)
    return parser


def serve(port: int, address: str, origins: list[str], show: bool, num_procs: int = 1) -> None:
    """Serve every route until interrupted."""
    from .routes import build_routes

    pn.extension(inline=False)
    local = [f"localhost:{port}", f"127.0.0.1:{port}", f"{address}:{port}"]
    pn.serve(
        build_routes(),
        port=port,
        address=address,
        websocket_origin=sorted(set(local + origins)),
        show=show,
        title="overlap-lab",
        static_dirs={},
        unused_session_lifetime=15_000,
        check_unused_sessions=5_000,
        num_procs=num_procs,
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``overlap-lab`` command."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        serve(args.port, args.address, args.allow_websocket_origin, args.show, args.num_procs)
    else:
        raise SystemExit(run_trace_command(args))


if __name__ == "__main__":
    main()
