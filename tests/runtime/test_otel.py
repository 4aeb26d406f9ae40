"""What ``runtime/_otel.py`` reads in opentelemetry-api is still there and still means a
provider was set: this fails when an upgrade moves or renames the global it reads (the
tracing behaviour itself is tested in test_tracing.py)."""

from __future__ import annotations

from opentelemetry import trace

from tests.support.fresh import fresh_python_lines

_FRESH_PROCESS = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from foldkit_agent.runtime._otel import provider_set

def public_answer():
    return not isinstance(trace.ProxyTracerProvider().get_tracer("x"), trace.ProxyTracer)

print(provider_set(), public_answer())
trace.set_tracer_provider(TracerProvider())
print(provider_set(), public_answer())
"""


def test_the_global_it_reads_is_still_in_the_api() -> None:
    assert "_TRACER_PROVIDER" in vars(trace)


def test_it_answers_as_the_apis_public_proxy_before_and_after_a_provider_is_set() -> None:
    assert fresh_python_lines(_FRESH_PROCESS) == ["False False", "True True"]
