"""How a capability presents itself: its title, what a call does (hints), and whether a
person approves each call. One value, shared by a variant and the capability it becomes.

Every keyword that sets it (``title``, ``read_only``, ``destructive``, ``idempotent``,
``open_world``, ``confirm``, and for a person approving a call ``describe`` and ``preview``)
is declared once, in :class:`PresentationOptions`; the variant
and action builders take them as ``**presentation`` and pass them through, so a new one is
added here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypedDict

from typing_extensions import TypeVar

from ..errors import AgentContractError
from .approval import Confirm, check_confirm
from .calls import AuthorizationRequest

__all__ = ["PLAIN", "TITLE_MAX", "Hints", "Presentation", "PresentationOptions"]

M = TypeVar("M", default=Any)
P = TypeVar("P", default=Any)
I = TypeVar("I", default=Any)  # noqa: E741 - the input type

TITLE_MAX = 128
"""The longest ``title`` a capability may have, in characters."""


class PresentationOptions(TypedDict, Generic[M, P, I], total=False):
    """The presentation keywords of ``agent.variant`` and ``agent.action`` (all optional).

    ``M`` and ``P`` are the Model and principal types a builder fixes, ``I`` the variant's
    input; ``confirm``'s predicate, ``describe`` and ``preview`` take the same
    ``AuthorizationRequest`` as ``authorize``.

    * ``describe(request) -> str``: the sentence a person approving the call reads
      (``"Archive 3 done cards"``), recorded in the audit entry; needs ``confirm``.
    * ``preview(request) -> Message | [Message, ...]``: the Messages the call's external
      effect brings back when it succeeds (the result a command would dispatch), so the
      approval preview can show the outcome ``update`` makes of them; needs ``confirm``.
    """

    title: str | None
    read_only: bool
    destructive: bool | None
    idempotent: bool
    open_world: bool | None
    confirm: bool | Callable[[AuthorizationRequest[M, P, I]], Any] | None
    describe: Callable[[AuthorizationRequest[M, P, I]], str] | None
    preview: Callable[[AuthorizationRequest[M, P, I]], Any] | None


@dataclass(frozen=True)
class Hints:
    """What a call does, as declared: hints for agents and people, never a permission.

    Attributes:
        read_only: changes nothing.
        destructive: may destroy or overwrite what exists; ``None`` when not declared.
        idempotent: repeating it with the same input has no further effect.
        open_world: reaches beyond the application; ``None`` when not declared.
    """

    read_only: bool = False
    destructive: bool | None = None
    idempotent: bool = False
    open_world: bool | None = None

    def declared(self) -> dict[str, bool]:
        """The hints that were declared, in a fixed order; a ``None`` hint is left out.

        Example:
            >>> Hints(read_only=True, open_world=False).declared()
            {'read_only': True, 'idempotent': False, 'open_world': False}
        """
        return {k: v for k, v in self.all().items() if v is not None}

    def all(self) -> dict[str, bool | None]:
        """Every hint by name, ``None`` where not declared (the manifest's ``hints``)."""
        return {
            "read_only": self.read_only,
            "destructive": self.destructive,
            "idempotent": self.idempotent,
            "open_world": self.open_world,
        }


@dataclass(frozen=True)
class Presentation:
    """A capability's title, hints and approval, as declared.

    Build it from the keywords with :meth:`of`; :func:`~.declare.expose` checks it
    (:meth:`checked`) and the capability carries the checked value.

    Attributes:
        title: a short human-readable name, or ``None``.
        hints: the declared :class:`Hints`.
        confirm: ``True``, a predicate ``(AuthorizationRequest) -> bool`` (or an awaitable),
            or ``None`` (no person is asked); ``False`` is kept as declared until checked.
        describe: ``(AuthorizationRequest) -> str``, the sentence a person approving reads,
            or ``None`` (they read the title and the input as labelled fields).
        preview: ``(AuthorizationRequest) -> Message | Sequence[Message]``, the Messages an
            external effect brings back, previewed after the call's own; or ``None``.
    """

    title: str | None = None
    hints: Hints = Hints()
    confirm: Confirm | None = None
    describe: Callable[[Any], Any] | None = None
    preview: Callable[[Any], Any] | None = None

    @classmethod
    def of(
        cls,
        *,
        title: str | None = None,
        read_only: bool = False,
        destructive: bool | None = None,
        idempotent: bool = False,
        open_world: bool | None = None,
        confirm: Confirm | None = None,
        describe: Callable[[Any], Any] | None = None,
        preview: Callable[[Any], Any] | None = None,
    ) -> Presentation:
        """The presentation the keywords of :class:`PresentationOptions` declare, unchecked.

        Example:
            >>> Presentation.of(title="Delete todo", destructive=True).hints.destructive
            True
        """
        hints = Hints(read_only, destructive, idempotent, open_world)
        return cls(title, hints, confirm, describe, preview)

    def checked(self, tag: str) -> Presentation:
        """This presentation with the title trimmed and ``confirm=False`` read as ``None``.

        Raises:
            AgentContractError: naming ``tag``, for a title that is not a non-empty string
                of one line and at most :data:`TITLE_MAX` characters, a hint that is not a
                bool (or ``None`` where allowed), ``read_only=True`` with
                ``destructive=True``, a ``confirm`` that is neither a bool nor a callable, or
                a ``describe`` / ``preview`` that is not a callable or comes without
                ``confirm`` (only a person approving reads them).
        """
        _check_hints(tag, self.hints)
        confirm = check_confirm(tag, self.confirm)
        for keyword, hook in (("describe", self.describe), ("preview", self.preview)):
            if hook is None:
                continue
            if not callable(hook):
                raise AgentContractError(
                    f"{tag!r}: {keyword}= takes a function (AuthorizationRequest) -> "
                    f"{'str' if keyword == 'describe' else 'Message'}, "
                    f"not {type(hook).__name__}",
                    capability=tag,
                )
            if confirm is None:
                raise AgentContractError(
                    f"{tag!r}: {keyword}= is shown to a person approving the call, and this "
                    f"capability asks nobody; add confirm=True (or a predicate) or drop "
                    f"{keyword}=",
                    capability=tag,
                )
        title = _title(tag, self.title)
        return Presentation(title, self.hints, confirm, self.describe, self.preview)


def _title(tag: str, title: Any) -> str | None:
    if title is None:
        return None
    if not isinstance(title, str) or not title.strip():
        raise AgentContractError(f"{tag!r}: title= takes a non-empty string", capability=tag)
    text = title.strip()
    if "\n" in text or "\r" in text or len(text) > TITLE_MAX:
        raise AgentContractError(
            f"{tag!r}: the title must be one line of at most {TITLE_MAX} characters",
            capability=tag,
        )
    return text


_OPTIONAL_HINTS = frozenset({"destructive", "open_world"})


def _check_hints(tag: str, hints: Hints) -> None:
    for flag, value in hints.all().items():
        optional = flag in _OPTIONAL_HINTS
        if not isinstance(value, bool) and not (optional and value is None):
            allowed = "True, False or None" if optional else "True or False"
            raise AgentContractError(f"{tag!r}: {flag}= takes {allowed}", capability=tag)
    if hints.read_only and hints.destructive:
        raise AgentContractError(
            f"{tag!r}: a read-only capability cannot be destructive; "
            "drop read_only=True or destructive=True",
            capability=tag,
        )


PLAIN = Presentation()
"""No title, no hint declared, no approval: what a variant without presentation keywords has."""
