"""Every invocation runs in exactly one ``Agent.dispatch`` span carrying its attributes.

Uses opentelemetry-sdk's in-memory exporter (a dev dependency; the library itself needs only
opentelemetry-api). F03: refusals are spans too, with their error tag as the outcome.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from foldkit_agent import AgentError, Invocation, agent
from foldkit_agent.runtime import bound
from tests.support.audit_app import bind
from tests.support.fresh import fresh_python_lines
from tests.support.paths import ROOT

_EXPORTER = InMemorySpanExporter()


def _install() -> None:
    """Attach the exporter to the global SDK provider (set once per process)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider), "another tracer provider was installed"
    if not getattr(provider, "_foldkit_test_exporter", False):
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        provider._foldkit_test_exporter = True  # type: ignore[attr-defined]


@pytest.fixture(scope="module", autouse=True)
def _provider_unset_after_this_module() -> Iterator[None]:
    """This module sets the process's global tracer provider (once per process, by
    OpenTelemetry's rule), and from then on the runtime traces every call and MCP servers are
    built observed. The other test files a pytest worker runs expect no provider, so it is
    unset again afterwards, as OpenTelemetry's own test utilities reset it."""
    yield
    trace._TRACER_PROVIDER = None  # pyright: ignore[reportPrivateUsage]
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # pyright: ignore[reportPrivateUsage]
    bound._tracing[0] = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ  # pyright: ignore[reportPrivateUsage]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _install()
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def _dispatch_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == "Agent.dispatch"]


async def test_a_dispatch_records_one_span_with_its_attributes(
    spans: InMemorySpanExporter,
) -> None:
    _host, rt = bind(agent.audit_log())
    inv = Invocation(transport="mcp")
    await rt.messages.dispatch("increment", {"by": 1}, inv)
    [span] = _dispatch_spans(spans)
    assert dict(span.attributes or {}) == {
        "agent.capability": "increment",
        "agent.transport": "mcp",
        "agent.invocation_id": inv.id,
        "agent.decision": "dispatched",
        "agent.outcome": "ok",
    }


@pytest.mark.parametrize(
    ("name", "payload", "decision", "outcome"),
    [
        ("nope", {}, "refused", "AgentUnknownCapabilityError"),
        ("closed", {}, "refused", "AgentCapabilityUnavailableError"),
        ("increment", {"by": True}, "refused", "AgentInvalidInputError"),
        ("delete", {}, "refused", "AgentAuthorizationError"),
        ("broken", {}, "unknown", "AgentHostError"),
    ],
)
async def test_a_refusal_is_a_span_whose_outcome_is_the_error_tag_f03(
    spans: InMemorySpanExporter, name: str, payload: object, decision: str, outcome: str
) -> None:
    _host, rt = bind(None)
    inv = Invocation(transport="a2a")
    with pytest.raises(AgentError):
        await rt.messages.dispatch_unknown(name, payload, inv)
    [span] = _dispatch_spans(spans)
    attrs = dict(span.attributes or {})
    assert attrs["agent.capability"] == name
    assert attrs["agent.transport"] == "a2a"
    assert attrs["agent.invocation_id"] == inv.id
    assert (attrs["agent.decision"], attrs["agent.outcome"]) == (decision, outcome)


async def test_concurrent_invocations_record_one_span_each(spans: InMemorySpanExporter) -> None:
    _host, rt = bind(None)
    invocations = [Invocation(transport="mcp") for _ in range(20)]
    await asyncio.gather(
        *(rt.messages.dispatch("increment", {"by": i}, inv) for i, inv in enumerate(invocations))
    )
    got = _dispatch_spans(spans)
    assert len(got) == 20
    assert sorted(str((s.attributes or {})["agent.invocation_id"]) for s in got) == sorted(
        i.id for i in invocations
    )
    assert len({s.context.span_id for s in got if s.context is not None}) == 20


async def test_a_dispatch_span_is_a_child_of_the_callers_span(
    spans: InMemorySpanExporter,
) -> None:
    _host, rt = bind(None)
    with trace.get_tracer("test").start_as_current_span("mcp.tools/call") as parent:
        await rt.messages.dispatch("increment", {"by": 1})
    [span] = _dispatch_spans(spans)
    assert span.parent is not None
    assert span.parent.span_id == parent.get_span_context().span_id


_FRESH_PROCESS = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from foldkit_agent import agent
from foldkit_agent.runtime import bound
from tests.support.audit_app import bind

async def main():
    _host, rt = bind(agent.audit_log())
    await rt.messages.dispatch("increment", {"by": 1})
    print(bound._tracing[0])
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    await rt.messages.dispatch("increment", {"by": 1})
    print(bound._tracing[0], [s.name for s in exporter.get_finished_spans()])

asyncio.run(main())
"""


def test_spans_start_with_the_first_call_after_a_provider_is_set() -> None:
    """Without a provider no span is made; the call right after ``set_tracer_provider`` is
    traced, on a runtime bound before it."""
    assert fresh_python_lines(_FRESH_PROCESS) == ["False", "True ['Agent.dispatch']"]


def test_opentelemetry_internals_are_read_in_runtime_otel_alone() -> None:
    src = ROOT / "src" / "foldkit_agent"
    reading = sorted(
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if re.search(r"""\b(trace|_api)\._[A-Za-z]|["']_TRACER""", path.read_text())
    )
    assert reading == ["runtime/_otel.py"]
