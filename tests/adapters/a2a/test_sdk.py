"""The private parts of ``a2a-sdk`` the adapter reaches (adapters/a2a/_sdk.py) are still where
it reaches for them: each test fails when an SDK upgrade moves one."""

from __future__ import annotations

import asyncio
import importlib
import inspect

import anyio
from a2a.types import CancelTaskRequest, SendMessageConfiguration

from foldkit_agent.adapters.a2a import a2a_app
from foldkit_agent.adapters.a2a._sdk import (
    CLIENT_ERROR_RECORDS,
    DUPLICATE_RECORDS,
    unfinished_tasks,
)
from tests.support.a2a_lab import BASE, LabWaitAgent, a2a_client, lab_runtime, skill_request


async def test_a_running_task_is_seen_unfinished_until_the_sdk_is_done_with_it() -> None:
    async with lab_runtime(LabWaitAgent) as (lab, _b, running):
        dispatched = asyncio.Event()
        running.host.observe(lambda m: dispatched.set() if type(m).__name__ == "Waited" else None)
        app = a2a_app(lab, name="lab", version="1", base_url=BASE)
        handler = app.state.a2a_handler
        assert unfinished_tasks(handler) == []
        async with a2a_client(app) as client:
            req = skill_request("wait_long", {})
            req.configuration.CopyFrom(SendMessageConfiguration(return_immediately=True))
            with anyio.fail_after(10):
                events = [ev async for ev in client.send_message(req)]
                await dispatched.wait()
                (pending,) = unfinished_tasks(handler)
                assert isinstance(pending, asyncio.Event)
                assert not pending.is_set()
                await client.cancel_task(CancelTaskRequest(id=events[0].task.id))
        with anyio.fail_after(10):
            await handler.aclose()  # the SDK's own shutdown ends every active task
        assert pending.is_set()
        assert unfinished_tasks(handler) == []


def test_the_log_records_the_filter_rewrites_are_still_written_by_those_loggers() -> None:
    for table in (CLIENT_ERROR_RECORDS, DUPLICATE_RECORDS):
        for logger_name, templates in table.items():
            module = importlib.import_module(logger_name)  # each SDK module logs as its name
            source = inspect.getsource(module)
            assert "logging.getLogger(__name__)" in source, logger_name
            for template in templates:
                assert template in source, (logger_name, template)
