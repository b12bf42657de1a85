"""``overlap-lab serve``: start Panel's server with every route; ``export``; the trace commands."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

import panel as pn

from traces.commands import add_trace_commands, run_trace_command

from .server.serve_options import COURSE_OPTIONS, ServeOptions


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(prog="overlap-lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve_parser = sub.add_parser("serve", help="serve the index, the lessons and the widgets")
    ServeOptions.add_arguments(serve_parser)
    export_parser = sub.add_parser(
        "export", help="write the index, every lesson and every widget as static files"
    )
    export_parser.add_argument("dir", type=Path, help="the folder to write (created if missing)")
    ServeOptions.add_arguments(export_parser, only=COURSE_OPTIONS)
    export_parser.add_argument(
        "--live", default="", metavar="URL", help="the live lab's address, linked from the copy"
    )
    export_parser.add_argument(
        "--single-file",
        action="store_true",
        help="also write one self-contained HTML file per widget and lesson (single/)",
    )
    export_parser.add_argument(
        "--state",
        action="append",
        default=[],
        metavar="WIDGET?KEY=VALUE&...",
        help="also hold these settings on the widget's page, with its axes "
        "(repeatable; 'bucket-timeline?preset=Latency-bound&ranks=16')",
    )
    check_parser = sub.add_parser(
        "check",
        help="check a course's lessons: directives against the widgets, numbers against the "
        "model (exit 1 naming the file and line of each fault)",
    )
    ServeOptions.add_arguments(check_parser, only=COURSE_OPTIONS)
    check_parser.add_argument(
        "files", nargs="*", type=Path, metavar="FILE", help="only these lesson files"
    )
    add_trace_commands(sub)
    return parser


def course_from(args: argparse.Namespace, command: str) -> None:
    """Use the course the command line names (``--lessons``), or exit saying what is wrong."""
    from lessons import LessonError
    from lessons.course import use_course

    options = ServeOptions(**{n: getattr(args, n) for n in COURSE_OPTIONS})
    try:
        lessons = use_course(options.course())
    except LessonError as exc:
        raise SystemExit(f"overlap-lab {command}: {exc}") from None
    logging.getLogger("overlap-lab").info(
        "course: %d lessons (%s)", len(lessons), ", ".join(lessons)
    )


def serve(options: ServeOptions) -> None:
    """Serve every route until interrupted."""
    from .server.routes import build_routes
    from .server.serving import configure_process, server_options, use_options, warm

    pn.extension(inline=False)
    configure_process()
    use_options(options)
    routes = build_routes()
    warm(routes)
    from tornado.ioloop import IOLoop

    from .server.listen_backlog import raise_listen_backlog

    # Once the server has bound its sockets: a class's burst of pages or votes queues, not drops.
    IOLoop.current().add_callback(raise_listen_backlog)
    pn.serve(
        routes, show=options.show, title="overlap-lab", static_dirs={}, **server_options(options)
    )


def export(out: Path, live: str, single_file: bool, states: list[str] = ()) -> None:
    """Write the course as static files, saying each page as it is written, then the total."""
    from .export.course import export_course
    from .export.wanted import wanted_states

    if out.exists() and not out.is_dir():
        raise SystemExit(f"overlap-lab export: {out} is a file, not a folder")
    if live and not live.startswith(("http://", "https://")):
        raise SystemExit(f"overlap-lab export: --live must be an http(s) address, not {live!r}")
    try:
        more = wanted_states(states)
    except ValueError as exc:
        raise SystemExit(f"overlap-lab export: --state {exc}") from None
    report = export_course(out, live, single_file, more, lambda line: print(line, flush=True))
    largest = max(report.files.items(), key=lambda item: item[1])
    print(
        f"wrote {len(report.files)} files, {report.total / 1e6:.2f} MB, into {out} "
        f"(largest: {largest[0]}, {largest[1] / 1e6:.2f} MB)"
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``overlap-lab`` command."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        try:
            options = ServeOptions.from_args(args)
        except ValueError as exc:  # a value out of its bounds: say which, as argparse does
            raise SystemExit(f"overlap-lab serve: {exc}") from None
        course_from(args, "serve")
        serve(options)
    elif args.command == "export":
        course_from(args, "export")
        export(args.dir, args.live, args.single_file, args.state)
    elif args.command == "check":
        from lessons.check import check_course

        folders, builtin = args.lessons, not args.no_builtin_lessons
        raise SystemExit(check_course(folders, builtin, args.files))
    else:
        try:
            code = run_trace_command(args)
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader left early (`overlap-lab summary ... | head`): not an error of ours.
            # Python's own advice: point stdout at devnull so the flush at exit cannot fail.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            code = 1
        raise SystemExit(code)


if __name__ == "__main__":
    main()
