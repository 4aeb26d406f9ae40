"""The one module that reads OpenTelemetry's internals: whether a tracer provider is set.

The dispatch path asks on every call, so that the first call after ``set_tracer_provider`` is
traced whenever the runtime was bound. The API's public answers cost more than the rest of a
step: ``ProxyTracerProvider().get_tracer`` answers a ``ProxyTracer`` until a provider is set,
but builds one (and its no-op tracer) each time it is asked, and ``get_tracer_provider()``
looks ``OTEL_PYTHON_TRACER_PROVIDER`` up in ``os.environ`` each time while none is set. The
API keeps the provider in one module global that ``set_tracer_provider`` sets once (a second
call is refused), which both of those read; this reads it too. ``tests/runtime/test_otel.py``
is the upgrade test: it fails when an upgrade moves or renames that global.
"""

from __future__ import annotations

from opentelemetry import trace as _api

__all__ = ["provider_set"]


def provider_set() -> bool:
    """Whether a global tracer provider was set (by ``set_tracer_provider``, or loaded from
    ``OTEL_PYTHON_TRACER_PROVIDER`` by ``get_tracer_provider()``).

    Example:
        >>> provider_set()  # in a process that set none
        False
    """
    return _api._TRACER_PROVIDER is not None  # pyright: ignore[reportPrivateUsage]
