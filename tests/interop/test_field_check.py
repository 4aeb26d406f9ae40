"""The field check: in one agent run per framework, each driven by that framework's own
scripted model, the agent selects a todo and then deletes it, against
``foldkit-agent serve tests.support.field_todo:runtime --mcp http`` with the command's
defaults. ``delete_todo`` is available only once a todo is selected, so it appears mid-run.

Every framework here lists the tools once per run and never acts on ``tools/list_changed``
(pydantic-ai's MCP toolset caches its list, the OpenAI Agents SDK with ``cache_tools_list``,
the Vercel AI SDK's ``client.tools()``, LangChain's, ADK's, mcp-use's, smolagents' and
LlamaIndex's MCP tools, and a client that lists once). With ``serve``'s default listing every
capability is listed from the start, each saying when it is available, so the run finds
``delete_todo``; with ``--listing available`` the same run cannot (the field reports' "tool
not found"). The runs of LangChain, Google ADK, mcp-use, smolagents and LlamaIndex, whose MCP
clients need the mcp 1.x SDK, are scripts in ``tests/interop/field/`` run by ``.venv-field``
(``make field``); they also call ``delete_todo`` too early, and each framework hands its model
the refusal's ``Refused: `` sentence, marked as an error or not; CrewAI too once
``make field-crewai`` has installed it (``.venv-crewai``, left out of ``make test``). ADK's
``RemoteA2aAgent`` runs docs/a2a.md's recipe against ``serve --a2a``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from agents import Agent as OpenAIAgent
from agents import RunConfig, Runner
from agents.mcp import MCPServerStreamableHttp
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from fastmcp import Client as FastMCPClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support.field_todo import SELECTED
from tests.support.paths import ROOT
from tests.support.serving import serve_process

TARGET = "tests.support.field_todo:runtime"
PLAN: list[tuple[str, dict[str, Any]]] = [("select_todo", {"id": "t1"}), ("delete_todo", {})]
INTEROP = ROOT / "tests" / "interop"
AI_SDK = INTEROP / "node_modules" / "@ai-sdk" / "mcp"


@asynccontextmanager
async def served(*args: str) -> AsyncIterator[str]:
    """``serve TARGET --mcp http ARGS``; yields the MCP URL."""
    async with serve_process(TARGET, "--mcp", "http", *args) as origin:
        yield f"{origin}/mcp"


async def todos_left(url: str) -> list[str]:
    """The ids of the todos the application still has, read from its context."""
    async with Client(streamable_http_client(url)) as client:
        read = await client.read_resource("agent://context")
    text = read.contents[0]
    assert hasattr(text, "text")
    context = json.loads(text.text)
    return [t["id"] for t in context["todos"]]


# -- pydantic-ai (FunctionModel) ---------------------------------------------------------------


def pydantic_ai_script(offered: list[list[str]]) -> FunctionModel:
    def step(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append(sorted(t.name for t in info.function_tools))
        turn = len(offered) - 1
        if turn < len(PLAN):
            return ModelResponse(parts=[ToolCallPart(*PLAN[turn])])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(step)


async def test_pydantic_ai_selects_then_deletes_with_serves_default_listing() -> None:
    async with served() as url:
        offered: list[list[str]] = []
        run = await Agent(pydantic_ai_script(offered), toolsets=[MCPToolset(url)]).run(
            "Select the todo t1, then delete it."
        )
        assert run.output == "done"
        assert offered[0] == ["delete_todo", "select_todo"]  # listed before it is available
        assert await todos_left(url) == ["t2"]


async def test_pydantic_ai_cannot_find_the_later_capability_with_listing_available() -> None:
    """What the default fixes: the cached list of the first turn never has ``delete_todo``."""
    async with served("--listing", "available") as url:
        offered: list[list[str]] = []
        await Agent(pydantic_ai_script(offered), toolsets=[MCPToolset(url)]).run(
            "Select the todo t1, then delete it."
        )
        assert all(o == ["select_todo"] for o in offered)
        assert await todos_left(url) == ["t1", "t2"]  # nothing was deleted


# -- OpenAI Agents SDK (ScriptedModel) ---------------------------------------------------------


async def test_openai_agents_sdk_with_a_cached_tool_list_selects_then_deletes() -> None:
    outputs: list[str] = []

    def after(call: Any) -> Any:
        for item in call.input if isinstance(call.input, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                outputs.append(str(item.get("output")))
        return None

    def respond(n: int) -> Any:
        def step(call: Any) -> Any:
            after(call)
            if n < len(PLAN):
                name, args = PLAN[n]
                return [function_call(name, args, call_id=f"call-{n}")]
            return [assistant_message("done")]

        return step

    model = ScriptedModel([ModelStep.respond(respond(n)) for n in range(len(PLAN) + 1)])
    async with served() as url:
        server = MCPServerStreamableHttp({"url": url}, cache_tools_list=True)
        async with server:
            agent = OpenAIAgent(name="todos", model=model, mcp_servers=[server])
            run = await Runner.run(
                agent,
                "Select the todo t1, then delete it.",
                run_config=RunConfig(tracing_disabled=True),
            )
        assert run.final_output == "done"
        assert await todos_left(url) == ["t2"]
    assert not any(o.startswith("Refused: ") for o in outputs), outputs


# -- clients that list once: fastmcp and the official client -----------------------------------


async def test_fastmcp_client_listing_once_selects_then_deletes() -> None:
    async with served() as url:
        async with FastMCPClient(url) as client:
            listed = {t.name: t for t in await client.list_tools()}
            assert (listed["delete_todo"].description or "").endswith(
                f"Available only when {SELECTED}."
            )
            for name, args in PLAN:
                result = await client.call_tool(name, args)
                assert result.is_error is False
        assert await todos_left(url) == ["t2"]


async def test_the_official_client_listing_once_is_refused_in_plain_words_then_succeeds() -> None:
    """A call made before its time reads as a refusal, and says what to do first, even to a
    framework that drops ``isError`` (LlamaIndex, smolagents and CrewAI show only the text)."""
    async with served() as url:
        async with Client(streamable_http_client(url)) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            assert listed == ["select_todo", "delete_todo"]
            early = await client.call_tool("delete_todo", {})
            text = getattr(early.content[0], "text", "")
            assert early.is_error is True
            assert text == (
                "Refused: 'delete_todo' is not available in the application's current state; "
                f"it is available only when {SELECTED}. Make that so first (the context shows "
                "the state), then call it again."
            )
            assert early.structured_content is not None
            assert early.structured_content["available_when"] == SELECTED
            for name, args in PLAN:
                assert (await client.call_tool(name, args)).is_error is False
        assert await todos_left(url) == ["t2"]


# -- the Vercel AI SDK (MockLanguageModelV4), a framework that snapshots -----------------------


def node_env() -> dict[str, str]:
    home = Path(tempfile.gettempdir()) / "foldkit-field-check-home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home), "NO_COLOR": "1"}


async def ai_sdk_run(url: str) -> dict[str, Any]:
    return await field_run(["node", str(INTEROP / "ai_sdk_agent.mjs")], url)


no_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
no_ai_sdk = pytest.mark.skipif(
    not AI_SDK.exists(), reason="npm packages are not installed in tests/interop"
)


@pytest.mark.interop
@no_node
@no_ai_sdk
async def test_the_vercel_ai_sdk_selects_then_deletes_with_serves_default_listing() -> None:
    async with served() as url:
        seen = await ai_sdk_run(url)
        assert seen["listed"] == ["select_todo", "delete_todo"]
        assert [(r["tool"], r["error"]) for r in seen["results"]] == [
            ("select_todo", False),
            ("delete_todo", False),
        ]
        assert seen["text"] == "done"
        assert await todos_left(url) == ["t2"]


@pytest.mark.interop
@no_node
@no_ai_sdk
async def test_the_vercel_ai_sdk_run_ends_on_tool_not_found_with_listing_available() -> None:
    async with served("--listing", "available") as url:
        seen = await ai_sdk_run(url)
        assert seen["listed"] == ["select_todo"]
        assert "delete_todo" in seen.get("error", "") or all(
            r["tool"] != "delete_todo" or r["error"] for r in seen.get("results", [])
        )
        assert await todos_left(url) == ["t1", "t2"]


# -- frameworks on the mcp 1.x SDK, each in .venv-field: LangChain, Google ADK, mcp-use,
# smolagents, LlamaIndex; and the MCP TypeScript SDK's client -----------------------------

FIELD = INTEROP / "field"
FIELD_PYTHON = ROOT / ".venv-field" / "bin" / "python"
FRAMEWORKS = {
    "langchain": "LangChain (langchain-mcp-adapters, create_agent, GenericFakeChatModel)",
    "adk": "Google ADK (McpToolset, InMemoryRunner, a scripted BaseLlm)",
    "mcp_use": "mcp-use (MCPAgent, a scripted LangChain chat model)",
    "smolagents": "smolagents (ToolCollection.from_mcp, ToolCallingAgent, a scripted Model)",
    "llamaindex": "LlamaIndex (McpToolSpec, FunctionAgent, MockFunctionCallingLLM)",
}
CREWAI_PYTHON = ROOT / ".venv-crewai" / "bin" / "python"
CREWAI = "CrewAI (crewai-tools' MCPServerAdapter, a Crew of one Agent, a scripted BaseLLM)"
if CREWAI_PYTHON.exists():  # `make field-crewai`, which `make test` leaves out (1.1 GB)
    FRAMEWORKS["crewai"] = CREWAI
no_field_venv = pytest.mark.skipif(
    not FIELD_PYTHON.exists(), reason="the field frameworks are not installed: run `make field`"
)


TELEMETRY_OFF = {
    "MCP_USE_ANONYMIZED_TELEMETRY": "false",
    "LANGSMITH_TRACING": "false",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "OTEL_SDK_DISABLED": "true",
    "DO_NOT_TRACK": "1",
}
"""No framework phones home from a test run (mcp-use's, LangSmith's and CrewAI's telemetry)."""


async def field_run(command: list[str], url: str) -> dict[str, Any]:
    """Run one framework's agent script against ``url``; the JSON line it printed last."""
    proc = await asyncio.create_subprocess_exec(
        *command,
        url,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**node_env(), **TELEMETRY_OFF},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    seen: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return seen


def framework_command(framework: str) -> list[str]:
    if framework == "ts_sdk":
        return ["node", str(INTEROP / "ts_sdk_agent.mjs")]
    if framework == "crewai":
        return [str(CREWAI_PYTHON), str(FIELD / "crewai_agent.py")]
    return [str(FIELD_PYTHON), str(FIELD / f"{framework}_agent.py")]


EARLY = (
    "Refused: 'delete_todo' is not available in the application's current state; it is "
    f"available only when {SELECTED}."
)
"""How the refusal of the too-early call starts, in whatever each framework hands its model."""
PLAN_TOOLS = ("delete_todo", "select_todo", "delete_todo")
"""The tools each .venv-field run calls, in order (tests/interop/field/plan.py)."""
DROPS_IS_ERROR = {"crewai", "llamaindex", "mcp_use", "smolagents"}
"""Frameworks whose tool result does not mark a refusal as an error: the text carries it
(mcp-use wraps it in a client-side RuntimeError and traceback, LlamaIndex in the result's repr)."""


@pytest.mark.interop
@no_field_venv
@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
async def test_each_framework_is_refused_too_early_then_selects_and_deletes(
    framework: str,
) -> None:
    async with served() as url:
        seen = await field_run(framework_command(framework), url)
        # delete_todo offered before it is available (mcp-use adds the resources as tools)
        assert {"delete_todo", "select_todo"} <= set(seen["offered"][0]), seen
        marked = framework not in DROPS_IS_ERROR
        assert [(r["tool"], r["error"]) for r in seen["results"]] == [
            ("delete_todo", marked),
            ("select_todo", False),
            ("delete_todo", False),
        ], seen
        assert EARLY in seen["results"][0]["text"]
        assert seen["text"] == "done"
        assert await todos_left(url) == ["t2"]


@pytest.mark.interop
@no_field_venv
async def test_adk_never_finds_the_later_capability_with_listing_available() -> None:
    """What the default fixes, in ADK: each turn's tools come from a list without
    ``delete_todo``, so ADK answers its model with its own "no tool with that name" (the
    field report's "tool not found")."""
    async with served("--listing", "available") as url:
        seen = await field_run(framework_command("adk"), url)
        assert all(o == ["select_todo"] for o in seen["offered"])
        early, selected, late = seen["results"]
        assert (early["tool"], selected["tool"], late["tool"]) == PLAN_TOOLS
        assert "no tool with that name is available" in late["text"]
        assert await todos_left(url) == ["t1", "t2"]  # nothing was deleted


@pytest.mark.interop
@no_node
@no_ai_sdk
async def test_the_mcp_typescript_sdk_client_is_refused_too_early_then_selects_and_deletes() -> (
    None
):
    async with served() as url:
        seen = await field_run(framework_command("ts_sdk"), url)
        assert seen["offered"] == [["delete_todo", "select_todo"]] * 3  # one listing
        assert [(r["tool"], r["error"]) for r in seen["results"]] == [
            ("delete_todo", True),
            ("select_todo", False),
            ("delete_todo", False),
        ]
        assert seen["results"][0]["text"].startswith(EARLY)
        assert seen["text"] == "done"
        assert await todos_left(url) == ["t2"]


# -- Google ADK's RemoteA2aAgent over A2A: docs/a2a.md's recipe, run ------------------------


@pytest.mark.interop
@no_field_venv
async def test_adk_remote_a2a_agents_name_their_skill_and_select_then_delete() -> None:
    """One ``RemoteA2aAgent`` per skill, each naming it with ADK's request-metadata hook;
    the one with input sends it as a data part (docs/a2a.md). Without the hook, ADK's run ends
    on the refusal that lists the skills and shows how to name one."""
    async with serve_process(TARGET, "--mcp", "http", "--a2a") as origin:
        seen = await field_run([str(FIELD_PYTHON), str(FIELD / "adk_a2a_agent.py")], origin)
        assert seen["no_skill_named"]["error"] == (
            "A2A request failed: Refused: name the skill to run (this agent runs one skill per "
            "message, and nothing was run). Its skills: select_todo, delete_todo. Set "
            'metadata[\'https://foldkit-agent.dev/a2a/skills/v1\'] = {"skill": "select_todo"} '
            "on the request or the message, and send the skill's input as one data part (its "
            "schema is on the agent card's skill)."
        )
        selected, deleted = seen["select_todo"], seen["delete_todo"]
        assert selected["state"] == deleted["state"] == "TASK_STATE_COMPLETED"
        assert selected["result"]["message"] == {"_tag": "SelectedTodo", "id": "t1"}
        assert deleted["result"]["message"] == {"_tag": "DeletedSelected"}
        assert await todos_left(f"{origin}/mcp") == ["t2"]
