"""The host seam: how a contract reaches a live application.

A host gives the runtime up to five things, three of them optional:

* ``model() -> Model``: the current immutable Model (read once per invocation);
* ``dispatch(message) -> None | Awaitable[None]``: hand a Message to ``update``;
* ``subscribe(on_model) -> unsubscribe``: called with each new Model (state completion,
  change feeds);
* ``observe(on_message) -> unsubscribe``: called with each applied Message (Message
  completion);
* ``simulate(message) -> Model``: the Model ``update`` would make of the current Model for
  ``message``, applying nothing and running no command (approval previews, DESIGN §11);
* ``accepts``: the Messages ``dispatch`` accepts (a :func:`~.message.message_union`, a
  :func:`~.surface.message_set` or any collection of Message classes). ``bind`` refuses a
  contract exposing a Message outside it; without it ``bind`` trusts the host's type.

:class:`~foldkit_agent.app.program.Program` provides one; any other runtime can, through
:class:`Host`::

    host = Host(model=store.get, dispatch=store.send, subscribe=store.listen)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Container
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

__all__ = ["Host", "SupportsHost", "Unsubscribe", "host_accepts"]

M = TypeVar("M")
Msg = TypeVar("Msg")
M_co = TypeVar("M_co", covariant=True)
Msg_contra = TypeVar("Msg_contra", contravariant=True)

Unsubscribe = Callable[[], None]


@runtime_checkable
class SupportsHost(Protocol[M_co, Msg_contra]):
    """The structural type ``bind`` accepts: ``model`` and ``dispatch`` (see module doc)."""

    def model(self) -> M_co: ...

    def dispatch(self, message: Msg_contra, /) -> Awaitable[None] | None: ...


@dataclass(frozen=True, slots=True)
class Host(Generic[M, Msg]):
    """A host built from plain functions.

    Attributes:
        model: ``() -> Model``.
        dispatch: ``(message) -> None`` or an awaitable.
        subscribe: ``(on_model) -> unsubscribe``, or ``None`` when the host cannot notify.
        observe: ``(on_message) -> unsubscribe``, or ``None`` when Messages are not observable.
        simulate: ``(message) -> Model``, pure: what ``update`` would return for the current
            Model, with nothing applied and commands dropped; ``None`` when the host cannot
            (approval requests then carry no preview).
        accepts: the Message classes ``dispatch`` accepts (``message_union(...)``, a
            message set, a tuple of classes), checked by ``bind``; ``None`` when not declared.
        step: ``(model, message) -> (model, commands)``, pure: ``update`` with its commands
            returned unrun, so a preview can follow the pure ones
            (:class:`~.commands.Then`); ``None`` when the host cannot (previews then use
            ``simulate``).
    """

    model: Callable[[], M]
    dispatch: Callable[[Msg], Awaitable[None] | None]
    subscribe: Callable[[Callable[[M], None]], Unsubscribe] | None = None
    observe: Callable[[Callable[[Msg], None]], Unsubscribe] | None = None
    simulate: Callable[[Msg], M] | None = None
    accepts: Container[type[Any]] | None = None
    step: Callable[[M, Msg], tuple[M, Any]] | None = None


def host_accepts(host: Any) -> Container[type[Any]] | None:
    """The Message classes the host declares it accepts (``accepts``), or ``None``."""
    return getattr(host, "accepts", None)


def host_subscribe(host: Any) -> Callable[[Callable[[Any], None]], Unsubscribe] | None:
    """The host's ``subscribe`` if it has one (attribute present and not ``None``)."""
    return getattr(host, "subscribe", None)


def host_simulate(host: Any) -> Callable[[Any], Any] | None:
    """The host's ``simulate`` if it has one (attribute present, callable, not ``None``)."""
    simulate = getattr(host, "simulate", None)
    return simulate if callable(simulate) else None


def host_step(host: Any) -> Callable[[Any, Any], tuple[Any, Any]] | None:
    """The host's ``step`` if it has one (attribute present, callable, not ``None``)."""
    step: Any = getattr(host, "step", None)
    return cast(Callable[[Any, Any], tuple[Any, Any]], step) if callable(step) else None


def host_observe(host: Any) -> Callable[[Callable[[Any], None]], Unsubscribe] | None:
    """The host's ``observe`` if it has one (attribute present and not ``None``)."""
    return getattr(host, "observe", None)
