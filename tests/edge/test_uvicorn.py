"""What ``edge/_uvicorn.py`` reaches in uvicorn, h11 and httptools is still there: each test
fails when an upgrade moves, renames or re-signs one of the hooks or state the connection
limits and the draining server rely on (their behaviour is tested in tests/cli/)."""

from __future__ import annotations

import inspect
from typing import Any

import h11
import pytest
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from foldkit_agent.edge._uvicorn import limited_protocol, signalled_server, stop
from foldkit_agent.edge.connections import HTTP_PARSERS, ConnectionLimits

_HOOKS = (
    "connection_made",
    "connection_lost",
    "data_received",
    "on_response_complete",
    "send_400_response",
)
_HTTPTOOLS_HOOKS = (
    "on_message_begin",
    "on_url",
    "on_header",
    "on_headers_complete",
    "on_message_complete",
)


@pytest.mark.parametrize("base", [H11Protocol, HttpToolsProtocol])
def test_both_protocols_have_the_hooks_the_limits_override(base: type[Any]) -> None:
    for hook in _HOOKS:
        assert callable(getattr(base, hook)), hook
    assert list(inspect.signature(base.send_400_response).parameters) == ["self", "msg"]
    assert list(inspect.signature(base.data_received).parameters) == ["self", "data"]


def test_httptools_has_the_parser_callbacks_the_head_caps_count() -> None:
    for hook in _HTTPTOOLS_HOOKS:
        assert callable(getattr(HttpToolsProtocol, hook)), hook
    assert list(inspect.signature(HttpToolsProtocol.on_header).parameters) == [
        "self",
        "name",
        "value",
    ]


@pytest.mark.parametrize("http", HTTP_PARSERS)
async def test_a_protocol_instance_keeps_the_state_the_limits_read(http: Any) -> None:
    config = uvicorn.Config(app=None, http=limited_protocol(ConnectionLimits(), http))  # type: ignore[arg-type]
    config.load()
    state = uvicorn.server.ServerState()
    proto: Any = config.http_protocol_class(config=config, server_state=state, app_state={})
    assert proto.cycle is None  # until a request's head arrives
    assert proto.connections is state.connections
    assert hasattr(proto, "flow")
    assert hasattr(proto, "loop")
    assert isinstance(state.default_headers, list)
    if http == "h11":
        assert isinstance(proto.conn, h11.Connection)
    else:
        assert hasattr(proto, "parser")
        assert hasattr(proto, "headers")
        assert "self.url" in inspect.getsource(HttpToolsProtocol.on_url)  # the target so far
        assert callable(proto.parser.get_http_version)
        assert callable(proto.parser.get_method)


def test_the_cycles_keep_the_flags_the_limits_read() -> None:
    from uvicorn.protocols.http.h11_impl import RequestResponseCycle as H11Cycle
    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle as ToolsCycle

    for cycle in (H11Cycle, ToolsCycle):
        params = inspect.signature(cycle.__init__).parameters
        assert {"message_event", "flow"} <= set(params), cycle
        source = inspect.getsource(cycle)
        assert "self.response_complete" in source, cycle
        assert "self.more_body" in source, cycle
    from uvicorn.protocols.http.flow_control import FlowControl

    assert "self.read_paused" in inspect.getsource(FlowControl)


def test_h11_still_caps_an_unfinished_head_and_names_its_state() -> None:
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=1024)
    assert conn.their_state is h11.IDLE
    conn.receive_data(b"GET / HTTP/1.1\r\nx: " + b"a" * 2000)
    with pytest.raises(h11.RemoteProtocolError) as raised:
        conn.next_event()
    assert raised.value.error_status_hint == 431


def test_the_server_has_the_signal_hooks_the_drain_overrides() -> None:
    # sse-starlette wraps handle_exit once imported, so its own signature may read (*args).
    assert "handle_exit" in vars(uvicorn.Server)
    assert "self.handle_exit" in inspect.getsource(uvicorn.Server.capture_signals)
    server = signalled_server(uvicorn.Config(app=None), lambda _sig, _nth: None)  # type: ignore[arg-type]
    assert isinstance(server, uvicorn.Server)
    assert server.should_exit is False
    assert server.force_exit is False
    stop(server)
    assert server.should_exit is True
