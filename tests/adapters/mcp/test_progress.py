"""Progress while a call waits on its completion (DESIGN §10).

The completion is driven by the test: it sends the result Message once the client has heard
three progress notifications, so the call spans several intervals without any fixed sleep.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client

from foldkit_agent.adapters.mcp import http_app, mcp_server
from foldkit_agent.edge import HttpOptions
from tests.support.mcp_cart import LongWait, RequestedWait, Waited, run_cart
from tests.support.mcp_helpers import over_http

INTERVAL = 0.05


@asynccontextmanager
async def in_process(rt: Any, mode: str) -> AsyncGenerator[Client]:
    server = mcp_server(rt, name="cart", version="1", progress_interval=INTERVAL)
    async with Client(server, mode=mode) as client:
        yield client


def http_client(rt: Any, mode: str) -> Any:
    return over_http(
        http_app(rt, name="cart", version="1", options=HttpOptions(progress_interval=INTERVAL)),
        mode,
    )


CONNECT: dict[str, Callable[[Any, str], Any]] = {"memory": in_process, "http": http_client}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("how", ["memory", "http"])
async def test_a_waiting_call_reports_progress_in_order_until_its_result_and_none_after(
    how: str, mode: str
) -> None:
    async with run_cart(LongWait) as cart, CONNECT[how](cart.rt, mode) as client:
        heard: list[tuple[float, float | None, str | None]] = []
        three = anyio.Event()
        answered: list[int] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            assert not answered, "progress arrived after the result"
            heard.append((progress, total, message))
            if len(heard) == 3:
                three.set()

        async def complete_after_three() -> None:
            await three.wait()
            (asked,) = cart.applied_of(RequestedWait)
            cart.dispatch(Waited(request_id=asked.request_id))  # type: ignore[attr-defined]

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(complete_after_three)
                result = await client.call_tool("wait_long", {}, progress_callback=on_progress)
                answered.append(len(heard))
            await client.list_tools()  # a round trip after the answer: nothing more arrives
        assert not result.is_error
        assert result.structured_content is not None
        assert result.structured_content["status"] == "completed"
        assert len(heard) >= 3
        assert len(heard) == answered[0]
        progress = [p for p, _t, _m in heard]
        assert progress == sorted(set(progress))  # strictly increasing, as MCP requires
        # seconds waited, counted in intervals, out of the completion's timeout
        assert progress[:3] == pytest.approx([INTERVAL, 2 * INTERVAL, 3 * INTERVAL])
        assert all(total == 30.0 for _p, total, _m in heard)
        assert heard[0][2] == "wait_long is waiting for Waited (up to 30 s)"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_that_answers_at_once_reports_no_progress(mode: str) -> None:
    async with run_cart() as cart, in_process(cart.rt, mode) as client:
        heard: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            heard.append(progress)

        result = await client.call_tool("increment", {}, progress_callback=on_progress)
        assert not result.is_error
        await client.list_tools()
        assert heard == []


def test_a_progress_interval_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValueError, match="progress_interval must be a positive number"):
        mcp_server(object.__new__(object), name="t", version="1", progress_interval=0)  # type: ignore[arg-type]
