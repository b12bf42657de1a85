"""Join codes (short, read aloud), instructor keys (unguessable) and learner ids.

A learner id is issued by the server when a browser first opens a class's page,
and signed (HMAC-SHA256) with a secret the server keeps, for that class alone:
a made-up or copied cookie is no learner.
"""

from __future__ import annotations

import base64
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
    """A learner's id: 18 random bytes, URL-safe (24 characters)."""
    return secrets.token_urlsafe(18)


def new_secret() -> str:
    """A secret that signs learner ids: 32 random bytes, as hex."""
    return secrets.token_hex(32)


def _signature(secret: str, code: str, learner: str) -> str:
    mac = hmac.new(secret.encode(), f"{code}:{learner}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode()


def sign_learner(secret: str, code: str, learner: str) -> str:
    """A learner's cookie for room ``code``: their id, a dot, and the server's signature of both."""
    return f"{learner}.{_signature(secret, code, learner)}"


_SIGNED = re.compile(r"^([A-Za-z0-9_\-]{24})\.([A-Za-z0-9_\-]{24})$")


def signed_learner(secret: str, code: str, cookie: object) -> str | None:
    """The learner id in ``cookie`` if this server signed it for room ``code``, else None."""
    found = _SIGNED.match(cookie) if isinstance(cookie, str) else None
    if found is None or not secret:
        return None
    learner, signature = found.groups()
    return learner if hmac.compare_digest(signature, _signature(secret, code, learner)) else None
