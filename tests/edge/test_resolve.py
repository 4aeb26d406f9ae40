"""One way to find the runtime for a request, and the audit entry of an edge refusal."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from examples.todo import run_todo
from foldkit_agent import AgentRuntime
from foldkit_agent.edge.resolve import (
    RuntimeUnavailableError,
    audit_refusal,
    check_target,
    resolve_runtime,
    static_runtime,
)
from foldkit_agent.edge.tenants import NoTenantError
from foldkit_agent.edge.wire import WireError


async def test_a_runtime_is_its_own_target_and_resolvers_may_be_sync_or_async() -> None:
    async with run_todo() as (_running, rt):
        assert await resolve_runtime(rt, "ctx") is rt
        assert await resolve_runtime(lambda ctx: rt if ctx == "ctx" else None, "ctx") is rt

        async def later(_ctx: Any) -> AgentRuntime[Any, Any]:
            return rt

        assert await resolve_runtime(later, "ctx") is rt
        assert static_runtime(rt) is rt
        assert static_runtime(later) is None


class Answered(Exception):
    pass


async def test_a_resolver_that_fails_is_unavailable_unless_it_answers_itself() -> None:
    def broken(_ctx: Any) -> Any:
        raise KeyError("tenant-42 secret detail")

    with pytest.raises(RuntimeUnavailableError) as info:
        await resolve_runtime(broken, None)
    assert "tenant-42" not in str(info.value)
    with pytest.raises(RuntimeUnavailableError):
        await resolve_runtime(lambda _ctx: "not a runtime", None)

    def answers(_ctx: Any) -> Any:
        raise Answered

    with pytest.raises(Answered):
        await resolve_runtime(answers, None, passthrough=(Answered,))


async def test_f21_a_refused_request_is_logged_in_one_line_and_a_fault_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # issue 21: every call with one tenant's token at another tenant's path logged a whole
    # traceback on the worker; the refusal is the caller's doing, not the server's fault
    def refuses(_ctx: Any) -> Any:
        raise NoTenantError("this request names no tenant")

    def broken(_ctx: Any) -> Any:
        raise KeyError("oops")

    caplog.set_level(logging.INFO, logger="foldkit_agent.edge")
    with pytest.raises(RuntimeUnavailableError):
        await resolve_runtime(refuses, None)
    [refusal] = caplog.records
    assert refusal.levelno == logging.INFO
    assert refusal.getMessage() == (
        "resolve(ctx) refused the request: NoTenantError: this request names no tenant"
    )
    assert refusal.exc_info is None
    assert "Traceback" not in caplog.text
    caplog.clear()
    with pytest.raises(RuntimeUnavailableError):
        await resolve_runtime(broken, None)
    [fault] = caplog.records
    assert fault.levelno == logging.WARNING
    assert fault.exc_info is not None
    assert "Traceback" in caplog.text


def test_check_target_refuses_what_is_neither_a_runtime_nor_callable() -> None:
    with pytest.raises(TypeError, match="a2a_app takes an AgentRuntime"):
        check_target(42, "a2a_app")
    check_target(lambda ctx: ctx, "a2a_app")


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        ("malformed", "AgentInvalidInputError"),
        ("too-large", "AgentInvalidInputError"),
        ("content-type", "AgentInvalidInputError"),
        ("host", "AgentAuthorizationError"),
        ("origin", "AgentAuthorizationError"),
        ("csrf", "AgentAuthorizationError"),
        ("unauthenticated", "AgentAuthorizationError"),
    ],
)
async def test_an_edge_refusal_is_audited_as_refused_for_the_capability_it_named(
    code: str, outcome: str
) -> None:
    async with run_todo() as (_running, rt):
        audit_refusal(
            rt, capability="create_todo", transport="webmcp", err=WireError(400, code, "x")
        )
        assert rt.audit is not None
        [entry] = rt.audit.entries()
    assert (entry.capability, entry.tag, entry.transport) == (
        "create_todo",
        "RequestedCreateTodo",
        "webmcp",
    )
    assert (entry.decision, entry.outcome, entry.principal, entry.input) == (
        "refused",
        outcome,
        None,
        None,
    )


async def test_an_unknown_name_is_audited_without_a_tag() -> None:
    async with run_todo() as (_running, rt):
        audit_refusal(
            rt, capability="x" * 500, transport="mcp", err=WireError(400, "malformed", "")
        )
        assert rt.audit is not None
        [entry] = rt.audit.entries()
    assert entry.tag is None
    assert entry.capability == "x" * 200
