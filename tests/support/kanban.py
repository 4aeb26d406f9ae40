"""A kanban board whose confirm capabilities end their work in a result Message, as the guide
recommends: request Message -> command -> result Message.

``archive_done`` (``RequestedArchiveDone``) only starts a pure command (``Then``) whose
``ArchivedDone`` removes the done cards; ``publish`` (``RequestedPublish``) starts an external
effect (``Effect("saves to the server", ...)``) and declares with ``preview=`` that it brings
back ``Published``. Both carry an internal request id the person must never see.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from foldkit_agent import Effect, Message, Then, agent, message_union, projection, surface


class Card(BaseModel, frozen=True):
    id: str
    title: str
    done: bool = False


class Board(BaseModel, frozen=True):
    cards: tuple[Card, ...] = ()
    publishing: bool = False
    published: bool = False


class RequestedArchiveDone(Message):
    request_id: str


class ArchivedDone(Message):
    ids: tuple[str, ...]


class RequestedPublish(Message):
    request_id: str


class Published(Message):
    pass


Msg = message_union(RequestedArchiveDone, ArchivedDone, RequestedPublish, Published)

STARTING = Board(
    cards=(
        Card(id="c1", title="Write spec", done=True),
        Card(id="c2", title="Ship it"),
        Card(id="c3", title="Fix bug", done=True),
    )
)

saved: list[str] = []
"""What the external effect saved (tests clear it)."""


def update(board: Board, message: Any) -> Any:
    if isinstance(message, RequestedArchiveDone):
        ids = tuple(c.id for c in board.cards if c.done)
        return board, [Then(ArchivedDone(ids=ids))]
    if isinstance(message, ArchivedDone):
        return board.model_copy(
            update={"cards": tuple(c for c in board.cards if c.id not in message.ids)}
        )
    if isinstance(message, RequestedPublish):

        async def save() -> Published:
            saved.append(message.request_id)
            return Published()

        return board.model_copy(update={"publishing": True}), [Effect("saves to the server", save)]
    if isinstance(message, Published):
        return board.model_copy(update={"publishing": False, "published": True})
    return board


App = surface.application(model=Board, message=Msg, initial=STARTING, update=update)
Kanban = agent.for_application(App)


class NoInput(BaseModel):
    pass


def _done(board: Board) -> int:
    return sum(1 for c in board.cards if c.done)


Contract = Kanban.make(
    context=projection.pick(App.model.cards, App.model.published),
    messages=Kanban.expose(
        {
            RequestedArchiveDone: Kanban.variant(
                name="archive_done",
                title="Archive done cards",
                description="Archive every done card",
                input=NoInput,
                to_message=lambda _, ctx: RequestedArchiveDone(request_id=ctx.invocation.id),
                confirm=True,
                describe=lambda request: f"Archive {_done(request.model)} done cards",
            ),
            RequestedPublish: Kanban.variant(
                name="publish",
                title="Publish the board",
                description="Publish the board to the server",
                input=NoInput,
                to_message=lambda _, ctx: RequestedPublish(request_id=ctx.invocation.id),
                confirm=True,
                preview=lambda request: Published(),
            ),
        }
    ),
)
