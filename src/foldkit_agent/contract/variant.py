"""How one Message is offered to agents: a variant (:func:`variant`) or a surface action
(:func:`action`), as written in an :func:`~.declare.expose` mapping.

Both are unchecked declarations; :func:`~.declare.expose` checks them and turns each into a
:class:`~.declare.Capability`. Their presentation keywords (title, hints, ``confirm``) are one
:class:`~.presentation.Presentation`, passed through as ``**presentation``.

A variant is typed by its input ``I``, so that a type checker gives every hook its argument
types with no annotation: the ``input=`` model for a mapped variant, the Message named first
(``variant(RequestedDeleteTodo, ...)``) for a direct one, and :class:`~.message.Message`
for a direct variant that names none. :class:`VariantFn` writes those signatures once; the
module's :func:`variant` and a builder's ``variant`` are that one function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, Unpack, cast, overload

from pydantic import BaseModel
from typing_extensions import TypeVar

from ..app.message import Message
from ..app.surface import Action
from ..errors import AgentContractError
from .calls import AuthorizationRequest, InvocationContext
from .completion import Completion, CompletionContract, StateCompletion
from .presentation import PLAIN, Presentation, PresentationOptions
from .rates import Rate, parse_rate

__all__ = ["ActionVariant", "Variant", "VariantFn", "action", "variant"]

M = TypeVar("M", default=Any)
P = TypeVar("P", default=Any)
I = TypeVar("I", default=Any)  # noqa: E741 - the input type
Msg = TypeVar("Msg", bound=Message)
S = TypeVar("S", bound=Message, default=Any)
F = TypeVar("F", bound=Message, default=Any)


@dataclass(frozen=True)
class Variant(Generic[M, P, I]):
    """How one Message is offered to agents. Build it with :func:`variant`.

    ``M`` is the Model, ``P`` the principal and ``I`` the input every hook receives.

    Attributes:
        description / name / available / authorize / input / to_message / completion /
            available_when: as the keywords of :func:`variant`.
        presentation: the title, hints and ``confirm`` (:class:`~.presentation.Presentation`).
        message: the Message class named first (``variant(RequestedDeleteTodo, ...)``), or
            ``None``; :func:`~.declare.expose` refuses it under another Message's key.
        rate: the declared ``rate=``, parsed (:class:`~.rates.Rate`), or ``None``.
    """

    description: str
    name: str | None = None
    available: Callable[[M], bool] | None = None
    authorize: Callable[[AuthorizationRequest[M, P, I]], Any] | None = None
    input: type[BaseModel] | None = None
    to_message: Callable[[I, InvocationContext[M, P]], Any] | None = None
    completion: Completion[I, Any, Any] | StateCompletion[Any, I] | None = None
    presentation: Presentation = PLAIN
    message: type[Message] | None = None
    rate: Rate | None = None
    available_when: str | None = None
    scopes: tuple[str, ...] = ()


class VariantFn(Protocol[M, P]):
    """The signatures of :func:`variant` for Model ``M`` and principal ``P`` (a builder's
    ``variant`` is this with both fixed): each hook is typed by the variant's input."""

    @overload
    def __call__(
        self,
        message: type[Msg],
        /,
        *,
        description: str,
        name: str | None = None,
        rate: str | None = None,
        available: Callable[[M], bool] | None = None,
        available_when: str | None = None,
        authorize: Callable[[AuthorizationRequest[M, P, Msg]], Any] | None = None,
        completion: Completion[Msg, S, F] | StateCompletion[Any, Msg] | None = None,
        scopes: Sequence[str] = (),
        **presentation: Unpack[PresentationOptions[M, P, Msg]],
    ) -> Variant[M, P, Msg]: ...

    @overload
    def __call__(
        self,
        message: type[Message] | None = None,
        /,
        *,
        description: str,
        input: type[I],
        to_message: Callable[[I, InvocationContext[M, P]], Message | Mapping[str, Any]],
        name: str | None = None,
        rate: str | None = None,
        available: Callable[[M], bool] | None = None,
        available_when: str | None = None,
        authorize: Callable[[AuthorizationRequest[M, P, I]], Any] | None = None,
        completion: Completion[I, S, F] | StateCompletion[Any, I] | None = None,
        scopes: Sequence[str] = (),
        **presentation: Unpack[PresentationOptions[M, P, I]],
    ) -> Variant[M, P, I]: ...

    @overload
    def __call__(
        self,
        *,
        description: str,
        name: str | None = None,
        rate: str | None = None,
        available: Callable[[M], bool] | None = None,
        available_when: str | None = None,
        authorize: Callable[[AuthorizationRequest[M, P, Message]], Any] | None = None,
        completion: Completion[Message, S, F] | StateCompletion[Any, Message] | None = None,
        scopes: Sequence[str] = (),
        **presentation: Unpack[PresentationOptions[M, P, Message]],
    ) -> Variant[M, P, Message]: ...


