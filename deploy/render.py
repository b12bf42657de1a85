"""Fill in deploy/nginx.conf: ``python3 deploy/render.py --backend HOST:PORT ... > nginx.conf``.

Only the ``${OL_...}`` placeholders are replaced; nginx's own ``$variables`` are
left alone. Standard library only, so it runs on the balancer without the app.
"""

from __future__ import annotations

import argparse
import string
import sys
from pathlib import Path

TEMPLATE = Path(__file__).with_name("nginx.conf")


def render(
    backends: list[str],
    listen: str = "80",
    server_name: str = "_",
    prefix: str = "/",
    runtime: str = "/var/lib/overlap-lab-nginx",
    template: Path = TEMPLATE,
) -> str:
    """The configuration for these backends (``host:port`` each, nginx server flags allowed)."""
    if not backends:
        raise ValueError("at least one backend is needed")
    bare = prefix.strip("/")
    prefix = f"/{bare}/" if bare else "/"
    redirect = f"location = /{bare} {{ return 301 $scheme://$http_host/{bare}/; }}" if bare else ""
    values = {
        "OL_LISTEN": listen,
        "OL_SERVER_NAME": server_name,
        "OL_BACKENDS": "\n        ".join(f"server {b};" for b in backends),
        "OL_PREFIX": prefix,
        "OL_RUNTIME": runtime.rstrip("/"),
        "OL_PREFIX_REDIRECT": redirect,
    }
    text = string.Template(template.read_text(encoding="utf-8")).safe_substitute(values)
    missing = [v for v in values if "${" + v + "}" in text]
    if missing:
        raise ValueError(f"placeholders left: {missing}")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend",
        action="append",
        required=True,
        metavar="HOST:PORT",
        help="an `overlap-lab serve` process (repeat; extra nginx flags may follow, quoted)",
    )
    parser.add_argument("--listen", default="80", help="nginx's listen value (default 80)")
    parser.add_argument("--server-name", default="_", help="the public host name (default _)")
    parser.add_argument("--prefix", default="/", help="path the widgets live under (default /)")
    parser.add_argument(
        "--runtime",
        default="/var/lib/overlap-lab-nginx",
        help="directory for nginx's pid file, logs and temporary files",
    )
    args = parser.parse_args(argv)
    sys.stdout.write(render(args.backend, args.listen, args.server_name, args.prefix, args.runtime))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
