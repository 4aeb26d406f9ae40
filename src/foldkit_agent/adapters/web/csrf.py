"""Session-bound CSRF tokens for a page's ``POST invoke/<name>``, and the names it travels under.

See the security model in :mod:`foldkit_agent.adapters.web.surface`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

__all__ = [
    "CSRF_HEADER",
    "SESSION_COOKIE",
    "CsrfTokens",
]

CSRF_HEADER = "X-CSRF-Token"
"""The request header carrying the CSRF token on ``POST invoke/<name>``."""


SESSION_COOKIE = "foldkit_agent_sid"
"""The cookie the surface sets on ``GET session`` when no ``session_of`` hook is given."""


class CsrfTokens:
    """Stateless session-bound CSRF tokens: ``base64url(HMAC-SHA256(secret, session id))``.

    Args:
        secret: at least 16 bytes; random when omitted (tokens then last as long as the
            process). Give the same secret to every worker that serves one session.

    Raises:
        ValueError: a secret shorter than 16 bytes.

    Example:
        >>> tokens = CsrfTokens()
        >>> tokens.verify("session-1", tokens.token_for("session-1"))
        True
    """

    __slots__ = ("_secret",)

    def __init__(self, secret: bytes | None = None) -> None:
        if secret is None:
            secret = secrets.token_bytes(32)
        if len(secret) < 16:
            raise ValueError("csrf_secret must be at least 16 bytes")
        self._secret = secret

    def token_for(self, session_id: str) -> str:
        """The token for ``session_id`` (43 URL-safe characters)."""
        mac = hmac.new(self._secret, b"foldkit-agent-csrf\0" + session_id.encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()

    def verify(self, session_id: str | None, token: str | None) -> bool:
        """``True`` when ``token`` is the token of ``session_id`` (constant-time compare)."""
        if not session_id or not token or len(token) > 128:
            return False
        return hmac.compare_digest(self.token_for(session_id), token)
