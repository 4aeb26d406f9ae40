"""How one Message is offered to agents: a variant (:func:`variant`) or a surface action
(:func:`action`), as written in an :func:`~.declare.expose` mapping.

Both are unchecked declarations; :func:`~.declare.expose` checks them and turns each into a
:class:`~.declare.Capability`. Their presentation keywords (title, hints, ``confirm``) are one
:class:`~.presentation.Presentation`, passed through as ``**presentation``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, Unpack

from pydantic import BaseModel

from ..app.surface import Action
from ..errors import AgentContractError
from .completion import CompletionContract
from .presentation import PLAIN, Presentation, PresentationOptions

__all__ = ["ActionVariant", "Variant", "action", "variant"]

M = TypeVar("M")
P = TypeVar("P")


@dataclass(frozen=True)
class Variant(Generic[M, P]):
    """How one Message is offered to agents. Build it with :func:`variant`.

    Attributes:
        description / name / available / authorize / input / to_message / completion: as
            the keywords of :func:`variant`.
        presentation: the title, hints and ``confirm`` (:class:`~.presentation.Presentation`).
    """

    description: str
    name: str | None = None
    available: Callable[[M], bool] | None = None
    authorize: Callable[[Any], Any] | None = None
    input: type[BaseModel] | None = None
    to_message: Callable[[Any, Any], Any] | None = None
    completion: CompletionContract | None = None
    presentation: Presentation = PLAIN


def variant(
    *,
    description: str,
    name: str | None = None,
    available: Callable[[Any], bool] | None = None,
    authorize: Callable[[Any], Any] | None = None,
    input: type[BaseModel] | None = None,
    to_message: Callable[[Any, Any], Any] | None = None,
    completion: CompletionContract | None = None,
    **presentation: Unpack[PresentationOptions[Any, Any]],
) -> Variant[Any, Any]:
    """Configure how one Message is exposed.

    Args:
        description: what the capability does, written for the agent (required).
        name: the protocol name; defaults to the tag in snake case (``default_name``).
        available: ``(model) -> bool``; when false the capability is unlisted and refused.
        authorize: ``(AuthorizationRequest) -> bool | Deny | {"allowed": False, "reason": ...}``
            or an awaitable of one. Runs after ``available`` and decoding.
        input: a pydantic model for the wire input, when it differs from the Message's fields.
            Requires ``to_message``.
        to_message: ``(input, InvocationContext) -> Message`` (or a payload dict for the
            keyed Message). Requires ``input``.
        completion: :class:`~.completion.Completion` or :func:`~.completion.when`.
        title: a short human-readable name (one line, at most 128 characters), shown by
            clients instead of ``name``.
        read_only: the call changes nothing in the application (MCP ``readOnlyHint``).
        destructive: the call may destroy or overwrite what exists (``destructiveHint``);
            ``None`` says nothing, and MCP clients then assume it may.
        idempotent: calling again with the same input has no further effect
            (``idempotentHint``).
        open_world: the call reaches beyond the application (other systems, the network,
            people) (``openWorldHint``); ``None`` says nothing, and clients assume it does.
        confirm: ``True`` to have a person approve every call before its Message is sent,
            or ``(AuthorizationRequest) -> bool`` (or an awaitable) deciding per call; see
            :mod:`~.approval` and DESIGN §11. A transport that cannot ask a person refuses
            such a call (``AgentApprovalError``, reason ``"unavailable"``).

        ``title`` to ``confirm`` are the presentation keywords
        (:class:`~.presentation.PresentationOptions`). The four flags are hints for the
        calling agent and the person supervising it, never a permission: ``available`` and
        ``authorize`` decide what runs (DESIGN §10).

    Raises:
        TypeError: a keyword this function does not take.
        AgentContractError: at :func:`~.declare.expose`, for a bad name, ``input`` without
            ``to_message`` or the reverse, a recursive input type, a title that is empty,
            not one line or too long, a flag that is not a bool (or ``None`` where allowed),
            ``read_only=True`` together with ``destructive=True``, or a ``confirm`` that is
            neither a bool nor a callable.

    Example:
        >>> variant(name="select_todo", title="Select todo", description="Select a todo",
        ...         idempotent=True, destructive=False, open_world=False)
        >>> variant(description="Delete the selected todo", destructive=True, confirm=True)
    """
    return Variant(
        description,
        name,
        available,
        authorize,
        input,
        to_message,
        completion,
        Presentation.of(**presentation),
    )


@dataclass(frozen=True)
class ActionVariant:
    """A surface :class:`~.surface.Action` exposed as a capability (see :func:`action`)."""

    action: Action
    available: Callable[[Any], bool] | None = None
    authorize: Callable[[Any], Any] | None = None
    completion: CompletionContract | None = None
    presentation: Presentation = PLAIN

    def as_variant(self) -> Variant[Any, Any]:
        """The variant this action declares: its name, description, input and
        ``to_message`` from the action, the rest from here."""
        act = self.action
        return Variant(
            act.description,
            act.name,
            self.available,
            self.authorize,
            act.input,
            act.to_message,
            self.completion,
            self.presentation,
        )


def action(
    surface_action: Action,
    *,
    available: Callable[[Any], bool] | None = None,
    authorize: Callable[[Any], Any] | None = None,
    completion: CompletionContract | None = None,
    **presentation: Unpack[PresentationOptions[Any, Any]],
) -> ActionVariant:
    """Expose a surface Action under the tag of the Message it makes.

    ``title``, the four behaviour hints and ``confirm`` mean what they mean on
    :func:`variant`.

    Raises:
        AgentContractError: at :func:`~.declare.expose`, when keyed under another Message's
            tag, or for a bad title, hint or ``confirm`` (see :func:`variant`).
    """
    if not isinstance(surface_action, Action):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("agent.action takes a surface.action(...)")
    return ActionVariant(
        surface_action, available, authorize, completion, Presentation.of(**presentation)
    )
