"""The counter toy application shared by the contract and app tests."""

from __future__ import annotations

from pydantic import BaseModel

from foldkit_agent import Message, message_union, surface


class Model(BaseModel, frozen=True):
    count: int = 0
    selected: str | None = None


class Incremented(Message):
    by: int = 1


class Reset(Message):
    pass


class Loaded(Message):
    count: int


Msg = message_union(Incremented, Reset, Loaded)


App = surface.application(model=Model, message=Msg)


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Grow(Message):
    root: Node


class Other(Message):
    x: int = 0
