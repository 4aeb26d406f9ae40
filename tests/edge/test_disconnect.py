"""A client that goes away before its answer aborts its call (foldkit_agent.edge.disconnect):
the request's watch sets the signal a call registered with ``Watch.carries_call``, and a call
that registers after the client left is aborted at once; a disconnect after the answer is none."""

from __future__ import annotations

import asyncio
from typing import Any

from foldkit_agent.edge.disconnect import CLIENT_GONE, WATCH, Watch


class Peer:
    """The server side of one request: ``leave()`` makes ``receive`` report the disconnect."""

    def __init__(self) -> None:
        self.left = asyncio.Event()
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def leave(self) -> None:
        self.left.set()


async def test_a_client_gone_before_its_answer_sets_the_signal_of_the_call_it_carries() -> None:
    peer, scope = Peer(), dict[str, Any]()
    watching = Watch(b"{}", peer.receive, peer.send, scope)
    signal = asyncio.Event()
    scope[WATCH].carries_call(signal)
    peer.leave()
    await watching.tail
    assert signal.is_set()
    assert scope[CLIENT_GONE].is_set()
    watching.close()


async def test_a_call_that_starts_after_its_client_left_is_aborted_at_once() -> None:
    peer, scope = Peer(), dict[str, Any]()
    watching = Watch(b"{}", peer.receive, peer.send, scope)
    peer.leave()
    await watching.tail
    signal = asyncio.Event()
    scope[WATCH].carries_call(signal)
    assert signal.is_set()
    watching.close()


async def test_a_disconnect_after_the_answer_aborts_nothing() -> None:
    peer, scope = Peer(), dict[str, Any]()
    watching = Watch(b"{}", peer.receive, peer.send, scope)
    signal = asyncio.Event()
    scope[WATCH].carries_call(signal)
    await watching.send({"type": "http.response.start", "status": 200, "headers": []})
    await watching.send({"type": "http.response.body", "body": b"{}", "more_body": False})
    peer.leave()
    await watching.tail
    assert not signal.is_set()
    assert not scope[CLIENT_GONE].is_set()
    watching.close()
