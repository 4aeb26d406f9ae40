"""``serve --console|--webmcp --auth-issuer URL --client-id ID``: a person signs in to the
console at the issuer (Canaille on loopback), in headless Chromium, and signs out; the page's
person signs in the same way and the page opens for them.

The console sends the browser to the issuer's authorization endpoint (code with PKCE), the
issuer sends it back with a code, the server exchanges it and checks the token with its one
verifier, and the person's session is the same HttpOnly cookie a token's sign-in opens. The
token itself never reaches the browser.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.async_api import Browser, Request

from tests.support.browser import TIMEOUT_MS, launch, need_chromium
from tests.support.issuer import Issuer
from tests.support.serving import serving

pytestmark = [pytest.mark.browser, pytest.mark.interop]

CONSOLE_CLIENT = "todo-console"
CONSOLE_SECRET = "todo-console-secret"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    """A Canaille of this module's own: a person's sign-in in Chromium leaves the issuer
    asking alice's consent again for the other tests' agent client."""
    from tests.support.issuer import running_issuer
    from tests.support.mcp_helpers import free_port

    with running_issuer(f"http://127.0.0.1:{free_port()}/mcp") as running:
        yield running


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    need_chromium()
    async with launch(native=False) as b:
        yield b


async def test_a_person_signs_in_at_the_issuer_sees_the_console_and_signs_out(
    issuer: Issuer, browser: Browser
) -> None:
    port = urlsplit(issuer.resource).port
    assert port is not None
    callback = f"http://127.0.0.1:{port}/console/sign-in/callback"
    issuer.add_agent(CONSOLE_CLIENT, CONSOLE_SECRET, ["openid"], redirects=[callback])
    flags = (
        "--mcp", "http", "--console", "--auth-issuer", issuer.url, "--audience",
        issuer.resource, "--client-id", CONSOLE_CLIENT,
    )  # fmt: skip
    env = {"FOLDKIT_AGENT_CLIENT_SECRET": CONSOLE_SECRET}
    async with serving(*flags, target="examples.todo:runtime", port=port, env=env) as server:
        context = await browser.new_context()
        asked: list[Request] = []
        context.on("request", lambda r: asked.append(r) if "/oauth/authorize" in r.url else None)
        try:
            page = await context.new_page()
            await page.goto(f"{server.origin}/console")
            await page.get_by_test_id("sign-in-issuer").click()
            await page.get_by_text("Signed in as").wait_for(timeout=TIMEOUT_MS)
            assert page.url == f"{server.origin}/console"
            assert await page.locator("header strong").first.inner_text() == "alice"
            cookies = {c["name"]: c for c in await context.cookies()}
            assert cookies["foldkit_agent_person"]["httpOnly"] is True
            await page.get_by_role("button", name="Sign out").click()
            await page.wait_for_url(f"{server.origin}/console/sign-in", timeout=TIMEOUT_MS)
            await page.goto(f"{server.origin}/console")
            assert page.url == f"{server.origin}/console/sign-in"  # signed out: asked again
        finally:
            await context.close()
        async with httpx.AsyncClient() as http:
            made_up = await http.get(f"{callback}?state=made-up&code=made-up")
    assert made_up.status_code == 401  # a state the server did not start opens nothing
    assert "foldkit_agent_person" not in made_up.headers.get("set-cookie", "")
    # authorization code with PKCE (S256), back to the console's callback
    query = parse_qs(urlsplit(asked[0].url).query)
    assert query["response_type"] == ["code"]
    assert query["code_challenge_method"] == ["S256"]
    assert len(query["code_challenge"][0]) == 43
    assert query["client_id"] == [CONSOLE_CLIENT]
    assert query["redirect_uri"] == [callback]
    assert "openid" in query["scope"][0].split()


async def test_the_pages_person_signs_in_at_the_issuer_and_the_page_opens(
    issuer: Issuer, browser: Browser
) -> None:
    port = urlsplit(issuer.resource).port
    assert port is not None
    callback = f"http://127.0.0.1:{port}/console/sign-in/callback"
    issuer.add_agent("todo-page", "todo-page-secret", ["openid"], redirects=[callback])
    flags = (
        "--mcp", "http", "--webmcp", "--auth-issuer", issuer.url, "--audience",
        issuer.resource, "--client-id", "todo-page",
    )  # fmt: skip
    env = {"FOLDKIT_AGENT_CLIENT_SECRET": "todo-page-secret"}
    async with serving(*flags, target="examples.todo:runtime", port=port, env=env) as server:
        context = await browser.new_context()
        try:
            page = await context.new_page()
            await page.goto(f"{server.origin}/")
            assert page.url == f"{server.origin}/console/sign-in?next=/"  # not signed in yet
            await page.get_by_test_id("sign-in-issuer").click()
            await page.get_by_text("Signed in as").wait_for(timeout=TIMEOUT_MS)
            opened = await page.goto(f"{server.origin}/")
            assert opened is not None
            assert opened.status == 200
            assert page.url == f"{server.origin}/"  # the page answers the signed-in person
            assert "webmcp.js" in await page.content()
        finally:
            await context.close()
