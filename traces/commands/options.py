"""What the trace commands share on the command line: value checks, ``--out``/``--force``,
``--max-other-load``, and the error a user can fix."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_MAX_LOAD = 0.25


class CommandError(Exception):
    """A problem the user can fix; printed without a traceback."""


def positive_float(text: str) -> float:
    """An argument that must be a number above 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def positive_int(text: str) -> int:
    """An argument that must be a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def add_out_options(
    parser: argparse.ArgumentParser, help: str, *, many: bool = False, metavar: str | None = None
) -> None:
    """``--out`` (one file, or ``many``) and ``--force`` to overwrite it."""
    parser.add_argument(
        "--out",
        type=Path,
        nargs="+" if many else None,
        required=True,
        metavar=metavar,
        help=help,
    )
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")


def check_out(path: Path, force: bool) -> None:
    """Refuse to overwrite ``path`` unless ``--force`` was given."""
    if path.exists() and not force:
        raise CommandError(f"{path} exists; pass --force to overwrite it")


def add_load_option(parser: argparse.ArgumentParser) -> None:
    """``--max-other-load``: which iterations count as quiet."""
    parser.add_argument(
        "--max-other-load",
        type=float,
        default=DEFAULT_MAX_LOAD,
        metavar="SHARE",
        help="leave out iterations during which other processes kept more than this share of "
        f"the cores busy (default {DEFAULT_MAX_LOAD}; a negative value keeps every iteration)",
    )


def max_load(args: argparse.Namespace) -> float | None:
    """The ``--max-other-load`` given, None to keep every iteration."""
    return None if args.max_other_load < 0 else args.max_other_load
