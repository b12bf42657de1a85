"""Who sent a request and over which scheme: a reverse proxy's word, believed only from the proxy.

A reverse proxy in front (nginx, ``deploy/nginx.conf``) tells a backend the
visitor's address (``X-Real-IP``, ``X-Forwarded-For``) and scheme
(``X-Forwarded-Proto``). Anyone can send those headers, so they are believed
only on requests whose peer is one of the addresses given with
``overlap-lab serve --trusted-proxy`` (:data:`app.server.serve_options.ServeOptions`);
from any other peer the request's own address and scheme stand. Tornado's
``xheaders`` (which believes every peer) stays off.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The proxies this process believes (``use_trusted_proxies``); none until then.
_TRUSTED: tuple[Network, ...] = ()


def trusted_networks(addresses: Iterable[str]) -> tuple[Network, ...]:
    """The networks of ``addresses`` (an address, or a network such as ``10.0.0.0/24``).

    Raises ValueError naming one that is neither.
    """
    networks = []
    for address in addresses:
        try:
            networks.append(ipaddress.ip_network(address.strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"--trusted-proxy {address!r} is not an IP address or network "
                "(e.g. 127.0.0.1 or 10.0.0.0/24)"
            ) from None
    return tuple(networks)


def use_trusted_proxies(addresses: Iterable[str]) -> None:
    """Believe forwarded headers from these addresses only (this process's ``--trusted-proxy``)."""
    global _TRUSTED
    _TRUSTED = trusted_networks(addresses)


def _peer_is_trusted(request: Any) -> bool:
    peer = getattr(request, "remote_ip", None)
    if not _TRUSTED or not peer:
        return False
    try:
        ip = ipaddress.ip_address(peer)
    except ValueError:
        return False
    return any(ip in network for network in _TRUSTED)


def _header(request: Any, name: str) -> str:
    headers = getattr(request, "headers", None) or {}
    value = headers.get(name) or ""
    return value if isinstance(value, str) else ""


def client_address(request: Any) -> str:
    """The visitor's address: the proxy's ``X-Real-IP`` (or the last ``X-Forwarded-For``
    hop it added) from a trusted proxy, else the peer's own address."""
    peer = getattr(request, "remote_ip", None) or ""
    if not _peer_is_trusted(request):
        return peer
    for candidate in (
        _header(request, "X-Real-Ip"),
        _header(request, "X-Forwarded-For").split(",")[-1],
    ):
        candidate = candidate.strip()
        try:
            return str(ipaddress.ip_address(candidate))
        except ValueError:
            continue
    return peer


def request_scheme(request: Any, default: str = "http") -> str:
    """``https`` or ``http``: a trusted proxy's ``X-Forwarded-Proto``, else the request's own."""
    own = getattr(request, "protocol", None) or default
    if _peer_is_trusted(request):
        said = _header(request, "X-Forwarded-Proto").strip().lower()
        if said in ("http", "https"):
            return said
    return own
