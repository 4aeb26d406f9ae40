"""A second toy application whose Messages use constrained types, for the property that the
schema advertised is the schema enforced (DESIGN §4.13): bounded numbers, patterned and
bounded strings, enums, literals, tagged unions, nested models, bounded lists, optional fields,
dates and UUIDs, and an input model mapped onto a Message."""

from __future__ import annotations

import datetime
import enum
import uuid
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from foldkit_agent import Message, agent, message_union, projection, surface


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Card(BaseModel):
    kind: Literal["card"]
    number: Annotated[str, StringConstraints(pattern=r"^[0-9]{12,19}$")]


class Iban(BaseModel):
    kind: Literal["iban"]
    iban: Annotated[str, StringConstraints(min_length=15, max_length=34, pattern=r"^[A-Z0-9]+$")]


class Line(BaseModel):
    sku: Annotated[str, StringConstraints(min_length=1, max_length=12)]
    qty: int = Field(ge=1, le=99)
    unit_price: float = Field(gt=0, le=10_000)


class PlacedOrder(Message):
    lines: list[Line] = Field(min_length=1, max_length=5)
    payment: Card | Iban = Field(discriminator="kind")
    priority: Priority = Priority.LOW
    deliver_on: datetime.date | None = None
    note: Annotated[str, StringConstraints(max_length=40)] | None = None
    reference: uuid.UUID | None = None


class SetThreshold(Message):
    level: int = Field(ge=-5, le=5, multiple_of=5)
    ratio: float = Field(ge=0, lt=1)
    tags: list[Annotated[str, StringConstraints(pattern=r"^[a-z]{1,8}$")]] = Field(
        default=[], max_length=3
    )
    mode: Literal["auto", "manual"] = "auto"


class ThresholdInput(BaseModel):
    percent: int = Field(ge=0, le=100)
    enabled: bool


class Alerted(Message):
    percent: int
    enabled: bool


class Renamed(Message):
    name: Annotated[str, StringConstraints(min_length=2, max_length=20, pattern=r"^[A-Za-z ]+$")]


class Model(BaseModel, frozen=True):
    orders: int = 0
    threshold: int = 0


Msg = message_union(PlacedOrder, SetThreshold, Alerted, Renamed)
App = surface.application(model=Model, message=Msg)
Builder = agent.for_application(App)

Contract = Builder.make(
    context=projection.pick(App.model.orders, App.model.threshold),
    messages=Builder.expose(
        {
            PlacedOrder: "Place an order",
            SetThreshold: "Set the alert threshold",
            Alerted: Builder.variant(
                name="configure_alerts",
                description="Configure alerts",
                input=ThresholdInput,
                to_message=lambda inp, ctx: Alerted(percent=inp.percent, enabled=inp.enabled),
            ),
            Renamed: "Rename the shop",
        }
    ),
)
