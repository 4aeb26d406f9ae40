"""Tenants: one runtime per tenant per process, made on first use, closed when idle or LRU."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.authentication import SimpleUser

from examples.todo import User, run_todo
from foldkit_agent import AgentRuntime, Invocation, Tenants
from foldkit_agent.edge import (
    Grant,
    NoTenantError,
    RuntimeUnavailableError,
    TenantsFullError,
    TokenTable,
    own_path_tenant,
    path_tenant,
    principal_tenant,
    resolve_runtime,
)
from foldkit_agent.edge.tenants import (
    GRANT_TENANT_KEY,
    PATH_TENANT_KEY,
    claim_tenant,
    foreign_token,
    hold_path_tenant,
)


class HeldStore:
    """A todo store whose saves wait until :attr:`release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.saving = asyncio.Semaphore(0)  # one token per save that has started

    async def load(self) -> tuple[Any, ...]:
        return ()

    async def create(self, todo: Any) -> bool:
        self.saving.release()
        await self.release.wait()
        return True

    async def save(self, todo: Any) -> None:
        self.saving.release()
        await self.release.wait()

    async def delete(self, todo_id: str) -> None:
        return None

    async def close(self) -> None:
        return None


class Made:
    """A factory of todo runtimes that records what it opened and closed, in order."""

    def __init__(self, store: HeldStore | None = None) -> None:
        self.events: list[str] = []
        self.closed: dict[str, asyncio.Event] = {}
        self.store = store

    @asynccontextmanager
    async def __call__(self, tenant: str) -> AsyncIterator[AgentRuntime[Any, Any]]:
        self.events.append(f"open {tenant}")
        await asyncio.sleep(0)  # a slow start: concurrent first calls must share it
        async with run_todo(store=self.store) as (_running, rt):
            yield rt
        self.events.append(f"close {tenant}")

    def on_close(self, tenant: str, why: str) -> None:
        self.events.append(f"closed {tenant}: {why}")
        self.closed.setdefault(tenant, asyncio.Event()).set()

    async def wait_closed(self, tenant: str) -> None:
        await self.closed.setdefault(tenant, asyncio.Event()).wait()


async def test_each_tenant_gets_one_runtime_made_once_even_for_concurrent_first_calls() -> None:
    made = Made()
    async with Tenants(made, key="principal", on_close=made.on_close) as tenants:
        a1, a2, b = await asyncio.gather(
            tenants.get("alice"), tenants.get("alice"), tenants.get("bob")
        )
        assert a1 is a2
        assert a1 is not b
        inv = Invocation(credentials=User(id="alice"))
        await a1.messages.dispatch("create_todo", {"title": "Milk"}, inv)
        assert [t["title"] for t in a1.context()["todos"]] == ["Milk"]
        assert b.context()["todos"] == []
        assert made.events == ["open alice", "open bob"]
        assert tenants.open() == ["alice", "bob"]
    assert sorted(made.events[2:]) == [
        "close alice", "close bob", "closed alice: shutdown", "closed bob: shutdown",
    ]  # fmt: skip
    assert a1.closed
    assert b.closed


async def test_an_idle_tenant_is_closed_and_its_next_request_makes_a_new_runtime() -> None:
    made = Made()
    async with Tenants(made, idle=0.05, on_close=made.on_close) as tenants:
        first = await tenants.get("alice")
        await made.wait_closed("alice")
        assert made.events == ["open alice", "close alice", "closed alice: idle"]
        assert first.closed
        assert tenants.open() == []
        again = await tenants.get("alice")
        assert again is not first
        assert made.events[-1] == "open alice"


async def test_a_tenant_with_a_call_in_flight_is_not_closed_as_idle() -> None:
    store = HeldStore()
    closed: list[str] = []

    @asynccontextmanager
    async def factory(tenant: str) -> AsyncIterator[AgentRuntime[Any, Any]]:
        async with run_todo(store=store) as (_running, rt):
            yield rt

    idle = 0.02
    async with Tenants(factory, idle=idle, on_close=lambda t, why: closed.append(why)) as tenants:
        rt = await tenants.get("alice")
        call = asyncio.ensure_future(
            rt.messages.dispatch("create_todo", {"title": "Slow"}, Invocation())
        )
        await store.saving.acquire()  # the call is waiting on its save
        await asyncio.sleep(idle * 10)  # ten idle periods with the call still waiting
        assert closed == []
        assert not rt.closed
        store.release.set()
        answered = await call
        assert answered.completion is not None
        assert answered.completion.status == "completed"
    assert closed in (["idle"], ["shutdown"])


async def test_max_tenants_closes_the_least_recently_used_and_refuses_when_all_are_busy() -> None:
    store = HeldStore()
    made = Made(store)
    async with Tenants(made, max_tenants=2, on_close=made.on_close) as tenants:
        alice = await tenants.get("alice")
        await tenants.get("bob")
        await tenants.get("alice")  # bob is now the least recently used
        await tenants.get("carol")
        await made.wait_closed("bob")
        assert tenants.open() == ["alice", "carol"]
        assert "closed bob: max_tenants" in made.events
        carol = await tenants.get("carol")
        calls = [
            asyncio.ensure_future(rt.messages.dispatch("create_todo", {"title": "x"}, Invocation()))
            for rt in (alice, carol)
        ]
        for _ in calls:
            await store.saving.acquire()  # both calls are waiting on their saves
        with pytest.raises(TenantsFullError):
            await tenants.get("dave")
        store.release.set()
        await asyncio.gather(*calls)
        assert await tenants.close("alice")
        assert not await tenants.close("alice")
        await tenants.get("dave")
        assert tenants.open() == ["carol", "dave"]


async def test_a_request_naming_no_tenant_is_refused_without_running_the_factory() -> None:
    made = Made()
    async with Tenants(made) as tenants:
        with pytest.raises(NoTenantError):
            await tenants(SimpleNamespace(user=SimpleNamespace(is_authenticated=False)))
        with pytest.raises(RuntimeUnavailableError):
            await resolve_runtime(tenants, SimpleNamespace(request=None, user=None))
    assert made.events == []
    with pytest.raises(RuntimeError, match="async with tenants"):
        await Tenants(made).get("alice")
    with pytest.raises(ValueError, match="idle"):
        Tenants(made, idle=0)
    with pytest.raises(ValueError, match="max_tenants"):
        Tenants(made, max_tenants=0)


class FakeRequest:
    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope
        self.path_params = scope.get("path_params", {})


def test_the_tenant_keys_read_only_what_the_transport_authenticated_or_routed() -> None:
    token = SimpleNamespace(subject="alice", client_id="foldkit-agent")
    mcp_user = SimpleNamespace(is_authenticated=True, access_token=token)
    assert principal_tenant(SimpleNamespace(request=FakeRequest({"user": mcp_user}))) == "alice"
    surface = FakeRequest({"user": SimpleUser("bob")})
    assert principal_tenant(surface) == "bob"
    a2a = SimpleNamespace(user=SimpleNamespace(is_authenticated=True, user_name="carol"))
    assert principal_tenant(a2a) == "carol"
    assert principal_tenant(SimpleNamespace(request=None)) is None  # stdio: nobody
    assert principal_tenant(FakeRequest({})) is None
    routed = FakeRequest({"path_params": {"tenant": "acme"}})
    assert path_tenant(routed) == "acme"
    assert path_tenant(SimpleNamespace(request=routed)) == "acme"
    assert path_tenant(SimpleNamespace(tenant="", request=None)) is None
    # a route further in with a {tenant} of its own never replaces the mount's
    held: dict[str, Any] = {"path_params": {"tenant": "acme"}}
    hold_path_tenant(held)
    held["path_params"] = {"tenant": "globex"}
    hold_path_tenant(held)
    assert path_tenant(FakeRequest(held)) == "acme"


def a2a_context(path: str | None, claimed: str) -> Any:
    """An A2A call context through ``path``'s tenant whose own ``tenant`` field is ``claimed``."""
    return SimpleNamespace(tenant=claimed, state={PATH_TENANT_KEY: path})


def test_a2a_s_own_tenant_field_never_selects_a_tenant() -> None:
    assert path_tenant(a2a_context("acme", "")) == "acme"
    assert path_tenant(a2a_context("acme", "acme")) == "acme"
    assert path_tenant(a2a_context("acme", "globex")) is None  # the body names another
    assert path_tenant(a2a_context(None, "acme")) is None  # a body alone names none
    assert path_tenant(SimpleNamespace(tenant="acme")) is None


def test_a_known_token_of_another_subject_is_foreign_at_a_tenants_path() -> None:
    table = TokenTable({"alice-token": Grant("alice"), "bob-token": Grant("bob")})

    def scope(tenant: str, authorization: str | None) -> dict[str, Any]:
        headers = [] if authorization is None else [(b"authorization", authorization.encode())]
        return {"path_params": {"tenant": tenant}, "headers": headers}

    assert foreign_token(scope("bob", "Bearer alice-token"), table)
    assert not foreign_token(scope("alice", "Bearer alice-token"), table)
    assert not foreign_token(scope("bob", "Bearer nobody-token"), table)  # the adapter's 401
    assert not foreign_token(scope("bob", None), table)


def test_a_path_tenant_is_its_own_only_for_a_caller_authenticated_as_it() -> None:
    def request(tenant: str, subject: str | None) -> FakeRequest:
        scope: dict[str, Any] = {"path_params": {"tenant": tenant}}
        if subject is not None:
            token = SimpleNamespace(subject=subject, client_id="foldkit-agent")
            scope["user"] = SimpleNamespace(is_authenticated=True, access_token=token)
        return FakeRequest(scope)

    assert own_path_tenant(request("acme", "acme")) == "acme"
    assert own_path_tenant(SimpleNamespace(request=request("acme", "acme"))) == "acme"
    assert own_path_tenant(request("acme", "globex")) is None  # another tenant's token
    assert own_path_tenant(request("acme", None)) is None  # nobody authenticated


def test_a_claimed_tenant_is_the_tokens_and_must_match_any_tenant_the_request_names() -> None:
    def request(claimed: str | None, path: str | None = None) -> FakeRequest:
        token = SimpleNamespace(subject="alice", claims=None if claimed is None else {
            "tenant": claimed})  # fmt: skip
        scope: dict[str, Any] = {"user": SimpleNamespace(is_authenticated=True, access_token=token)}
        if path is not None:
            scope["path_params"] = {"tenant": path}
        return FakeRequest(scope)

    assert claim_tenant(SimpleNamespace(request=request("acme"))) == "acme"
    assert claim_tenant(request("acme", path="acme")) == "acme"
    assert claim_tenant(request("acme", path="globex")) is None  # the path names another
    assert claim_tenant(request(None)) is None  # the token names no tenant
    a2a = SimpleNamespace(tenant="", state={GRANT_TENANT_KEY: "acme", PATH_TENANT_KEY: None})
    assert claim_tenant(a2a) == "acme"
    a2a.tenant = "globex"  # A2A's own field names another tenant
    assert claim_tenant(a2a) is None
    a2a.tenant, a2a.state[PATH_TENANT_KEY] = "", "globex"
    assert claim_tenant(a2a) is None
