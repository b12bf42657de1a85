"""What a class refuses, and why: each refusal is a message for a field, with its HTTP status."""

from __future__ import annotations


class ClassError(Exception):
    """Something a page asked for that is refused; ``message`` says why, at ``field``."""

    status = 400

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFound(ClassError):
    status = 404


class Forbidden(ClassError):
    status = 403


class RateLimited(ClassError):
    status = 429


class WrongPhase(ClassError):
    status = 409


#: What every page says while the class's store does not answer.
STORE_DOWN = "The class store is unreachable — votes are paused"


class StoreDown(ClassError):
    """The class's store did not answer in time: nothing was changed, try again shortly."""

    status = 503

    def __init__(self, field: str = "") -> None:
        super().__init__(f"{STORE_DOWN}. Nothing was changed: try again in a moment.", field)
