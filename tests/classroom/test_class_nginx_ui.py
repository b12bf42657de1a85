"""A class behind nginx with two backends and Redis: the instructor on one, learners on the other.

Then the learners' backend is killed mid-round: their pages reconnect through
nginx to the other backend and come back to the round with their vote shown.
"""

from __future__ import annotations

import contextlib
import urllib.request

import pytest
from class_pages import open_round, predict, shown, start_class
from class_support import ui_balancer, ui_support
from redis_server import running_redis

pytestmark = pytest.mark.ui


def _route_to(balancer, backend_port: int) -> str:
    """A value of nginx's stickiness cookie that sends a browser to this backend."""
    for i in range(200):
        route = f"r{i}"
        request = urllib.request.Request(
            f"{balancer.url}/liveness", headers={"Cookie": f"ol_route={route}"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
        last = balancer.access_log()[-1]
        if last["route"] == route and last["upstream"].endswith(f":{backend_port}"):
            return route
    raise AssertionError(f"no route reaches port {backend_port}")


def test_a_round_across_two_backends_survives_a_backend_killed_mid_round(browser, tmp_path):
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(running_redis(tmp_path / "redis"))
        a = stack.enter_context(ui_support.running_server("--redis", redis.url))
        b = stack.enter_context(ui_support.running_server("--redis", redis.url))
        port = ui_support.free_port()
        balancer = stack.enter_context(
            ui_balancer.running_nginx([f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"], port)
        )
        base = balancer.url

        def context(route: str, width: int):
            ctx = browser.new_context(viewport={"width": width, "height": 900})
            ctx.add_cookies([{"name": "ol_route", "value": route, "url": base}])
            return ctx.new_page()

        teacher = context(_route_to(balancer, a.port), 1280)
        on_b = _route_to(balancer, b.port)
        learners = [context(on_b, w) for w in (390, 1280)]
        code, _ = start_class(teacher, base)
        for page in learners:
            page.goto(f"{base}/class/{code}")
            page.get_by_text("Waiting for the instructor").wait_for()
        teacher.wait_for_function("() => document.getElementById('connected').textContent === '2'")
        open_round(
            teacher, "Bucket timeline", "preset=Latency-bound", "How long is the exposed tail?"
        )
        first, second = learners
        first.get_by_label("Your prediction").wait_for()
        # Both frames have loaded the round's file; nginx now answers it from its copy.
        for page in learners:
            page.frame_locator("#widget").get_by_text("Settings locked").wait_for()
        src = first.evaluate("() => document.getElementById('widget').src")
        assert src == second.evaluate("() => document.getElementById('widget').src")
        with urllib.request.urlopen(src, timeout=30) as response:
            assert response.headers["X-Cache-Status"] == "HIT"
        assert predict(first, "5").startswith("Stored: your prediction is 5 ms")
        assert predict(second, "20").startswith("Stored")
        teacher.wait_for_function("() => document.getElementById('votes').textContent === '2'")
        # The votes went to the learners' backend (the log shows no class path).
        assert any(
            e["method"] == "POST" and e["route"] == on_b and e["upstream"].endswith(f":{b.port}")
            for e in balancer.access_log()
        )

        b.process.kill()  # mid-round, with both learners' pages on it
        for page, yours in ((first, "5 ms"), (second, "20 ms")):
            page.get_by_text("Reconnecting…").or_(page.get_by_text("Round 1: predict")).wait_for()
            page.wait_for_function(
                "(yours) => document.getElementById('status').textContent"
                ".startsWith('Round 1: predict') && document.getElementById('prediction-message')"
                ".textContent.includes(yours)",
                arg=yours,
                timeout=30_000,
            )
        # Still one vote each: a replacement after the move replaces.
        assert predict(second, "22").startswith("Stored: your prediction is 22 ms")
        teacher.get_by_role("button", name="Reveal").click()
        teacher.locator("#answer").wait_for()
        answer = shown(teacher, "answer")
        assert shown(teacher, "median") == "13.5 ms"  # the median of 5 and 22
        for page in learners:
            page.locator("#answer").wait_for(timeout=15_000)
            assert shown(page, "answer") == answer and shown(page, "median") == "13.5 ms"
        assert shown(first, "yours") == "5 ms" and shown(second, "yours") == "22 ms"
        log = (balancer.runtime / "access.log").read_text(encoding="utf-8")
        assert code not in log and "/class/..." in log
        # Nor in nginx's error log, though the kill cut the learners' streams.
        assert code not in balancer.error_log() and "/class/" not in balancer.error_log()
