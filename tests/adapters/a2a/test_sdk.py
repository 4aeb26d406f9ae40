"""The private parts of ``a2a-sdk`` the adapter reaches (adapters/a2a/_sdk.py) are still where
it reaches for them: each test fails when an SDK upgrade moves one."""

from __future__ import annotations

import asyncio
import importlib
import inspect
from typing import Any

import anyio
import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import CancelTaskRequest, SendMessageConfiguration, SendMessageRequest
from a2a.utils import proto_utils
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import ParseDict
from hypothesis import given, settings
from hypothesis import strategies as st

from foldkit_agent.adapters.a2a import _sdk as sdk
from foldkit_agent.adapters.a2a import a2a_app
from foldkit_agent.adapters.a2a._sdk import (
    CLIENT_ERROR_RECORDS,
    DUPLICATE_RECORDS,
    below_required_check,
    check_required_fields,
    required_field_errors,
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


def test_the_sdks_required_field_check_is_still_a_layer_of_both_send_methods() -> None:
    for method in (
        DefaultRequestHandler.on_message_send,
        DefaultRequestHandler.on_message_send_stream,
    ):
        below = below_required_check(method)
        assert below is not None, method
        assert below is not method
        assert inspect.unwrap(below) is inspect.unwrap(method)  # the same method underneath


def _request(
    values: int, drop: frozenset[str] = frozenset(), extra_parts: int = 0
) -> SendMessageRequest:
    message: dict[str, Any] = {
        "role": "ROLE_USER",
        "messageId": "m-1",
        "contextId": "c-1",
        "parts": [
            {"data": {"items": [{"n": n, "tags": ["a", None, True]} for n in range(values)]}},
            *({"text": f"t{n}"} for n in range(extra_parts)),
        ],
        "metadata": {"k": {"nested": [1, 2]}},
    }
    for field in drop:
        message.pop(field, None)
    body: dict[str, Any] = {"message": message, "configuration": {"acceptedOutputModes": []}}
    if "message" in drop:
        del body["message"]
    return ParseDict(body, SendMessageRequest())


@settings(max_examples=60, deadline=None)
@given(
    values=st.integers(0, 30),
    drop=st.frozensets(st.sampled_from(["role", "messageId", "parts", "contextId", "message"])),
    extra_parts=st.integers(0, 3),
)
def test_the_required_field_errors_are_the_sdks_own_for_any_request(
    values: int, drop: frozenset[str], extra_parts: int
) -> None:
    request = _request(values, drop, extra_parts)
    sdks = proto_utils._validate_proto_required_fields_internal(request)  # pyright: ignore[reportPrivateUsage]
    assert required_field_errors(request) == sdks
    if sdks:
        with pytest.raises(InvalidParamsError) as raised:
            check_required_fields(request)
        assert raised.value.message == "Validation failed"
        assert raised.value.data == {"errors": sdks}
    else:
        check_required_fields(request)


def test_a_required_field_missing_is_named_as_the_sdk_names_it() -> None:
    errors = required_field_errors(_request(3, frozenset({"messageId", "parts"})))
    assert [e["field"] for e in errors] == ["message.message_id", "message.parts"]


def test_the_required_field_check_visits_the_same_messages_for_10_and_9900_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    visits = 0
    real = sdk.required_field_errors

    def counted(msg: Any) -> list[Any]:
        nonlocal visits
        visits += 1
        return real(msg)

    monkeypatch.setattr(sdk, "required_field_errors", counted)
    counts = []
    for values in (10, 9_900):
        visits = 0
        check_required_fields(_request(values, extra_parts=2))
        counts.append(visits)
    assert counts[0] == counts[1]
    assert counts[0] == 3  # the request, its message and its configuration: no part, no value


async def test_a_9900_value_body_is_checked_without_the_sdks_walk_over_a_real_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, create_client
    from a2a.server.request_handlers import request_handler
    from a2a.types import GetTaskRequest, TaskState

    from examples.todo import runtime as todo_runtime
    from tests.support.serving import served_built

    walked: list[str] = []
    real = request_handler.validate_proto_required_fields

    def spy(msg: Any) -> None:
        walked.append(type(msg).__name__)
        real(msg)

    # the name the SDK's @validate_request_params calls (every other method still goes there)
    monkeypatch.setattr(request_handler, "validate_proto_required_fields", spy)
    values = {f"f{n}": "y" * 85 for n in range(9_900)}
    async with todo_runtime() as rt:

        def build(origin: str) -> Any:
            return a2a_app(rt, name="t", version="1", base_url=origin)

        async with served_built(build) as origin, httpx.AsyncClient(timeout=60) as hc:
            card = await A2ACardResolver(hc, origin).get_agent_card()
            task_ids: list[str] = []
            for streaming in (False, True):
                config = ClientConfig(httpx_client=hc, streaming=streaming)
                client = await create_client(card, client_config=config)
                request = skill_request("create_todo", values)
                with anyio.fail_after(60):
                    events = [e async for e in client.send_message(request)]
                first, last = events[0], events[-1]
                task_ids.append(first.task.id)
                status = last.task.status if last.HasField("task") else last.status_update.status
                assert status.state == TaskState.TASK_STATE_REJECTED, (streaming, last)
                await client.close()
            assert walked == []  # both sends were checked by check_required_fields instead
            client = await create_client(card, client_config=ClientConfig(httpx_client=hc))
            task = await client.get_task(GetTaskRequest(id=task_ids[0]))
            await client.close()
    assert task.status.state == TaskState.TASK_STATE_REJECTED
    assert walked == ["GetTaskRequest"]  # the spy sees what the SDK still checks itself


def test_the_dispatcher_still_names_the_params_model_of_each_method() -> None:
    from a2a.types import SendMessageRequest

    from foldkit_agent.adapters.a2a._sdk import params_model

    assert params_model("SendMessage") is SendMessageRequest
    assert params_model("NoSuchMethod") is None
