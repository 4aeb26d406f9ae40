"""Load and soak: MCP over streamable HTTP (uvicorn on loopback, on the test's event loop) with
50 official SDK clients making mixed calls (valid, invalid, unavailable, unauthorized) while the
application changes the Model. Runs ``--soak-seconds`` (5 in CI, 60 with ``make soak``).

Holds: zero errors (no exception, no defect result), every call answered exactly once, Messages
applied == calls accepted, one audit decision per call, nothing pending at the end, and traced
memory flat between the end of the warm-up and the end of the run (bound: 16 MiB).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections import Counter
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken

from foldkit_agent.adapters.mcp import StaticTokenVerifier, http_app
from tests.support.mcp_cart import AddedItem, RemovedItem, Ticked, run_cart
from tests.support.serving import served

CLIENTS = 50
MEMORY_BOUND = 16 * 1024 * 1024
MIN_CALLS = 4  # per client
TOKENS = {f"soak-token-{i}": f"agent-{i}" for i in range(CLIENTS)}
VERIFIER = StaticTokenVerifier(
    {t: AccessToken(token=t, client_id="soak", scopes=[], subject=s) for t, s in TOKENS.items()}
)
# (tool, arguments): valid, invalid input, available only while the cart has items, never allowed
MIX: list[tuple[str, dict[str, Any]]] = [
    ("increment", {}),
    ("pay", {"amount": "ten"}),
    ("checkout", {}),
    ("reset", {}),
    ("increment", {"extra": 1}),
]


@pytest.mark.soak
async def test_fifty_mcp_http_clients_mixed_calls_nothing_lost_memory_flat(
    request: pytest.FixtureRequest,
) -> None:
    seconds: float = request.config.getoption("--soak-seconds")
    warmup = max(1.0, seconds * 0.2)
    calls: Counter[str] = Counter()
    accepted: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    invocation_ids: list[str] = []
    errors: list[BaseException] = []
    tracemalloc.start()
    try:
        async with run_cart() as cart:
            app = http_app(cart.rt, name="soak", version="1", token_verifier=VERIFIER)
            async with served(app) as origin:
                url = f"{origin}/mcp"
                # The clock starts once all clients are connected: on a loaded machine the
                # 50 handshakes alone can take longer than a short soak.
                connected = 0
                all_connected = anyio.Event()
                start = 0.0
                measured: dict[str, int] = {}

                async def wait_for_clients() -> None:
                    await all_connected.wait()

                async def agent(token: str, offset: int) -> None:
                    http = httpx2.AsyncClient(
                        headers={"Authorization": f"Bearer {token}"}, timeout=30
                    )
                    async with Client(streamable_http_client(url, http_client=http)) as client:
                        nonlocal connected, start
                        connected += 1
                        if connected == CLIENTS:
                            start = time.monotonic()
                            all_connected.set()
                        await wait_for_clients()
                        i = offset
                        # At least MIN_CALLS each, however slow the machine: the test is
                        # about what is lost, never about how many fit in the time.
                        while time.monotonic() - start < seconds or i - offset < MIN_CALLS:
                            name, args = MIX[i % len(MIX)]
                            i += 1
                            calls[name] += 1
                            with anyio.fail_after(30):
                                result = await client.call_tool(name, args)
                            data = result.structured_content or {}
                            outcomes[data.get("_tag") or data.get("status", "?")] += 1
                            if data.get("status") == "defect":
                                errors.append(AssertionError(f"defect from {name}"))
                            if not result.is_error:
                                accepted[name] += 1
                                invocation_ids.append(data["invocation_id"])

                async def application() -> None:
                    """The application's own Messages: checkout flips available/unavailable."""
                    await wait_for_clients()
                    n = 0
                    while time.monotonic() - start < seconds:
                        n += 1
                        cart.dispatch(AddedItem(item=f"i{n}") if n % 3 else Ticked())
                        await anyio.sleep(0.002)
                        if n % 2:
                            cart.dispatch(RemovedItem(item=f"i{n}"))

                async def memory_probe() -> None:
                    await wait_for_clients()
                    await anyio.sleep(warmup)
                    gc.collect()
                    measured["start"] = tracemalloc.get_traced_memory()[0]

                async def guarded(fn: Any, *args: Any) -> None:
                    try:
                        await fn(*args)
                    except BaseException as exc:  # recorded, then the test fails on it
                        errors.append(exc)
                        raise

                with anyio.fail_after(seconds + 60):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(memory_probe)
                        tg.start_soon(guarded, application)
                        for k, token in enumerate(TOKENS):
                            tg.start_soon(guarded, agent, token, k)
                gc.collect()
                end_memory = tracemalloc.get_traced_memory()[0]
            total = sum(calls.values())
            applied = Counter(type(m).__name__ for m in cart.applied)
            audit = cart.audit
            decisions = len(audit.entries()) + audit.evicted
            report = {
                "seconds": seconds,
                "calls": total,
                "calls_per_s": round(total / seconds),
                "accepted": dict(accepted),
                "outcomes": dict(outcomes),
                "memory_start_kib": measured["start"] // 1024,
                "memory_end_kib": end_memory // 1024,
                "audit_decisions": decisions,
            }
            print("\nSOAK", report)
            assert errors == []
            assert total >= CLIENTS * MIN_CALLS
            assert len(invocation_ids) == sum(accepted.values())
            assert len(set(invocation_ids)) == len(
                invocation_ids
            )  # each answer once, to its caller
            assert applied["Increment"] == accepted["increment"]
            assert applied["RequestedCheckout"] == accepted["checkout"]
            assert applied.get("RequestedReset", 0) == 0
            assert accepted["pay"] == 0
            assert accepted["reset"] == 0
            assert decisions == total  # one audit decision per call, none lost
            assert cart.rt.pending() == 0
            assert end_memory - measured["start"] < MEMORY_BOUND
    finally:
        tracemalloc.stop()
