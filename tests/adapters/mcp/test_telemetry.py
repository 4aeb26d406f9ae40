"""OpenTelemetry over MCP as the MCP and GenAI semantic conventions name it
(``adapters/mcp/telemetry.py``), read from the SDK's in-memory span exporter and in-memory
metric reader: the todo example over streamable HTTP, in a fresh process where the providers
are set before the server is built (``tests/support/otel_mcp.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.fresh import fresh_python_lines
from tests.support.otel_mcp import CALL_TRACE, CALLER_SPAN, LIST_TRACE

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def observed() -> dict[str, Any]:
    (line,) = fresh_python_lines("from tests.support.otel_mcp import main; main()")
    return json.loads(line)


def spans_named(observed: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [s for s in observed["spans"] if s["name"] == name]


def test_a_tools_call_is_one_server_span_named_by_method_and_tool_under_the_callers_trace(
    observed: dict[str, Any],
) -> None:
    [call] = spans_named(observed, "tools/call create_todo")
    assert call["kind"] == "SERVER"
    assert (call["trace_id"], call["parent"]) == (CALL_TRACE, CALLER_SPAN)  # from _meta
    assert call["attributes"] == {
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": "2026-07-28",
        "jsonrpc.request.id": "3",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "create_todo",
        "network.transport": "tcp",
    }
    assert call["status"] == "UNSET"
    [dispatch] = [
        s
        for s in spans_named(observed, "Agent.dispatch")
        if s["attributes"]["agent.capability"] == "create_todo"
    ]
    assert (dispatch["trace_id"], dispatch["parent"]) == (CALL_TRACE, call["span_id"])


def test_every_tools_list_is_a_span_under_the_callers_trace_kept_bytes_or_not(
    observed: dict[str, Any],
) -> None:
    modern = [
        s
        for s in spans_named(observed, "tools/list")
        if s["attributes"]["mcp.protocol.version"] == "2026-07-28"
    ]
    assert [s["attributes"]["jsonrpc.request.id"] for s in modern] == ["1", "2"]
    for span in modern:
        assert (span["kind"], span["trace_id"], span["parent"]) == (
            "SERVER",
            LIST_TRACE,
            CALLER_SPAN,
        )
        assert span["attributes"]["mcp.method.name"] == "tools/list"
        assert "gen_ai.tool.name" not in span["attributes"]


def test_a_refused_call_is_a_tool_error_span_and_without_meta_starts_its_own_trace(
    observed: dict[str, Any],
) -> None:
    [refused] = spans_named(observed, "tools/call select_todo")
    assert refused["status"] == "ERROR"
    assert refused["attributes"]["error.type"] == "tool_error"
    assert refused["parent"] is None
    assert refused["trace_id"] not in (CALL_TRACE, LIST_TRACE)


def test_a_handshake_era_request_carries_its_session_id(observed: dict[str, Any]) -> None:
    legacy = [
        s
        for s in observed["spans"]
        if s["kind"] == "SERVER"
        and s["attributes"]["mcp.protocol.version"] != "2026-07-28"
        and s["attributes"]["network.transport"] == "tcp"  # the todo server, over HTTP
    ]
    assert [s["name"] for s in legacy] == ["initialize", "notifications/initialized", "tools/list"]
    sessions = {s["attributes"]["mcp.session.id"] for s in legacy}
    assert len(sessions) == 1
    assert len(next(iter(sessions))) == 32  # the SDK's hex session id, as Mcp-Session-Id sends it


def test_the_operation_duration_histogram_is_recorded_per_method_and_tool(
    observed: dict[str, Any],
) -> None:
    points = {
        (
            p["attributes"]["mcp.method.name"],
            p["attributes"].get("gen_ai.tool.name"),
            p["attributes"]["mcp.protocol.version"],
        ): p
        for p in observed["points"]
        if p["attributes"]["network.transport"] == "tcp"  # the todo server, over HTTP
    }
    assert {key: p["count"] for key, p in points.items()} == {
        ("tools/list", None, "2026-07-28"): 2,
        ("tools/call", "create_todo", "2026-07-28"): 1,
        ("tools/call", "select_todo", "2026-07-28"): 1,
        ("initialize", None, "2025-11-25"): 1,
        ("notifications/initialized", None, "2025-11-25"): 1,
        ("tools/list", None, "2025-11-25"): 1,
    }
    in_process = [p for p in observed["points"] if p["attributes"]["network.transport"] == "pipe"]
    assert sorted(p["attributes"]["mcp.method.name"] for p in in_process) == [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/list",
    ]  # the shelf's in-process client: no HTTP request, so not TCP
    for point in observed["points"]:
        assert point["unit"] == "s"
        assert point["bounds"] == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
        assert "mcp.session.id" not in point["attributes"]  # a span's, never a metric's
    assert points["tools/call", "select_todo", "2026-07-28"]["attributes"]["error.type"] == (
        "tool_error"
    )
    assert "error.type" not in points["tools/call", "create_todo", "2026-07-28"]["attributes"]
    assert points["tools/call", "create_todo", "2026-07-28"]["attributes"][
        "gen_ai.operation.name"
    ] == ("execute_tool")


_BUILT_BEFORE_AND_AFTER = """
import asyncio
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from foldkit_agent.adapters.mcp import mcp_server
from foldkit_agent.adapters.mcp.telemetry import Observed
from examples.todo import run_todo

async def main():
    async with run_todo() as (_running, rt):
        before = mcp_server(rt, name="todo", version="1")
        metrics.set_meter_provider(MeterProvider())
        after = mcp_server(rt, name="todo", version="1")
        for server in (before, after):
            print(server.observed, sum(isinstance(m, Observed) for m in server.middleware))

asyncio.run(main())
"""


def test_a_server_built_with_no_provider_set_adds_nothing_to_a_request() -> None:
    """Decided when the server is built: one built before any provider is set has no
    telemetry middleware (and keeps answering lists from kept bytes); one built after a meter
    provider alone is set has it."""
    assert fresh_python_lines(_BUILT_BEFORE_AND_AFTER) == ["False 0", "True 1"]


def test_an_approvals_elicitation_carries_the_calls_trace_context_in_its_meta(
    observed: dict[str, Any],
) -> None:
    """The server writes trace context into the ``_meta`` of what it sends: the person's
    ``elicitation/create`` is in the ``tools/call``'s trace, under the call's own span."""
    [call] = spans_named(observed, "tools/call remove_item")
    [sent] = spans_named(observed, "MCP send elicitation/create")
    version, trace_id, span_id, _flags = observed["elicited_meta"]["traceparent"].split("-")
    assert (version, trace_id, span_id) == ("00", call["trace_id"], sent["span_id"])
    [dispatch] = [
        s
        for s in spans_named(observed, "Agent.dispatch")
        if s["attributes"]["agent.capability"] == "remove_item"
    ]
    assert (sent["parent"], dispatch["parent"]) == (dispatch["span_id"], call["span_id"])
