"""``simulate``: what update would make of a Message, with nothing applied (DESIGN §5, §11)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from foldkit_agent import Host, Message, Program
from foldkit_agent.app.host import host_simulate


class Model(BaseModel, frozen=True):
    items: tuple[str, ...] = ()


class Added(Message):
    title: str


async def test_simulate_returns_updates_model_and_applies_nothing() -> None:
    ran: list[str] = []

    async def save() -> None:
        ran.append("save")

    def update(model: Model, msg: Any) -> Any:
        return model.model_copy(update={"items": (*model.items, msg.title)}), [save]

    seen: list[Any] = []
    async with Program(init=Model(items=("a",)), update=update).run() as running:
        running.host.observe(seen.append)
        running.host.subscribe(seen.append)
        before = running.host.model()
        simulate = host_simulate(running.host)
        assert simulate is not None
        after = simulate(Added(title="b"))
        await running.settled()
        assert after.items == ("a", "b")
        assert running.host.model() is before
        assert running.applied == 0
        assert seen == []
        assert ran == []  # the command update returned was dropped, not run


async def test_simulate_starts_from_the_current_model() -> None:
    def update(model: Model, msg: Any) -> Model:
        return model.model_copy(update={"items": (*model.items, msg.title)})

    async with Program(init=Model(), update=update).run() as running:
        running.host.dispatch(Added(title="a"))
        assert running.simulate(Added(title="b")).items == ("a", "b")
        assert running.host.model().items == ("a",)


def test_a_host_built_from_functions_may_or_may_not_simulate() -> None:
    plain = Host(model=Model, dispatch=lambda m: None)
    assert host_simulate(plain) is None
    able = Host(model=Model, dispatch=lambda m: None, simulate=lambda m: Model(items=("x",)))
    simulate = host_simulate(able)
    assert simulate is not None
    assert simulate(Added(title="x")) == Model(items=("x",))
