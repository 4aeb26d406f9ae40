"""The A2A app through the official a2a-sdk client, in-process: the card, the per-caller
extended card, and mounting in a parent app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import jsonschema
from a2a.types import (
    GetExtendedAgentCardRequest,
)
from google.protobuf.json_format import MessageToDict

from examples.todo import runtime as todo_runtime
from foldkit_agent import AgentRuntime
from foldkit_agent.adapters.a2a import (
    CARD_PATH,
    EXTENSION_URI,
    JSONRPC_PATH,
    REST_PREFIX,
    a2a_app,
)
from tests.support.a2a_lab import (
    BearerBackend,
    a2a_client,
)
from tests.support.a2a_todo import BASE, S, call, todo_app

# ---------------------------------------------------------------------------------------------
# the card


async def test_public_card_lists_every_capability_with_its_schema_in_our_extension() -> None:
    async with todo_app() as (app, rt):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as hc:
            body = (await hc.get(CARD_PATH)).json()
    assert body["name"] == "todo"
    assert body["version"] == "1.2.3"
    assert [s["id"] for s in body["skills"]] == [c.name for c in rt.messages.all()]
    create = next(s for s in body["skills"] if s["id"] == "create_todo")
    assert create["description"] == "Create a new todo. Completes once the todo is saved."
    assert create["name"] == "Create todo"  # the capability's title
    assert create["tags"] == ["RequestedCreateTodo", "non-destructive", "closed-world"]
    (ext,) = body["capabilities"]["extensions"]
    assert ext["uri"] == EXTENSION_URI
    schemas = ext["params"]["skills"]
    assert set(schemas) == {c.name for c in rt.messages.all()}
    for cap in rt.messages.all():
        assert schemas[cap.name]["inputSchema"] == cap.input_schema  # exactly, ints stay ints
        jsonschema.Draft202012Validator.check_schema(schemas[cap.name]["inputSchema"])
    assert body["capabilities"]["extendedAgentCard"] is True
    assert body["capabilities"]["streaming"] is True
    urls = {i["protocolBinding"]: i["url"] for i in body["supportedInterfaces"]}
    assert urls == {"JSONRPC": BASE + JSONRPC_PATH, "HTTP+JSON": BASE + REST_PREFIX}


async def test_card_declares_security_only_with_authentication() -> None:
    async with todo_app() as (app, _rt):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as hc:
            secured = (await hc.get(CARD_PATH)).json()
    assert secured["securitySchemes"]["foldkit"]["httpAuthSecurityScheme"]["scheme"] == "bearer"
    delete = next(s for s in secured["skills"] if s["id"] == "delete_todo")
    assert delete["securityRequirements"] == [{"schemes": {"foldkit": {}}}]
    create = next(s for s in secured["skills"] if s["id"] == "create_todo")
    assert "securityRequirements" not in create
    async with todo_runtime() as rt:
        open_app = a2a_app(rt, name="todo", version="1", base_url=BASE)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=open_app), base_url=BASE
        ) as hc:
            plain = (await hc.get(CARD_PATH)).json()
    assert "securitySchemes" not in plain
    assert all("securityRequirements" not in s for s in plain["skills"])


async def test_extended_card_lists_what_is_available_for_each_caller() -> None:
    async with todo_app() as (app, rt):
        async with a2a_client(app, "alice-tok") as alice:
            before = await alice.get_extended_agent_card(GetExtendedAgentCardRequest())
            assert "delete_todo" not in [s.id for s in before.skills]
            task, _ = await call(alice, "create_todo", {"title": "Milk"})
            assert task.status.state == S.TASK_STATE_COMPLETED
            task, _ = await call(alice, "select_todo", {"id": "todo-1"})
            assert task.status.state == S.TASK_STATE_COMPLETED
            after = await alice.get_extended_agent_card(GetExtendedAgentCardRequest())
        ids = [s.id for s in after.skills]
        assert ids == [c.name for c in rt.messages.available()]
        assert "delete_todo" in ids
        ext = MessageToDict(after.capabilities.extensions[0])
        assert set(ext["params"]["skills"]) == set(ids)


async def test_extended_card_per_caller_with_a_resolver() -> None:
    """One application instance per user: each caller's card reflects their own Model."""
    async with todo_runtime() as alice_rt, todo_runtime() as bob_rt:
        await alice_rt.messages.dispatch("create_todo", {"title": "Milk"})
        await alice_rt.messages.dispatch("select_todo", {"id": "todo-1"})

        def resolve(ctx: Any) -> AgentRuntime[Any, Any]:
            return alice_rt if ctx.user.user_name == "alice" else bob_rt

        app = a2a_app(
            resolve, name="todo", version="1", base_url=BASE, authentication=BearerBackend()
        )
        async with a2a_client(app, "alice-tok") as alice, a2a_client(app, "bob-tok") as bob:
            a = await alice.get_extended_agent_card(GetExtendedAgentCardRequest())
            b = await bob.get_extended_agent_card(GetExtendedAgentCardRequest())
        assert "delete_todo" in [s.id for s in a.skills]
        assert [s.id for s in b.skills] == ["create_todo"]


# ---------------------------------------------------------------------------------------------
# mounting (how `foldkit-agent serve --a2a` hosts it next to other apps)


async def test_mounted_at_the_root_of_a_parent_app_with_its_lifespan() -> None:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route

    async with todo_runtime() as rt:
        a2a = a2a_app(rt, name="todo", version="1", base_url=BASE)
        entered: list[str] = []

        @asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            async with a2a.router.lifespan_context(a2a):
                entered.append("a2a")
                yield

        async def other(_request: Any) -> PlainTextResponse:
            return PlainTextResponse("other")

        parent = Starlette(routes=[Route("/other", other), Mount("", app=a2a)], lifespan=lifespan)
        async with lifespan(parent):
            async with a2a_client(parent) as client:
                task, _ = await call(client, "create_todo", {"title": "Mounted"})
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=parent), base_url=BASE
            ) as hc:
                assert (await hc.get("/other")).text == "other"
        assert entered == ["a2a"]
        assert task.status.state == S.TASK_STATE_COMPLETED
