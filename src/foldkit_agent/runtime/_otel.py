"""The one module that reads OpenTelemetry's internals: whether a tracer or meter provider is
set, and the semantic conventions' names, which the conventions package keeps in modules it
calls incubating.

The dispatch path asks on every call, so that the first call after ``set_tracer_provider`` is
traced whenever the runtime was bound. The API's public answers cost more than the rest of a
step: ``ProxyTracerProvider().get_tracer`` answers a ``ProxyTracer`` until a provider is set,
but builds one (and its no-op tracer) each time it is asked, and ``get_tracer_provider()``
looks ``OTEL_PYTHON_TRACER_PROVIDER`` up in ``os.environ`` each time while none is set. The
API keeps the provider in one module global that ``set_tracer_provider`` sets once (a second
call is refused), which both of those read; this reads it too, and the meter provider's
global likewise. ``tests/runtime/test_otel.py`` is the upgrade test: it fails when an upgrade
moves or renames those globals or the conventions' names.

The MCP and GenAI names (``mcp.method.name``, ``gen_ai.tool.name``, the
``mcp.server.operation.duration`` histogram, ...) are still "development" in the conventions,
so the package publishes them under ``opentelemetry.semconv._incubating``; they are imported
here alone and re-exported under their own names.
"""

from __future__ import annotations

from opentelemetry import trace as _api
from opentelemetry.metrics import _internal as _metrics_api
from opentelemetry.semconv._incubating.attributes.gen_ai_attributes import (
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_NAME,
)
from opentelemetry.semconv._incubating.attributes.jsonrpc_attributes import JSONRPC_REQUEST_ID
from opentelemetry.semconv._incubating.attributes.mcp_attributes import (
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
)
from opentelemetry.semconv._incubating.attributes.rpc_attributes import RPC_RESPONSE_STATUS_CODE
from opentelemetry.semconv._incubating.metrics.mcp_metrics import MCP_SERVER_OPERATION_DURATION
from opentelemetry.semconv.attributes.error_attributes import ERROR_TYPE
from opentelemetry.semconv.attributes.network_attributes import NETWORK_TRANSPORT

__all__ = [
    "ERROR_TYPE",
    "EXECUTE_TOOL",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_TOOL_NAME",
    "JSONRPC_REQUEST_ID",
    "MCP_METHOD_NAME",
    "MCP_PROTOCOL_VERSION",
    "MCP_SERVER_OPERATION_DURATION",
    "MCP_SESSION_ID",
    "NETWORK_TRANSPORT",
    "RPC_RESPONSE_STATUS_CODE",
    "meter_provider_set",
    "provider_set",
]

EXECUTE_TOOL = "execute_tool"
"""``gen_ai.operation.name`` of a ``tools/call``, a well-known value of the conventions (the
package's enum of them is marked deprecated, as moved to the GenAI conventions, so the value
is written here)."""


def provider_set() -> bool:
    """Whether a global tracer provider was set (by ``set_tracer_provider``, or loaded from
    ``OTEL_PYTHON_TRACER_PROVIDER`` by ``get_tracer_provider()``).

    Example:
        >>> provider_set()  # in a process that set none
        False
    """
    return _api._TRACER_PROVIDER is not None  # pyright: ignore[reportPrivateUsage]


def meter_provider_set() -> bool:
    """:func:`provider_set` for the global meter provider (``set_meter_provider``, or
    ``OTEL_PYTHON_METER_PROVIDER`` loaded by ``get_meter_provider()``)."""
    return _metrics_api._METER_PROVIDER is not None  # pyright: ignore[reportPrivateUsage]
