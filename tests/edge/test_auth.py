"""Step 3 from a Starlette authentication backend, run inside the guard."""

from __future__ import annotations

from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
    SimpleUser,
)
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from foldkit_agent.edge.auth import UNVERIFIED_TEXT, backend_step
from foldkit_agent.edge.guard import EdgeGuard, Rules
from foldkit_agent.edge.hosts import HostPolicy
from foldkit_agent.edge.wire import WireError
from tests.support.asgi import exchange


class Backend(AuthenticationBackend):
    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        header = conn.headers.get("authorization")
        if header is None:
            return None
        if header == "Bearer boom":
            raise RuntimeError("backend bug with a secret in it")
        if header != "Bearer alice":
            raise AuthenticationError("unknown token 'bearer-secret'")
        return AuthCredentials(["todos:delete"]), SimpleUser("alice")


async def whoami(scope: Scope, receive: Receive, send: Send) -> None:
    user = scope["user"]
    body = {"user": user.display_name, "ok": user.is_authenticated, "scopes": scope["auth"].scopes}
    await JSONResponse(body)(scope, receive, send)


def refuse(_exc: AuthenticationError) -> WireError:
    return WireError(401, "unauthenticated", UNVERIFIED_TEXT)


def needs_caller(scope: Scope, _rules: Rules) -> WireError | None:
    if scope["user"].is_authenticated:
        return None
    return WireError(401, "unauthenticated", "Send a token.")


def app(then: object = None) -> EdgeGuard:
    step = backend_step(Backend(), on_error=refuse, then=then)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    return EdgeGuard(whoami, hosts=HostPolicy(), classify=Rules(), max_body=64, authenticate=step)


HEADERS = {"host": "127.0.0.1"}


async def test_the_user_and_scopes_are_set_as_starlette_sets_them() -> None:
    r = await exchange(app(), "GET", headers={**HEADERS, "authorization": "Bearer alice"})
    assert r.json() == {"user": "alice", "ok": True, "scopes": ["todos:delete"]}


async def test_no_credentials_is_anonymous_unless_a_check_wants_a_caller() -> None:
    r = await exchange(app(), "GET", headers=HEADERS)
    assert r.json() == {"user": "", "ok": False, "scopes": []}
    r = await exchange(app(needs_caller), "GET", headers=HEADERS)
    assert r.status == 401


async def test_a_refused_or_broken_backend_is_401_without_its_text() -> None:
    for token in ("Bearer nope", "Bearer boom"):
        r = await exchange(app(), "GET", headers={**HEADERS, "authorization": token})
        assert r.status == 401
        assert r.json()["error"]["message"] == UNVERIFIED_TEXT
        assert b"secret" not in r.body
