"""The agent contract: what an agent may do (capabilities) and see (context, resources).

A contract is a declaration. Building it checks everything that can be checked without a
Model: names, collisions, keys outside the union, ``input`` without ``to_message``, recursive
input types. Nothing here runs ``update`` or touches a transport; :func:`~.runtime.bind`
joins a contract to a live application.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, cast

from pydantic import BaseModel
from typing_extensions import TypeVar

from ..app.message import Message, MessageUnion
from ..app.projection import Projection
from ..app.surface import Application, Feature, MessageSet
from ..errors import AgentContractError
from .approval import Confirm
from .completion import Completion, CompletionContract, StateCompletion
from .decode import InputDecoder
from .names import NAME_PATTERN, default_name, is_valid_name, suggested_name
from .presentation import PLAIN, Hints, Presentation
from .rates import Rate
from .schema import JsonSchema, RecursiveSchemaError, UnexpressibleSchemaError
from .variant import ActionVariant, Variant
from .view import View

M = TypeVar("M", default=Any)
P = TypeVar("P", default=Any)
E = TypeVar("E", default=Any)
E_co = TypeVar("E_co", covariant=True, default=Any)

__all__ = [
    "AVAILABLE_WHEN_MAX",
    "AgentDefinition",
    "Capability",
    "ExposedMessages",
    "Resource",
    "Wiring",
    "expose",
    "expose_subset",
    "make",
    "resource",
]


AVAILABLE_WHEN_MAX = 200
"""The longest ``available_when`` clause a capability may have, in characters."""


@dataclass(frozen=True, eq=False)
class Capability:
    """One exposed capability, fully resolved at declaration.

    Attributes:
        name: the protocol-facing name.
        tag: the tag of the Message it dispatches.
        message: that Message class.
        description: for the agent.
        input_type: the pydantic model decoded from the wire (the Message itself by default).
        decoder: the strict :class:`~.schema.InputDecoder` for ``input_type``.
        available / authorize / to_message / completion: the hooks, or ``None``.
        rate: the declared ``rate=`` (:class:`~.rates.Rate`), or ``None``.
        scopes: the OAuth scopes a bearer token must grant to call it (``variant(scopes=)``),
            in declaration order, each once; ``()`` when none are declared.
        presentation: the checked :class:`~.presentation.Presentation`; its parts are read
            as ``title`` (or ``None``), ``hints`` (:class:`~.presentation.Hints`) and
            ``confirm`` (``True``, a predicate, or ``None``: no person is asked).
        available_when: when it is available, as a clause completing "Available only when
            ..." (declared with ``available``), or ``None``.
    """

    name: str
    tag: str
    message: type[Message]
    description: str
    input_type: type[BaseModel]
    decoder: InputDecoder
    available: Callable[[Any], bool] | None = None
    authorize: Callable[[Any], Any] | None = None
    to_message: Callable[[Any, Any], Any] | None = None
    completion: CompletionContract | None = None
    presentation: Presentation = PLAIN
    rate: Rate | None = None
    available_when: str | None = None
    scopes: tuple[str, ...] = ()

    @property
    def title(self) -> str | None:
        """A short human-readable name, or ``None``."""
        return self.presentation.title

    @property
    def hints(self) -> Hints:
        """The declared hints (read-only, destructive, idempotent, open world)."""
        return self.presentation.hints

    @property
    def confirm(self) -> Confirm | None:
        """``True``, a predicate ``(AuthorizationRequest) -> bool``, or ``None``."""
        return self.presentation.confirm

    @property
    def availability(self) -> str | None:
        """The sentence that says when it is available (``available_when``), or ``None``.

        Listings put it after the description, and the refusal of a call made while it is
        unavailable ends with it.

        Example:
            >>> AppAgent.by_name["delete_todo"].availability
            'Available only when a todo is selected (select_todo).'
        """
        when = self.available_when
        return None if when is None else f"Available only when {when}."

    @property
    def listed_description(self) -> str:
        """What an agent's listing shows: the description, then :attr:`availability`."""
        when = self.availability
        return self.description if when is None else f"{self.description} {when}"

    @property
    def input_schema(self) -> JsonSchema:
        """The compatibility-profile JSON Schema of the input (a fresh copy)."""
        return copy.deepcopy(self.decoder.schema)

    @property
    def accepted(self) -> tuple[str, ...]:
        """The top-level field names the input accepts."""
        return self.decoder.accepted

    @property
    def approval(self) -> str:
        """``"none"``, ``"always"`` (``confirm=True``) or ``"conditional"`` (a predicate)."""
        if self.confirm is None:
            return "none"
        return "always" if self.confirm is True else "conditional"

    @property
    def completion_kind(self) -> str:
        """``"none"``, ``"message"`` or ``"state"``."""
        if self.completion is None:
            return "none"
        return "message" if isinstance(self.completion, Completion) else "state"

    def __repr__(self) -> str:
        return f"Capability({self.name!r}, tag={self.tag!r})"


