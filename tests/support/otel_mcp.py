"""The todo example over MCP (streamable HTTP, on a loopback port) with OpenTelemetry's SDK
set up first: an in-memory span exporter and an in-memory metric reader. Run in a fresh
process (``python -c "from tests.support.otel_mcp import main; main()"``), since the
providers are process-global and a server built after they are set is observed
(``adapters/mcp/telemetry.py``); it prints one JSON object: the finished spans and the
``mcp.server.operation.duration`` data points.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from examples.todo import run_todo
from tests.support.hostile import MODERN_META, mcp_headers
from tests.support.serving import served

LIST_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALL_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "00f067aa0ba902b7"
"""The trace ids and the parent span id the raw requests carry in ``_meta.traceparent``."""


def traceparent(trace_id: str) -> str:
    return f"00-{trace_id}-{CALLER_SPAN}-01"


def request(ident: int, method: str, params: dict[str, Any], trace_id: str | None) -> Any:
    meta: dict[str, Any] = dict(MODERN_META)
    if trace_id is not None:
        meta["traceparent"] = traceparent(trace_id)
        meta["tracestate"] = "rojo=00f067aa0ba902b7"
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": meta}}


async def scenario() -> dict[str, Any]:
    exporter = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(tracing)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    from foldkit_agent.adapters.mcp import http_app  # built after the providers are set

    async with run_todo() as (_running, rt):
        app = http_app(rt, name="todo", version="1")
        async with served(app) as origin, httpx.AsyncClient(timeout=10) as http:
            url = f"{origin}/mcp"
            list_headers = {**mcp_headers(), "Mcp-Method": "tools/list"}
            del list_headers["Mcp-Name"]
            for ident in (1, 2):  # the second list would be answered from kept bytes
                body = request(ident, "tools/list", {}, LIST_TRACE)
                listed = await http.post(url, json=body, headers=list_headers)
                assert listed.status_code == 200, listed.text
            created = request(3, "tools/call", {"name": "create_todo"}, CALL_TRACE)
            created["params"]["arguments"] = {"title": "Milk"}
            answer = await http.post(url, json=created, headers=mcp_headers("create_todo"))
            assert '"completed"' in answer.text, answer.text
            refused = request(4, "tools/call", {"name": "select_todo"}, None)
            refused["params"]["arguments"] = {"id": "todo-404"}
            answer = await http.post(url, json=refused, headers=mcp_headers("select_todo"))
            assert '"isError":true' in answer.text, answer.text
            wire = streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=10))
            async with Client(wire, mode="legacy") as client:  # a handshake-era session
                await client.list_tools()
    elicited = await ask_a_person()
    points: list[dict[str, Any]] = []
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name != "mcp.server.operation.duration":
                    continue
                for point in metric.data.data_points:
                    assert isinstance(point, HistogramDataPoint)
                    points.append(
                        {
                            "unit": metric.unit,
                            "attributes": dict(point.attributes or {}),
                            "count": point.count,
                            "bounds": list(point.explicit_bounds),
                        }
                    )
    spans: list[dict[str, Any]] = []
    for span in exporter.get_finished_spans():
        assert span.context is not None
        spans.append(
            {
                "name": span.name,
                "kind": span.kind.name,
                "trace_id": format(span.context.trace_id, "032x"),
                "span_id": format(span.context.span_id, "016x"),
                "parent": None if span.parent is None else format(span.parent.span_id, "016x"),
                "status": span.status.status_code.name,
                "attributes": {k: v for k, v in (span.attributes or {}).items()},
            }
        )
    return {"spans": spans, "points": points, "elicited_meta": elicited}


async def ask_a_person() -> dict[str, Any]:
    """A handshake-era ``remove_item`` of the shelf (``confirm=True``) whose approval is asked
    by ``elicitation/create``; the ``_meta`` that request carried."""
    from foldkit_agent.adapters.mcp import mcp_server
    from tests.support.approval_app import shelf

    seen: list[dict[str, Any]] = []

    async def person(_context: Any, params: Any) -> types.ElicitResult:
        seen.append(dict(params.meta or {}))
        return types.ElicitResult(action="accept", content={"approve": True})

    async with shelf("milk") as (_running, rt):
        server = mcp_server(rt, name="shelf", version="1")
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            result = await client.call_tool("remove_item", {"title": "milk"})
            assert result.is_error is False, result
    (meta,) = seen
    return meta


def main() -> None:
    print(json.dumps(asyncio.run(scenario()), default=str))
