"""MCP Apps: the contract's view as a ui:// resource, tools linked to it, and a view's click
audited as the view's, in-process with the official SDK Client in both protocol eras.

The browser side (ext-apps' AppBridge rendering the view against a real serve) is
tests/adapters/mcp/test_apps_browser.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import mcp.types as types
import pytest
from mcp import Client, MCPError

from examples.todo import TodoAgent, TodoMessage, run_todo
from examples.todo.app import App, ClearedSelection
from foldkit_agent import agent, projection
from foldkit_agent.adapters.mcp import CONTEXT_URI, mcp_server
from foldkit_agent.adapters.mcp.apps import VIEW_MIME, VIEW_URI, generated
from tests.support.apps_todo import AppOnly
from tests.support.inproc import EVERY
from tests.support.mcp_cart import run_cart

MODES = ["legacy", "auto"]

pytestmark = pytest.mark.filterwarnings("ignore:resources/subscribe is removed")


def config_of(html: str) -> dict[str, Any]:
    """The capabilities and title the generated view was given (its JSON script element)."""
    found = re.search(r'<script type="application/json" id="foldkit-view">(.*?)</script>', html)
    assert found is not None
    return json.loads(found.group(1))


@pytest.mark.parametrize("mode", MODES)
async def test_the_view_is_a_ui_resource_a_host_renders(mode: str) -> None:
    async with run_todo() as (_running, rt):
        async with Client(mcp_server(rt, name="todo", version="1"), mode=mode) as client:
            listed = {str(r.uri): r for r in (await client.list_resources()).resources}
            entry = listed[VIEW_URI]
            assert (entry.mime_type, entry.title) == (VIEW_MIME, "Todos")
            csp = {"connectDomains": [], "resourceDomains": []}
            assert entry.meta == {"ui": {"csp": csp, "prefersBorder": True}}
            contents = (await client.read_resource(VIEW_URI)).contents[0]
            assert isinstance(contents, types.TextResourceContents)
            assert contents.mime_type == "text/html;profile=mcp-app"
            assert contents.meta == {"ui": {"csp": csp, "prefersBorder": True}}
            assert contents.text.startswith("<!doctype html>")
            config = config_of(contents.text)
            assert (config["title"], config["context"]) == ("Todos", True)
            assert [c["name"] for c in config["capabilities"]] == list(EVERY)
            schemas = {c.name: c.input_schema for c in rt.messages.all()}
            assert {c["name"]: c["input_schema"] for c in config["capabilities"]} == schemas


@pytest.mark.parametrize("mode", MODES)
async def test_every_tool_opens_the_view(mode: str) -> None:
    async with run_todo() as (_running, rt):
        server = mcp_server(rt, name="todo", version="1", listing="all")
        async with Client(server, mode=mode) as client:
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == list(EVERY)
            for t in tools:
                assert t.meta == {"ui": {"resourceUri": VIEW_URI}, "ui/resourceUri": VIEW_URI}


@pytest.mark.parametrize("mode", MODES)
async def test_an_app_only_capability_is_visible_to_the_app_alone(mode: str) -> None:
    async with run_todo() as (running, _rt):
        rt = TodoAgent.bind(definition=AppOnly, host=running.host)
        async with Client(mcp_server(rt, name="todo", version="1"), mode=mode) as client:
            tools = {t.name: t.meta for t in (await client.list_tools()).tools}
            assert tools == {
                "selected_todo": {"ui": {"resourceUri": VIEW_URI}, "ui/resourceUri": VIEW_URI},
                "clear_selection": {
                    "ui": {"resourceUri": VIEW_URI, "visibility": ["app"]},
                    "ui/resourceUri": VIEW_URI,
                },
            }
        rt.close()


@pytest.mark.parametrize("mode", MODES)
async def test_a_click_and_the_model_call_are_one_call_told_apart_by_actor(mode: str) -> None:
    async with run_todo() as (_running, rt):
        async with Client(mcp_server(rt, name="todo", version="1"), mode=mode) as client:
            clicked = await client.call_tool(
                "create_todo", {"title": "Milk"}, meta={"foldkit/actor": "view"}
            )
            called = await client.call_tool("create_todo", {"title": "Bread"})
            forged = await client.call_tool(
                "create_todo", {"title": "Eggs"}, meta={"foldkit/actor": "admin"}
            )
            refused = await client.call_tool(
                "delete_todo", {}, meta={"foldkit/actor": "view"}
            )  # nothing is selected: refused for the view as for the model
            assert [r.is_error for r in (clicked, called, forged, refused)] == [
                False,
                False,
                False,
                True,
            ]
            context = json.loads(
                (await client.read_resource(CONTEXT_URI)).contents[0].text  # type: ignore[union-attr]
            )
        assert [t["title"] for t in context["todos"]] == ["Milk", "Bread", "Eggs"]
        audited = [(e.capability, e.decision, e.actor) for e in rt.audit.entries()]
        assert audited == [
            ("create_todo", "dispatched", "view"),
            ("create_todo", "dispatched", "agent"),
            ("create_todo", "dispatched", "agent"),
            ("delete_todo", "refused", "view"),
        ]


@pytest.mark.parametrize("mode", MODES)
async def test_the_context_read_says_what_is_available_now(mode: str) -> None:
    async with run_todo() as (_running, rt):
        async with Client(mcp_server(rt, name="todo", version="1"), mode=mode) as client:
            before = (await client.read_resource(CONTEXT_URI)).contents[0]
            await client.call_tool("create_todo", {"title": "Milk"})
            after = (await client.read_resource(CONTEXT_URI)).contents[0]
            todos = (await client.read_resource("agent://resources/todos")).contents[0]
        assert before.meta == {"foldkit/available": ["create_todo"]}
        assert after.meta == {"foldkit/available": [*EVERY[:4]]}
        assert todos.meta is None  # only the context read, which a view reads, says it


async def test_a_contract_without_a_view_offers_none() -> None:
    async with run_cart() as cart:
        async with Client(mcp_server(cart.rt, name="cart", version="1")) as client:
            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            assert VIEW_URI not in uris
            assert all(t.meta is None for t in (await client.list_tools()).tools)
            with pytest.raises(MCPError) as info:
                await client.read_resource(VIEW_URI)
            assert info.value.error.code == types.INVALID_PARAMS


OWN_HTML = "<!doctype html><html><body><p>Our own view</p></body></html>"


async def test_the_apps_own_html_is_served_as_written_with_its_origins() -> None:
    own = TodoAgent.make(
        context=projection.pick(App.model.todos),
        messages=TodoAgent.expose(TodoMessage, {ClearedSelection: "Clear the selection"}),
        view=agent.view(
            html=OWN_HTML,
            connect_domains=["https://api.example.com"],
            resource_domains=["https://*.cdn.example.com"],
        ),
    )
    async with run_todo() as (running, _rt):
        rt = TodoAgent.bind(definition=own, host=running.host)
        async with Client(mcp_server(rt, name="todo", version="1")) as client:
            contents = (await client.read_resource(VIEW_URI)).contents[0]
        rt.close()
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == OWN_HTML
    assert contents.meta == {
        "ui": {
            "csp": {
                "connectDomains": ["https://api.example.com"],
                "resourceDomains": ["https://*.cdn.example.com"],
            },
            "prefersBorder": True,
        }
    }


def test_a_text_in_a_description_stays_text_in_the_generated_view() -> None:
    hostile = TodoAgent.make(
        context=projection.pick(App.model.todos),
        messages=TodoAgent.expose(
            TodoMessage, {ClearedSelection: "</script><script>alert(1)</script> {{script}}"}
        ),
        view=agent.view(title="<b>Todos</b>"),
    )
    html = generated(hostile)
    assert html.count("</script>") == 2  # the config's and the bundle's own
    assert "<b>" not in html
    assert "&lt;b&gt;Todos&lt;/b&gt;" in html
    described = config_of(html)["capabilities"][0]["description"]
    assert described == "</script><script>alert(1)</script> {{script}}"
