"""The surface's ``Host`` and ``Origin`` checks (against DNS rebinding and cross-site calls)."""

from __future__ import annotations

from collections.abc import Iterable

from starlette.requests import Request

__all__ = [
    "host_allowed",
    "origin_allowed",
]


def _split_host(value: str) -> str:
    """The host name of a ``Host`` header value, without port or IPv6 brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def host_allowed(request: Request, allowed_hosts: Iterable[str] | None) -> bool:
    """Whether the request's ``Host`` header names an allowed host (any port).

    ``allowed_hosts=None`` or a ``"*"`` entry allows any host (use only behind a proxy that
    checks it). A request without a ``Host`` header (an in-process ASGI call) is allowed.
    """
    if allowed_hosts is None:
        return True
    allowed = {h.lower().strip("[]") for h in allowed_hosts}
    if "*" in allowed:
        return True
    raw = request.headers.get("host")
    if raw is None:
        return True
    return _split_host(raw) in allowed


def _own_origin(request: Request) -> str:
    scheme = request.url.scheme
    host = request.headers.get("host") or request.url.netloc
    return f"{scheme}://{host}".lower()


def origin_allowed(request: Request, allowed_origins: Iterable[str] = ()) -> bool:
    """Whether a state-changing request comes from the surface's own origin.

    ``Origin`` (when present) must equal ``scheme://host[:port]`` of the request or one of
    ``allowed_origins``; ``Origin: null`` is refused. A browser's ``Sec-Fetch-Site`` other than
    ``same-origin`` or ``none`` is refused. Requests with neither header (non-browser clients)
    pass this check; the CSRF token or service token still applies.
    """
    origin = request.headers.get("origin")
    if origin is not None:
        origin = origin.strip().lower().rstrip("/")
        if origin == _own_origin(request):
            return True
        return origin in {o.lower().rstrip("/") for o in allowed_origins}
    site = request.headers.get("sec-fetch-site")
    return site is None or site.lower() in ("same-origin", "none")