def _variant(
    message: type[Message] | None = None,
    /,
    *,
    description: str,
    name: str | None = None,
    rate: str | None = None,
    available: Callable[[Any], bool] | None = None,
    available_when: str | None = None,
    authorize: Callable[[Any], Any] | None = None,
    input: type[BaseModel] | None = None,
    to_message: Callable[[Any, Any], Any] | None = None,
    completion: CompletionContract | None = None,
    scopes: Sequence[str] = (),
    **presentation: Unpack[PresentationOptions],
) -> Variant:
    """Configure how one Message is exposed.

    Args:
        message: optionally, the Message class this variant is for, first: it gives a
            direct variant's hooks their input type (``request.input`` is that Message).
            :func:`~.declare.expose` refuses the variant under another Message's key.
        description: what the capability does, written for the agent (required).
        name: the protocol name; defaults to the tag in snake case (``default_name``).
        rate: the calls of this capability one caller may start, as ``"10/minute"`` (N per
            second, minute, hour or day; :func:`~.rates.parse_rate`), on every transport;
            past it a call is refused unstarted, saying when to retry, and audited
            (:mod:`foldkit_agent.edge.rates`). Recorded in the manifest. Needs the
            ``limits`` extra.
        available: ``(model) -> bool``; when false the capability is refused (and, with
            the MCP listing ``"available"``, unlisted).
        available_when: with ``available``, when the capability is available, as a clause
            that completes "Available only when ..." (one line, at most
            :data:`~.declare.AVAILABLE_WHEN_MAX` characters, e.g. ``"a todo is selected
            (select_todo)"``). Agents see it in listings, the manifest and AGENT.md, and a
            refusal as unavailable names it, so an agent that lists once knows what to do
            first.
        authorize: ``(AuthorizationRequest) -> bool | Deny | {"allowed": False, "reason": ...}``
            or an awaitable of one. Runs after ``available`` and decoding.
        input: a pydantic model for the wire input, when it differs from the Message's fields.
            Requires ``to_message``.
        to_message: ``(input, InvocationContext) -> Message`` (or a payload dict for the
            keyed Message). Requires ``input``; giving one without the other is a type error
            as well as a contract error.
        completion: :class:`~.completion.Completion` or :func:`~.completion.when`.
        scopes: the OAuth scopes a bearer token must grant to call it (``("todos:delete",)``).
            Checked at the edge of every HTTP transport that authenticates with bearer tokens,
            before the call starts: a token without them is answered HTTP 403 with
            ``WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`` naming them,
            so the client can ask its authorization server for them (step-up). Listed in the
            manifest and the protected resource metadata. Each is an RFC 6749 §3.3
            scope-token (printable ASCII, no space, ``"`` or ``\\``).
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
        describe: with ``confirm``, ``(AuthorizationRequest) -> str``: the sentence the person
            approving reads (``"Archive 3 done cards"``), also recorded in the audit entry;
            without it they read the title and the input as labelled fields.
        preview: with ``confirm``, ``(AuthorizationRequest) -> Message | [Message, ...]``:
            the Messages the call's external effect (a command that saves to a server)
            brings back on success, so the approval preview shows their outcome too.

        ``title`` to ``preview`` are the presentation keywords
        (:class:`~.presentation.PresentationOptions`). The four flags are hints for the
        calling agent and the person supervising it, never a permission: ``available`` and
        ``authorize`` decide what runs (DESIGN §10).

    Raises:
        TypeError: a keyword this function does not take.
        AgentContractError: here, for a ``rate`` that is not a rate; at
            :func:`~.declare.expose`, for a Message named first that is
            not the mapping's key, a bad name, ``input`` without
            ``to_message`` or the reverse, a recursive input type, a title that is empty,
            not one line or too long, a flag that is not a bool (or ``None`` where allowed),
            ``read_only=True`` together with ``destructive=True``, a ``confirm`` that is
            neither a bool nor a callable, ``describe``/``preview`` not callable or
            without ``confirm``, or an ``available_when`` without ``available``, empty, not
            one line or too long.

    Example:
        >>> variant(name="select_todo", title="Select todo", description="Select a todo",
        ...         idempotent=True, destructive=False, open_world=False)
        >>> variant(RequestedDeleteTodo, description="Delete a todo",
        ...         authorize=lambda request: request.input.id != "pinned")
        >>> variant(description="Delete the selected todo", destructive=True, confirm=True,
        ...         available=lambda m: m.selected_todo_id is not None,
        ...         available_when="a todo is selected (select_todo)")
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
        message,
        _rate(rate),
        available_when=available_when,
        scopes=tuple(scopes) if not isinstance(scopes, str) else (scopes,),
    )


def _rate(rate: str | None) -> Rate | None:
    """``rate=`` parsed where it is declared, so a bad one never reaches a server."""
    if rate is None:
        return None
    try:
        return parse_rate(rate)
    except ValueError as err:
        raise AgentContractError(f"rate=: {err}") from None


variant = cast(VariantFn[Any, Any], _variant)
"""Configure how one Message is exposed; the arguments are ``help(variant)``'s, and
:class:`VariantFn` is how a type checker reads them (each hook typed by the input)."""


@dataclass(frozen=True)
class ActionVariant:
    """A surface :class:`~.surface.Action` exposed as a capability (see :func:`action`)."""

    action: Action
    available: Callable[[Any], bool] | None = None
    authorize: Callable[[Any], Any] | None = None
    completion: CompletionContract | None = None
    presentation: Presentation = PLAIN
    rate: Rate | None = None
    available_when: str | None = None
    scopes: tuple[str, ...] = ()

    def as_variant(self) -> Variant:
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
            rate=self.rate,
            available_when=self.available_when,
            scopes=self.scopes,
        )


def action(
    surface_action: Action,
    *,
    available: Callable[[Any], bool] | None = None,
    available_when: str | None = None,
    authorize: Callable[[Any], Any] | None = None,
    completion: CompletionContract | None = None,
    rate: str | None = None,
    scopes: Sequence[str] = (),
    **presentation: Unpack[PresentationOptions],
) -> ActionVariant:
    """Expose a surface Action under the tag of the Message it makes.

    ``available_when``, ``title``, the four behaviour hints, ``confirm``, ``rate`` and
    ``scopes`` mean what they mean on :func:`variant`.

    Raises:
        AgentContractError: at :func:`~.declare.expose`, when keyed under another Message's
            tag, or for a bad title, hint, ``confirm`` or ``available_when`` (see
            :func:`variant`).
    """
    if not isinstance(surface_action, Action):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("agent.action takes a surface.action(...)")
    return ActionVariant(
        surface_action,
        available,
        authorize,
        completion,
        Presentation.of(**presentation),
        _rate(rate),
        available_when,
        scopes=tuple(scopes) if not isinstance(scopes, str) else (scopes,),
    )
