"""A proxy's forwarded headers are believed from a ``--trusted-proxy`` peer only."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from types import SimpleNamespace

import pytest

from app.server.trusted_proxy import (
    client_address,
    request_scheme,
    trusted_networks,
    use_trusted_proxies,
)
from bench.loadclient import configure_client
from bench.servers import app_command, running_servers


def request(peer: str, protocol: str = "http", **headers: str) -> SimpleNamespace:
    named = {k.replace("_", "-").title(): v for k, v in headers.items()}
    return SimpleNamespace(remote_ip=peer, protocol=protocol, headers=named)


@pytest.fixture
def trust_nginx():
    use_trusted_proxies(["127.0.0.1", "10.1.0.0/16"])
    yield
    use_trusted_proxies([])


def test_with_no_trusted_proxy_the_peer_and_its_scheme_stand() -> None:
    use_trusted_proxies([])
    forged = request("203.0.113.9", x_real_ip="1.2.3.4", x_forwarded_proto="https")
    assert client_address(forged) == "203.0.113.9"
    assert request_scheme(forged) == "http"


def test_a_trusted_proxy_says_who_the_visitor_is_and_the_scheme(trust_nginx) -> None:
    via = request("127.0.0.1", x_real_ip="198.51.100.7", x_forwarded_proto="https")
    assert client_address(via) == "198.51.100.7"
    assert request_scheme(via) == "https"
    # Without X-Real-IP: the last hop of X-Forwarded-For, the one the proxy added.
    chained = request("10.1.2.3", x_forwarded_for="6.6.6.6, 198.51.100.8")
    assert client_address(chained) == "198.51.100.8"
    # Words that are no address or scheme are not believed.
    assert client_address(request("127.0.0.1", x_real_ip="<script>")) == "127.0.0.1"
    assert request_scheme(request("127.0.0.1", x_forwarded_proto="javascript")) == "http"


def test_a_peer_outside_the_trusted_networks_is_not_believed(trust_nginx) -> None:
    forged = request("10.2.0.1", x_real_ip="1.2.3.4", x_forwarded_proto="https")
    assert client_address(forged) == "10.2.0.1"
    assert request_scheme(forged) == "http"


def test_a_trusted_proxy_that_is_no_address_is_refused() -> None:
    assert [str(n) for n in trusted_networks(["127.0.0.1", "10.0.0.5/24", "::1"])] == [
        "127.0.0.1/32",
        "10.0.0.0/24",
        "::1/128",
    ]
    with pytest.raises(ValueError, match="'nginx' is not an IP address or network"):
        trusted_networks(["nginx"])


def test_the_cli_says_when_a_trusted_proxy_is_no_address() -> None:
    from app import cli

    with pytest.raises(SystemExit, match=r"'nginx\.local' is not an IP address"):
        cli.main(["serve", "--trusted-proxy", "nginx.local"])


def test_an_old_start_command_with_use_xheaders_is_told_what_replaced_it(capsys) -> None:
    from app import cli

    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", "--use-xheaders"])
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert "--use-xheaders is replaced by --trusted-proxy ADDRESS" in said
    assert "--trusted-proxy 127.0.0.1" in said


def run(coro, timeout: float = 120.0):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coro, timeout)).result()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="loopback server")
def test_a_forged_x_real_ip_does_not_escape_the_guessing_limit() -> None:
    """Reached directly, a backend counts wrong join codes per real address, forged header or not.

    The server trusts a proxy at 10.9.9.9, which these requests do not come from.
    """
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest

    from app.classroom.codes import JOIN_ALPHABET

    configure_client()
    n = len(JOIN_ALPHABET)
    fake = ["".join(JOIN_ALPHABET[(7 * k + i) % n] for i in range(6)) for k in range(14)]

    async def guesses(base: str) -> list[int]:
        codes = []
        for k in range(14):
            forged = {"X-Real-IP": f"198.51.100.{k + 1}", "X-Forwarded-For": f"192.0.2.{k + 1}"}
            response = await AsyncHTTPClient().fetch(
                HTTPRequest(
                    f"{base}/class/join?code={fake[k]}", headers=forged, follow_redirects=False
                ),
                raise_error=False,
            )
            codes.append(response.code)
        return codes

    def command(port: int) -> list[str]:
        return [*app_command(port), "--trusted-proxy", "10.9.9.9"]

    with running_servers() as servers:
        server = servers.start("app", command, "/")
        codes = run(guesses(server.url))
    assert 429 in codes, codes  # limited although every request named another address
