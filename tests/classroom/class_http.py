"""The class over HTTP in the tests: one request, and a class with a round open."""

from __future__ import annotations

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.simple_httpclient import HTTPTimeoutError

from bench.classroom import Instructor, Learner
from bench.loadclient import configure_client

QUEUE = "arrival=2&service=3&initial=4"


async def fetch(url: str, method: str = "GET", body=None, headers=None, timeout: float = 10):
    """``(status, body, headers)``; a stream still open after ``timeout`` is ``(599, "", {})``."""
    request = HTTPRequest(
        url, method=method, body=body, headers=headers or {}, follow_redirects=False,
        request_timeout=timeout,
    )  # fmt: skip
    try:
        response = await AsyncHTTPClient().fetch(request, raise_error=False)
    except HTTPTimeoutError:
        return 599, "", {}
    return response.code, response.body.decode("utf-8", "replace"), response.headers


async def open_class(base: str) -> tuple[Instructor, Learner]:
    """A class started, one learner joined, and voting open (the queue lab's drain time)."""
    configure_client(400)
    teacher = Instructor(base)
    await teacher.start()
    learner = Learner(base, teacher.code)
    await learner.join()
    opened = await teacher.act("open", widget="queue-lab", settings=QUEUE, question="drain")
    assert opened["ok"] is True, opened
    await learner.stream.until(lambda v: v.get("phase") == "voting")
    return teacher, learner
