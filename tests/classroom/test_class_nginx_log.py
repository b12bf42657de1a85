"""nginx's error log behind a class: a backend killed under open streams and votes names no code."""

from __future__ import annotations

import asyncio
import contextlib
import json

from class_http import fetch, open_class
from class_support import run, ui_balancer, ui_support


def test_nginx_logs_no_join_code_when_a_backend_dies_under_a_class():
    with contextlib.ExitStack() as stack:
        backend = stack.enter_context(ui_support.running_server())
        port = ui_support.free_port()
        balancer = stack.enter_context(
            ui_balancer.running_nginx([f"127.0.0.1:{backend.port}"], port)
        )
        base = balancer.url

        async def body():
            teacher, learner = await open_class(base)  # both streams held open through nginx
            backend.process.kill()
            await asyncio.sleep(1.0)
            # Every class address, and one that is not a class's, reach no backend now.
            vote = await fetch(
                f"{base}/class/{teacher.code}/vote", "POST", json.dumps({"text": "3"}),
                {"Cookie": learner.cookie, "Content-Type": "application/json"},
            )  # fmt: skip
            page = await fetch(f"{base}/class/{teacher.code}")
            events = await fetch(f"{base}/class/{teacher.code}/events")
            other = await fetch(f"{base}/liveness")
            assert {vote[0], page[0], events[0], other[0]} <= {502, 504}, (vote, page, events)
            return teacher.code

        code = run(body(), timeout=60)
        errors = balancer.error_log()
        # nginx did log the failures it may: the address that is not a class's ...
        assert "/liveness" in errors, errors
        # ... and not one line with a class's address or its join code.
        assert code not in errors and "/class/" not in errors, errors
        access = (balancer.runtime / "access.log").read_text(encoding="utf-8")
        assert code not in access and "/class/..." in access
