"""OpenTelemetry for MCP, as the MCP and GenAI semantic conventions name it.

The span is the SDK's: mcp 2.x puts its ``OpenTelemetryMiddleware`` first in every server's
middleware, and it opens one ``SERVER`` span per request named ``{mcp.method.name} {target}``
(``tools/call create_todo``, ``tools/list``) with ``mcp.method.name``,
``mcp.protocol.version``, ``jsonrpc.request.id``, ``gen_ai.operation.name`` and
``gen_ai.tool.name``, whose parent is the trace context the caller put in ``params._meta``
(``traceparent``, ``tracestate``); the SDK also writes the current context into the ``_meta``
of every request the server sends (an approval's ``elicitation/create``). The runtime's
``Agent.dispatch`` span of the call is a child of that span.

:class:`Observed`, right after it, adds what the conventions recommend and the SDK's span
leaves out (``mcp.session.id``, ``network.transport``) and records the
``mcp.server.operation.duration`` histogram (seconds, the conventions' buckets) with
``mcp.method.name``, ``gen_ai.tool.name``, ``gen_ai.operation.name``, ``mcp.protocol.version``,
``network.transport`` and, when the operation failed, ``error.type`` (the JSON-RPC error code,
or ``tool_error`` for a ``CallToolResult`` with ``isError``) and ``rpc.response.status_code``.

:func:`observing` decides once, when :func:`~.server.mcp_server` builds the server: with no
tracer or meter provider set by then, nothing is added to any request. Set the providers
before the server is built (``opentelemetry-instrument foldkit-agent serve ...``, or in the
factory's module).
"""

from __future__ import annotations

import time
from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import INVALID_PARAMS, CallToolResult
from opentelemetry import metrics, trace
from opentelemetry.semconv.attributes.network_attributes import NetworkTransportValues
from pydantic import ValidationError

from ...runtime._otel import (
    ERROR_TYPE,
    EXECUTE_TOOL,
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_NAME,
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_SERVER_OPERATION_DURATION,
    MCP_SESSION_ID,
    NETWORK_TRANSPORT,
    RPC_RESPONSE_STATUS_CODE,
    meter_provider_set,
    provider_set,
)
from ._sdk import connection_of

__all__ = ["DURATION_BUCKETS", "TOOL_ERROR", "Observed", "observing"]

DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
"""The explicit bucket boundaries (seconds) the conventions advise for
``mcp.server.operation.duration``."""

TOOL_ERROR = "tool_error"
"""``error.type`` of a ``tools/call`` answered with ``isError: true`` (a refusal or a defect)."""

_TCP = NetworkTransportValues.TCP.value
_PIPE = NetworkTransportValues.PIPE.value


def observing() -> bool:
    """Whether a tracer or meter provider is set now, so a server built now is observed.

    Example:
        >>> observing()  # in a process that set neither
        False
    """
    return provider_set() or meter_provider_set()


class Observed:
    """A server middleware after the SDK's span: the conventions' attributes the span lacks,
    and one ``mcp.server.operation.duration`` measurement per request (module docs).

    Raises nothing of its own: what ``call_next`` raises is measured and raised again.
    """

    def __init__(self) -> None:
        self.duration = metrics.get_meter("foldkit_agent").create_histogram(
            MCP_SERVER_OPERATION_DURATION,
            unit="s",
            description="MCP request or notification duration as observed on the receiver "
            "from the time it was received until the result or ack is sent.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        method = ctx.method
        # an HTTP request rides on TCP; without one the messages come through stdio's pipe
        # (or an in-process client's memory streams, the nearest of the conventions' values)
        transport = _TCP if ctx.request is not None else _PIPE
        attributes: dict[str, str] = {
            MCP_METHOD_NAME: method,
            MCP_PROTOCOL_VERSION: ctx.protocol_version,
            NETWORK_TRANSPORT: transport,
        }
        if method == "tools/call":
            name = ctx.params.get("name") if ctx.params else None
            attributes[GEN_AI_OPERATION_NAME] = EXECUTE_TOOL
            if isinstance(name, str):
                attributes[GEN_AI_TOOL_NAME] = name
        span = trace.get_current_span()
        span.set_attribute(NETWORK_TRANSPORT, transport)
        connection = connection_of(ctx)
        session = None if connection is None else connection.session_id
        if session is not None:
            span.set_attribute(MCP_SESSION_ID, session)
        started = time.perf_counter()
        try:
            result = await call_next(ctx)
        except MCPError as err:
            attributes[ERROR_TYPE] = attributes[RPC_RESPONSE_STATUS_CODE] = str(err.error.code)
            raise
        except ValidationError:  # the SDK answers it as invalid parameters
            attributes[ERROR_TYPE] = attributes[RPC_RESPONSE_STATUS_CODE] = str(INVALID_PARAMS)
            raise
        except Exception as exc:
            attributes[ERROR_TYPE] = type(exc).__qualname__
            raise
        else:
            match result:
                case CallToolResult(is_error=True) | {"isError": True}:
                    attributes[ERROR_TYPE] = TOOL_ERROR
                case _:
                    pass
            return result
        finally:
            self.duration.record(time.perf_counter() - started, attributes)
