"""``foldkit-agent serve`` freezes what start-up allocated (issue 20): the garbage collector's
full collections while serving never rescan the imports, the contract or the SDKs' servers.

Observed inside real serving subprocesses: ``tests.support.gc_probe``'s one capability records
``gc.get_freeze_count()`` into the Model, and the context shows it. ``frozen_lifespan`` is
checked in this process, as an application embedding the adapters' apps uses it.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette

from foldkit_agent.adapters.mcp import CONTEXT_URI
from foldkit_agent.edge import frozen_lifespan
from tests.support.paths import ROOT
from tests.support.serving import serve_process, served

CLI = str(Path(sys.executable).parent / "foldkit-agent")
PROBE = "tests.support.gc_probe:runtime"


async def frozen_objects_seen_by(client: Client) -> int:
    """Call ``probe`` and read back what the serving process's collector had frozen."""
    assert (await client.call_tool("probe", {})).is_error is False
    read = await client.read_resource(CONTEXT_URI)
    return json.loads(read.contents[0].text)["frozen_objects"]  # type: ignore[union-attr]


async def test_serving_over_http_freezes_what_start_up_allocated() -> None:
    async with serve_process(PROBE, "--mcp", "http") as origin:
        http = httpx2.AsyncClient(timeout=10)
        async with Client(streamable_http_client(f"{origin}/mcp", http_client=http)) as client:
            frozen = await frozen_objects_seen_by(client)
    assert frozen > 1_000  # the imports alone are tens of thousands of objects


async def test_serving_over_stdio_freezes_what_start_up_allocated() -> None:
    params = StdioServerParameters(
        command=CLI, args=["serve", PROBE, "--mcp", "stdio"], cwd=str(ROOT)
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            frozen = await frozen_objects_seen_by(client)
    assert frozen > 1_000


@asynccontextmanager
async def counting(app: Any) -> AsyncIterator[dict[str, int]]:
    yield {"frozen_at_start": gc.get_freeze_count()}


async def test_frozen_lifespan_freezes_after_the_apps_own_start_up_and_unfreezes_after() -> None:
    seen: list[int] = []

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        seen.append(gc.get_freeze_count())  # the app's own start-up runs first, unfrozen
        yield
        seen.append(gc.get_freeze_count())  # and its shutdown after the unfreeze

    app = Starlette(lifespan=frozen_lifespan(lifespan))
    assert gc.get_freeze_count() == 0
    async with app.router.lifespan_context(app):
        seen.append(gc.get_freeze_count())
    assert seen[0] == 0
    assert seen[1] > 1_000
    assert seen[2] == 0
    assert gc.get_freeze_count() == 0


async def test_frozen_lifespan_keeps_the_state_the_apps_lifespan_yields() -> None:
    app = Starlette(lifespan=frozen_lifespan(counting))
    async with served(app) as origin, httpx2.AsyncClient() as http:
        assert (await http.get(f"{origin}/nothing-here")).status_code == 404
    async with frozen_lifespan(counting)(app) as state:
        assert state == {"frozen_at_start": 0}
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
