"""Join codes (short, read aloud), instructor keys (unguessable) and learner ids."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

#: Letters and digits that cannot be mistaken for one another when read aloud or
#: copied from a projector: no 0/O, 1/I/L, 5/S, 2/Z, 8/B, U/V.
JOIN_ALPHABET = "ACDEFGHJKMNPQRTWXY34679"
CODE_LENGTH = 6
#: A typed code: its characters in any case, with spaces or dashes between groups.
_TYPED = re.compile(r"[\s\-]+")


def new_code() -> str:
    """A fresh join code, six characters of :data:`JOIN_ALPHABET` (23**6, about 148 million)."""
    return "".join(secrets.choice(JOIN_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: object) -> str | None:
    """A typed join code as stored (upper case, no spaces or dashes), or None if it is not one."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    code = _TYPED.sub("", text).upper()
    if len(code) != CODE_LENGTH or any(c not in JOIN_ALPHABET for c in code):
        return None
    return code


def spaced(code: str) -> str:
    """The code as shown to be read aloud: two groups of three (``ACD EFG``)."""
    return f"{code[:3]} {code[3:]}"


def new_key() -> str:
    """An instructor key: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def key_digest(key: str) -> str:
    """What the store keeps of a key: its SHA-256, so a store dump opens no room."""
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


def key_matches(key: object, digest: str) -> bool:
    """Whether ``key`` is the one whose digest is ``digest`` (in constant time)."""
    if not isinstance(key, str) or not key or len(key) > 200:
        return False
    return hmac.compare_digest(key_digest(key), digest)


def new_learner_id() -> str:
    """A learner's id, carried by their browser's session cookie."""
    return secrets.token_urlsafe(18)


_LEARNER = re.compile(r"^[A-Za-z0-9_\-]{16,40}$")


def valid_learner_id(text: object) -> bool:
    """Whether a cookie's value is a learner id this server could have issued."""
    return isinstance(text, str) and bool(_LEARNER.match(text))
