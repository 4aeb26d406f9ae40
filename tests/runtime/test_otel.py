"""What ``runtime/_otel.py`` reads in opentelemetry-api is still there and still means a
provider was set, and the conventions' names it imports still read as the MCP and GenAI
semantic conventions write them: this fails when an upgrade moves or renames a global or a
name (the tracing behaviour itself is tested in test_tracing.py, the MCP conventions in
tests/adapters/mcp/test_telemetry.py)."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.metrics import _internal as metrics_internal

from foldkit_agent.runtime import _otel
from tests.support.fresh import fresh_python_lines

_FRESH_PROCESS = """
from opentelemetry import trace
from opentelemetry.metrics import _internal as metrics_internal

from foldkit_agent.runtime import _otel
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from foldkit_agent.runtime._otel import meter_provider_set, provider_set

def public_answer():
    return not isinstance(trace.ProxyTracerProvider().get_tracer("x"), trace.ProxyTracer)

print(provider_set(), public_answer(), meter_provider_set())
trace.set_tracer_provider(TracerProvider())
print(provider_set(), public_answer(), meter_provider_set())
metrics.set_meter_provider(MeterProvider())
print(meter_provider_set(), isinstance(metrics.get_meter_provider(), MeterProvider))
"""


def test_the_global_it_reads_is_still_in_the_api() -> None:
    assert "_TRACER_PROVIDER" in vars(trace)
    assert "_METER_PROVIDER" in vars(metrics_internal)


def test_the_conventions_names_are_the_ones_the_conventions_write() -> None:
    assert {name: getattr(_otel, name) for name in _otel.__all__ if name.isupper()} == {
        "ERROR_TYPE": "error.type",
        "EXECUTE_TOOL": "execute_tool",
        "GEN_AI_OPERATION_NAME": "gen_ai.operation.name",
        "GEN_AI_TOOL_NAME": "gen_ai.tool.name",
        "JSONRPC_REQUEST_ID": "jsonrpc.request.id",
        "MCP_METHOD_NAME": "mcp.method.name",
        "MCP_PROTOCOL_VERSION": "mcp.protocol.version",
        "MCP_SERVER_OPERATION_DURATION": "mcp.server.operation.duration",
        "MCP_SESSION_ID": "mcp.session.id",
        "NETWORK_TRANSPORT": "network.transport",
        "RPC_RESPONSE_STATUS_CODE": "rpc.response.status_code",
    }


def test_it_answers_as_the_apis_public_proxy_before_and_after_a_provider_is_set() -> None:
    assert fresh_python_lines(_FRESH_PROCESS) == [
        "False False False",
        "True True False",
        "True True",
    ]