@dataclass(frozen=True)
class ExposedMessages(Generic[E_co]):
    """The capabilities declared by one :func:`expose` call, in declaration order.

    ``E_co`` is the union of the exposed Message classes (what a host must accept).
    """

    capabilities: tuple[Capability, ...]


def _resolve_key(key: Any, variants: Mapping[str, type[Message]], where: str) -> type[Message]:
    if isinstance(key, str):
        cls = variants.get(key)
        if cls is None:
            raise AgentContractError(f"{key!r} is not a Message tag of {where}", capability=key)
        return cls
    if isinstance(key, type) and issubclass(key, Message):
        if variants.get(key.tag()) is not key:
            raise AgentContractError(f"{key.tag()!r} is not in {where}", capability=key.tag())
        return key
    raise AgentContractError(f"expose keys are Message classes or tags, got {key!r}")


def _capability(cls: type[Message], spec: Any) -> Capability:
    tag = cls.tag()
    if isinstance(spec, str):
        spec = Variant[Any, Any, Any](description=spec)
    if isinstance(spec, ActionVariant):
        made = spec.action.message
        if made is not cls:
            raise AgentContractError(
                f"the action {spec.action.name!r} makes {made.tag()!r}, so it cannot be exposed "
                f"under {tag!r}",
                capability=tag,
            )
        spec = spec.as_variant()
    if not isinstance(spec, Variant):
        raise AgentContractError(
            f"{tag!r}: a variant is a description string, agent.variant(...) or agent.action(...)",
            capability=tag,
        )
    v = cast(Variant, spec)
    if v.message is not None and v.message is not cls:
        named = getattr(v.message, "__name__", repr(v.message))  # a tag is its class name
        raise AgentContractError(
            f"the variant for {named!r} is keyed under {tag!r}; key it under "
            f"{named} or name {tag} in agent.variant(...)",
            capability=tag,
        )
    if not isinstance(v.description, str) or not v.description.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError(f"{tag!r} needs a non-empty description", capability=tag)
    name = v.name if v.name is not None else default_name(tag)
    if not isinstance(name, str) or not is_valid_name(name):  # pyright: ignore[reportUnnecessaryIsInstance]
        given = "the name= given" if v.name is not None else "the name made from the tag"
        raise AgentContractError(
            f"{tag!r}: {given}, {name!r}, is not a capability name (ASCII letters, digits, '_' "
            f"and '-', at most 128, matching {NAME_PATTERN.pattern}); pass "
            f"agent.variant(name={suggested_name(name)!r}, ...) or another name that matches",
            capability=tag,
        )
    # from here on the capability has its name: errors say it first, then its Message's tag
    who = f"{name!r} ({tag})"
    if (v.input is None) != (v.to_message is None):
        missing = "to_message" if v.to_message is None else "input"
        raise AgentContractError(
            f"{who}: input and to_message go together; {missing} is missing", capability=name
        )
    presentation = v.presentation.checked(tag)
    available_when = _available_when(who, name, v)
    scopes = _checked_scopes(tag, v.scopes)
    input_type: type[BaseModel] = v.input if v.input is not None else cls
    if not (isinstance(input_type, type) and issubclass(input_type, BaseModel)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError(f"{who}: input must be a pydantic model class", capability=name)
    try:
        decoder = InputDecoder(input_type)
    except RecursiveSchemaError as exc:
        raise AgentContractError(
            f"{who}: the input type refers to itself ({exc}), which has no finite schema; "
            "give the variant a non-recursive input",
            capability=name,
        ) from exc
    except UnexpressibleSchemaError as exc:
        raise AgentContractError(
            f"{who}: the input field {exc.path or '(the whole input)'!r} would not accept "
            f"what its advertised schema says: {exc.reason}",
            capability=name,
        ) from exc
    return Capability(
        name=name,
        tag=tag,
        message=cls,
        description=v.description.strip(),
        input_type=input_type,
        decoder=decoder,
        available=v.available,
        authorize=v.authorize,
        to_message=v.to_message,
        completion=v.completion,
        presentation=presentation,
        rate=v.rate,
        available_when=available_when,
        scopes=scopes,
    )


def _available_when(who: str, name: str, v: Variant) -> str | None:
    """The checked ``available_when`` clause: trimmed, without a final full stop (errors
    start with ``who``, the capability's name and tag, and carry ``name``)."""
    when: Any = v.available_when
    if when is None:
        return None
    if v.available is None:
        raise AgentContractError(
            f"{who}: available_when= says when the capability is available, so it needs "
            "available=(model) -> bool; add available= or drop available_when=",
            capability=name,
        )
    text = when.strip().rstrip(".").strip() if isinstance(when, str) else ""
    if not text or "\n" in text or "\r" in text or len(text) > AVAILABLE_WHEN_MAX:
        raise AgentContractError(
            f"{who}: available_when= takes one line of at most {AVAILABLE_WHEN_MAX} "
            'characters completing "Available only when ...", e.g. "a todo is selected"',
            capability=name,
        )
    return text


_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")
"""An RFC 6749 §3.3 scope-token (at most 128 characters here)."""


def _checked_scopes(tag: str, scopes: Any) -> tuple[str, ...]:
    if not isinstance(scopes, tuple):
        raise AgentContractError(
            f"{tag!r}: scopes takes a list of scope names, such as scopes=['todos:delete']",
            capability=tag,
        )
    for scope in cast(tuple[Any, ...], scopes):
        if not isinstance(scope, str) or not _SCOPE_TOKEN.fullmatch(scope):
            raise AgentContractError(
                f"{tag!r}: the scope {scope!r} is not an OAuth scope name (printable ASCII, "
                'no space, " or \\, at most 128 characters)',
                capability=tag,
            )
    return tuple(dict.fromkeys(cast(tuple[str, ...], scopes)))


def _expose(
    variants: Mapping[str, type[Message]], mapping: Mapping[Any, Any], where: str
) -> ExposedMessages[Any]:
    if not isinstance(mapping, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("expose takes a mapping of Message class (or tag) to variant")
    caps: list[Capability] = []
    seen_tags: set[str] = set()
    for key, spec in mapping.items():
        cls = _resolve_key(key, variants, where)
        if cls.tag() in seen_tags:
            raise AgentContractError(f"{cls.tag()!r} is exposed twice", capability=cls.tag())
        seen_tags.add(cls.tag())
        caps.append(_capability(cls, spec))
    _check_unique(caps)
    return ExposedMessages(tuple(caps))


def _check_unique(caps: Sequence[Capability]) -> None:
    names: dict[str, str] = {}
    for cap in caps:
        other = names.get(cap.name)
        if other is not None:
            raise AgentContractError(
                f"{other!r} and {cap.tag!r} both map to the capability name {cap.name!r}; "
                "give one an explicit name=",
                capability=cap.tag,
            )
        names[cap.name] = cap.tag


def expose(
    union: MessageUnion[E] | Application[Any, E],
    mapping: Mapping[type[E], Variant[Any, Any, Any] | ActionVariant | str]
    | Mapping[str, Variant[Any, Any, Any] | ActionVariant | str],
) -> ExposedMessages[E]:
    """Declare which Messages of ``union`` an agent may cause, and how.

    ``mapping`` keys are Message classes (preferred) or tags; values are a description
    string, :func:`variant` or :func:`action`. Exposure is opt-in: there is no expose-all.
    A type checker reads the exposed union ``E`` off the class keys and rejects a class key
    outside ``union`` (tag keys are checked here, at run time).

    Raises:
        AgentContractError: a key outside the union, a bad or duplicate name, or a bad variant.

    Example:
        >>> expose(TodoMessage, {RequestedCreateTodo: "Create a todo"})
    """
    if isinstance(union, Application):
        union = union.message
    if not isinstance(union, MessageUnion):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("expose takes a message_union(...) (or an application)")
    return _expose(union.variants, mapping, "the Message union")


def expose_subset(
    subset: MessageSet,
    mapping: Mapping[type[E], Variant[Any, Any, Any] | ActionVariant | str]
    | Mapping[str, Variant[Any, Any, Any] | ActionVariant | str],
) -> ExposedMessages[E]:
    """:func:`expose`, restricted to a :func:`~.surface.message_set` subset.

    Raises:
        AgentContractError: a key outside the subset (see :func:`expose`).
    """
    if not isinstance(subset, MessageSet):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("expose_subset takes a surface.message_set(...)")
    return _expose(subset.variants, mapping, "the message set")


@dataclass(frozen=True)
class Resource:
    """A named, read-only projection of the Model. Build it with :func:`resource`."""

    name: str
    description: str
    projection: Projection


def resource(name: str, *, description: str, projection: Projection) -> Resource:
    """Declare a read-only resource an agent may read by name.

    Raises:
        AgentContractError: a name outside ``[A-Za-z0-9_-]{1,128}`` or a non-projection.
    """
    if not isinstance(name, str) or not is_valid_name(name):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError(f"resource name {name!r} must match {NAME_PATTERN.pattern}")
    if not isinstance(projection, Projection):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError(f"resource {name!r}: projection= takes a projection")
    return Resource(name=name, description=description, projection=projection)


@dataclass(frozen=True)
class Wiring:
    """The contract as it joins an application assembly: contract-only, routes nothing."""

    contract: AgentDefinition


@dataclass(frozen=True, eq=False)
class AgentDefinition(Generic[M, P, E_co]):
    """A complete, protocol-neutral contract. Build it with :func:`make`.

    Typed by its Model ``M``, principal ``P`` and exposed Message union ``E_co``, so that
    ``bind`` rejects (for a type checker) a host that cannot accept every exposed Message or
    a principal provider of another type.

    Attributes:
        capabilities: every capability, in declaration order.
        context: the projection an agent sees, or ``None``.
        resources: name -> :class:`Resource`.
        model_type: the Model class, when the contract was built for one.
        view: the application's view (:func:`~.view.view`), or ``None``.
    """

    capabilities: tuple[Capability, ...]
    context: Projection | None
    resources: Mapping[str, Resource]
    model_type: type[Any] | None = None
    view: View | None = None
    by_name: Mapping[str, Capability] = field(init=False, repr=False)
    by_tag: Mapping[str, Capability] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {c.name: c for c in self.capabilities})
        object.__setattr__(self, "by_tag", {c.tag: c for c in self.capabilities})
        self._check_one_model()

    def projections(self) -> list[tuple[str, Projection]]:
        """Every projection the contract reads, with where it is declared."""
        found: list[tuple[str, Projection]] = []
        if self.context is not None:
            found.append(("the context", self.context))
        found.extend((f"resource {name!r}", r.projection) for name, r in self.resources.items())
        for cap in self.capabilities:
            completion = cap.completion
            if isinstance(completion, StateCompletion) and completion.projection is not None:
                found.append((f"{cap.name!r}'s completion", completion.projection))
        return found

    def reads_model(self) -> type[Any] | None:
        """The Model class the contract reads: its ``model_type``, else its projections' root."""
        if self.model_type is not None:
            return self.model_type
        return next((p.root for _, p in self.projections() if p.root is not None), None)

    def _check_one_model(self) -> None:
        """Every projection must read this application's Model (DESIGN §4.8, spec "Completing
        on state"): a projection of another Model would fail on every read."""
        expected: type[Any] | None = self.model_type
        first = "the contract's Model"
        for where, proj in self.projections():
            root = proj.root
            if root is None:
                continue
            if expected is None:
                expected, first = root, where
            elif root is not expected:
                raise AgentContractError(
                    f"{where} reads {root.__name__}, but {first} is {expected.__name__}; a "
                    "projection must read this application's Model"
                )

    def wiring(self) -> Wiring:
        """The contract as an assembly part; ``definition.wiring().contract is definition``."""
        return Wiring(self)

    def lookup(self, ref: Any) -> Capability | None:
        """The capability named by a Message class, a capability name or a tag, else ``None``."""
        if isinstance(ref, str):
            return self.by_name.get(ref) or self.by_tag.get(ref)
        tag = getattr(ref, "__message_tag__", None)
        if tag is None:
            return None
        cap = self.by_tag.get(tag)
        return cap if cap is not None and cap.message is ref else None


def make(
    *,
    messages: ExposedMessages[E] | Iterable[ExposedMessages[E]],
    context: Projection | Feature | None = None,
    resources: Iterable[Resource] = (),
    model_type: type[Any] | None = None,
    view: View | None = None,
) -> AgentDefinition[Any, Any, E]:
    """Assemble the contract.

    Args:
        messages: the result of :func:`expose` (or several, whose names must not collide).
        context: the projection returned to the agent as its context: a projection
            (``projection.pick(...)``, ``projection.compose(...)``) or a page feature
            (``surface.feature(...)``), whose projection it is.
        resources: named read-only projections.
        view: the application's view for hosts that render one (``agent.view(...)``).

    Raises:
        AgentContractError: two capabilities share a name or tag, two resources a name,
            ``context`` is neither a projection nor a feature, a ``confirm`` capability
            comes without a ``context`` (its approval preview could never show a change), or
            ``view`` is not ``agent.view(...)`` or names as app-only what is not exposed.

    Example:
        >>> make(context=projection.pick(App.model.todos), messages=expose(TodoMessage, {...}))
        >>> make(context=surface.feature(projection=todos), messages=...)
    """
    groups = [messages] if isinstance(messages, ExposedMessages) else list(messages)
    caps: list[Capability] = []
    for group in groups:
        if not isinstance(group, ExposedMessages):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentContractError("make(messages=...) takes the result of expose(...)")
        caps.extend(group.capabilities)
    _check_unique(caps)
    tags = [c.tag for c in caps]
    if len(set(tags)) != len(tags):
        raise AgentContractError("one Message is exposed by two expose calls")
    if isinstance(context, Feature):
        context = context.projection
    if context is not None and not isinstance(context, Projection):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("make(context=...) takes a projection or a surface.feature(...)")
    if context is None:
        asking = next((c for c in caps if c.confirm is not None), None)
        if asking is not None:
            # the preview is the change to the context: without one it can never show any
            raise AgentContractError(
                f"{asking.name!r} asks a person to approve each call, but the contract has no "
                "context, so the preview they approve can never show a change; give "
                "make(context=...) a projection of what the call changes",
                capability=asking.name,
            )
    by_name: dict[str, Resource] = {}
    for r in resources:
        if r.name in by_name:
            raise AgentContractError(f"two resources are named {r.name!r}")
        by_name[r.name] = r
    definition = AgentDefinition(tuple(caps), context, by_name, model_type)
    if view is None:
        return definition
    if not isinstance(view, View):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("make(view=...) takes agent.view(...)")
    resolved = view.resolved(definition.by_name, definition.lookup)
    return AgentDefinition(tuple(caps), context, by_name, model_type, resolved)
