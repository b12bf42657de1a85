"""The class's addresses that answer once: pages, the round's file, votes, actions.

Every answer is a page or a small JSON object (the live streams are in
``streams``). Refusals are JSON with a message and the field it belongs to,
never a traceback. Nothing here logs a code or a key.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import quote

from tornado.web import RequestHandler

from app.server.trusted_proxy import client_address, request_scheme

from .codes import normalize_code
from .errors import ClassError, Forbidden
from .pages import entry_html, instructor_html, learner_html, not_found_html
from .rooms import Classroom
from .round_file import asset, revealed_states, round_html
from .service import ClassService
from .views import round_tag, widget_src

log = logging.getLogger("overlap-lab.classroom")
LEARNER_COOKIE = "ol_learner"
#: What a vote or an event stream without this class's signed cookie is told.
NOT_A_LEARNER = "Open the class's page again to take part."
#: The largest request body a class action may have (bytes).
MAX_BODY = 8_000
#: How long a browser or a proxy may keep a round's file (s): longer than a round lasts.
ROUND_FILE_SECONDS = 3600


def media_type(content_type: str) -> str:
    """A Content-Type's media type alone, in lower case (``application/json``), without
    its parameters (``; charset=utf-8``)."""
    return content_type.partition(";")[0].strip().lower()


def cookie_pairs(header: str) -> list[tuple[str, str]]:
    """Every ``name=value`` of a Cookie header, in order, repeated names included."""
    pairs = []
    for part in header.split(";"):
        name, eq, value = part.strip().partition("=")
        if eq:
            pairs.append((name.strip(), value.strip().strip('"')))
    return pairs


class ClassHandler(RequestHandler):
    """Shared by every class address: the service, the prefix, JSON in and out."""

    def initialize(self, service: ClassService) -> None:
        self.service = service
        self.prefix = service.prefix

    def set_default_headers(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("X-Content-Type-Options", "nosniff")

    def address(self) -> str:
        return client_address(self.request)

    def json_body(self) -> dict:
        """The request's JSON object; ClassError for anything else."""
        if media_type(self.request.headers.get("Content-Type", "")) != "application/json":
            raise ClassError("Send JSON.")
        if len(self.request.body) > MAX_BODY:
            raise ClassError("That request is too large.")
        try:
            data = json.loads(self.request.body or b"{}")
        except (ValueError, RecursionError):  # not JSON, or nested thousands deep
            raise ClassError("Send JSON.") from None
        if not isinstance(data, dict):
            raise ClassError("Send a JSON object.")
        return data

    def reply(self, payload: dict, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps(payload))

    def refuse(self, exc: ClassError) -> None:
        self.reply({"ok": False, "message": exc.message, "field": exc.field}, exc.status)

    def page(self, text: str, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(text)

    def learner_id(self, classroom: Classroom, code: str | None) -> str | None:
        """The learner this browser is in room ``code``, if the server signed its cookie for it.

        Every ``ol_learner`` cookie the browser sends is tried (one per class it joined).
        """
        if code is None:
            return None
        for name, value in cookie_pairs(self.request.headers.get("Cookie", "")):
            if name == LEARNER_COOKIE:
                learner = classroom.learner(code, value)
                if learner is not None:
                    return learner
        return None

    def origin(self) -> str:
        host = self.request.headers.get("Host") or "localhost"
        proto = request_scheme(self.request)
        return f"{proto}://{host}{self.prefix}"

    def log_exception(self, typ, value, tb) -> None:
        if isinstance(value, ClassError):  # a refusal, not a fault: one line, no traceback
            log.warning("classroom: %s (%s)", typ.__name__, self.request.method)
            return
        super().log_exception(typ, value, tb)

    def write_error(self, status_code: int, **kwargs) -> None:
        # Never a traceback, whatever went wrong; a refusal says why.
        exc = kwargs.get("exc_info", (None, None))[1]
        if isinstance(exc, ClassError):
            self.refuse(exc)
            return
        self.reply({"ok": False, "message": "Something went wrong; try again."}, status_code)


class EntryPage(ClassHandler):
    """``/class``: Start a class, or type a join code."""

    def get(self) -> None:
        self.page(entry_html(self.prefix))


class JoinForm(ClassHandler):
    """``/class/join?code=``: to the class's page, or back with a message at the field."""

    async def get(self) -> None:
        typed = self.get_argument("code", "")[:40]
        classroom, _ = await self.service.get()
        try:
            code = await classroom.find(typed, self.address())
        except ClassError as exc:
            self.page(entry_html(self.prefix, exc.message, typed), exc.status)
            return
        self.redirect(f"{self.prefix}/class/{code}", status=303)


class StartClass(ClassHandler):
    """``POST /class/start``: a new room; on to the instructor's page, its key in the fragment."""

    async def post(self) -> None:
        classroom, _ = await self.service.get()
        try:
            code, key = await classroom.start_room(self.address())
        except ClassError as exc:
            self.page(entry_html(self.prefix, exc.message), exc.status)
            return
        # The fragment is never sent in a request, so the key is in no request line or log.
        self.redirect(f"{self.prefix}/class/teach#code={code}&key={quote(key)}", status=303)


class TeachPage(ClassHandler):
    """``/class/teach``: the instructor's page (the same for every room)."""

    def get(self) -> None:
        self.page(instructor_html(self.prefix))


class LearnerPage(ClassHandler):
    """``/class/<code>``: a learner's page; a helpful 404 for a code with no class."""

    async def get(self, typed: str) -> None:
        classroom, _ = await self.service.get()
        try:
            code = await classroom.find(typed, self.address())
        except ClassError as exc:
            self.page(not_found_html(self.prefix, exc.message), exc.status)
            return
        if normalize_code(typed) != typed:
            self.redirect(f"{self.prefix}/class/{code}", status=303)
            return
        if self.learner_id(classroom, code) is None:
            try:
                cookie = await classroom.new_learner(code, self.address())
            except ClassError as exc:
                self.page(not_found_html(self.prefix, exc.message), exc.status)
                return
            # A session cookie for this class alone: the learner is this browser until
            # it closes, and its votes and events carry it.
            self.set_cookie(
                LEARNER_COOKIE, cookie, path=f"{self.prefix}/class/{code}",
                httponly=True, samesite="Lax",
            )  # fmt: skip
        self.page(learner_html(self.prefix, code))


class RoundFile(ClassHandler):
    """``/class/<code>/round/<n>/<tag>``: the round's widget as one file, as voting shows it."""

    async def get(self, typed: str, number: str, tag: str) -> None:
        classroom, _ = await self.service.get()
        code = normalize_code(typed)
        room = await classroom.store.get_room(code) if code else None
        if (
            room is None
            or room.get("round") != number
            or not room.get("widget")
            or tag != round_tag(room)
        ):
            self.page("<!doctype html><title>Class round</title><p>This round is over.</p>", 404)
            return
        live = widget_src(self.prefix, code, room, mode="open")
        widget, query = room["widget"], room.get("query", "")
        # The file holds nothing voting does not show, whatever the phase, and its tag
        # names this round alone: every browser and proxy may keep it while the round lasts.
        self.set_header("Cache-Control", f"public, max-age={ROUND_FILE_SECONDS}")
        self.page(round_html(self.prefix, widget, query, live))
        # Built once per round here, before Reveal asks every stream of this process for it.
        revealed_states(widget, query)


class RoundAsset(RequestHandler):
    """``/class/assets/<file>``: the static state source and the widgets' bundles."""

    def get(self, name: str) -> None:
        script = asset(name)
        if script is None:
            self.send_error(404)
            return
        self.set_header("Content-Type", "text/javascript; charset=utf-8")
        self.set_header("Cache-Control", "public, max-age=3600")
        self.finish(script)


class Vote(ClassHandler):
    """``POST /class/<code>/vote``: a learner's prediction, answered once it is stored."""

    async def post(self, typed: str) -> None:
        classroom, _ = await self.service.get()
        code = normalize_code(typed)
        learner = self.learner_id(classroom, code)
        try:
            if learner is None:
                # The same answer whether or not a class has this code: only a page of
                # the class (its signed cookie) can vote in it.
                raise Forbidden(NOT_A_LEARNER)
            value = await classroom.vote(code, learner, self.json_body().get("text"))
        except ClassError as exc:
            self.refuse(exc)
            return
        self.reply({"ok": True, "value": value})


class TeachAction(ClassHandler):
    """``POST /class/api/teach/<action>``: an instructor's action, checked against the key."""

    async def post(self, action: str) -> None:
        classroom, _ = await self.service.get()
        try:
            data = self.json_body()
            code, key = data.get("code"), data.get("key")
            if action == "open":
                await classroom.open_round(
                    code, key, data.get("widget"), data.get("settings"),
                    data.get("question"), data.get("parameter", ""),
                )  # fmt: skip
            elif action == "reveal":
                await classroom.reveal(code, key)
            elif action == "unlock":
                await classroom.unlock(code, key)
            elif action == "next":
                await classroom.next_round(code, key)
            elif action == "end":
                await classroom.end(code, key)
            elif action == "results":
                text, name = await classroom.results_csv(code, key)
                self.set_header("Content-Type", "text/csv; charset=utf-8")
                self.set_header("Content-Disposition", f'attachment; filename="{name}"')
                self.finish(text)
                return
            else:
                raise ClassError("No such action.")
        except ClassError as exc:
            self.refuse(exc)
            return
        self.reply({"ok": True})
