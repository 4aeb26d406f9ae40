"""The request handler refuses a call naming no known skill before the SDK creates a task."""

from __future__ import annotations

import httpx
import pytest
from a2a.utils.errors import InvalidParamsError

from foldkit_agent.adapters.a2a import (
    EXTENSION_URI,
    REST_PREFIX,
)
from tests.support.a2a_lab import (
    a2a_client,
)
from tests.support.a2a_todo import BASE, call, todo_app


@pytest.mark.parametrize("streaming", [False, True])
async def test_unknown_skill_is_invalid_params(streaming: bool) -> None:
    async with todo_app() as (app, rt):
        async with a2a_client(app, "alice-tok", streaming=streaming) as client:
            with pytest.raises(InvalidParamsError) as caught:
                await call(client, "launch_rockets", {})
            assert "launch_rockets" in str(caught.value)
            with pytest.raises(InvalidParamsError) as caught:
                await call(client, None, {"title": "x"})
            assert EXTENSION_URI in str(caught.value)
        assert rt.audit is not None
        (entry,) = rt.audit.entries()
        assert (entry.capability, entry.decision, entry.outcome) == (
            "launch_rockets",
            "refused",
            "AgentUnknownCapabilityError",
        )


async def test_unknown_skill_over_http_json_is_a_400() -> None:
    async with todo_app() as (app, _rt):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as hc:
            body = {
                "message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"data": {}}]},
                "metadata": {EXTENSION_URI: {"skill": "nope"}},
            }
            r = await hc.post(
                REST_PREFIX + "/message:send", json=body, headers={"A2A-Version": "1.0"}
            )
    assert r.status_code == 400
    assert "nope" in r.text
