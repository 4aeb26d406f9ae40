"""The application capture: typed field references, surface Actions and Message sets.

:func:`application` records an application's Model type and Message union once; its
``.model`` attribute is a :class:`FieldRef` to the Model root, so ``App.model.todos`` and
``App.model.settings.theme`` name fields checked against the Model's declared fields::

    App = surface.application(model=Model, message=TodoMessage, initial=Model(), update=update)
    context = projection.pick(App.model.todos, App.model.selected_todo_id)
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic

from pydantic import BaseModel
from typing_extensions import TypeVar

from ..errors import AgentContractError, closest
from .message import Message, MessageUnion

if TYPE_CHECKING:
    from .projection import Projection

__all__ = [
    "Action",
    "Application",
    "Feature",
    "FieldRef",
    "MessageSet",
    "action",
    "application",
    "feature",
    "field_annotation",
    "field_path",
    "field_root",
    "message_set",
    "message_set_union",
    "read_field",
]

M = TypeVar("M", bound=BaseModel)
U = TypeVar("U", contravariant=True, default=Any)
I = TypeVar("I", default=Any)  # noqa: E741 - an Action's input
Msg = TypeVar("Msg", bound=Message)
In = TypeVar("In", bound=BaseModel)
"""The application's Message union (see :class:`~.message.MessageUnion`'s variance)."""


class FieldRef:
    """A reference to a (possibly nested) field of a Model type.

    Attribute access names a field of the referenced model first, so a Model field called
    ``name``, ``path`` or ``get`` is reachable as ``App.model.name``. The reference's own data
    is read with :func:`field_path`, :func:`field_annotation` and :func:`read_field` (or the
    ``path``/``annotation``/``get`` attributes when no field shadows them).

    Attributes:
        path: field names from the Model root, e.g. ``("settings", "theme")``.
        annotation: the field's declared type (``X | None`` when an ancestor is optional).
        root: the application's Model class the path starts from (see :func:`field_root`).
    """

    __slots__ = ("_fk_annotation", "_fk_owner", "_fk_path", "_fk_root")

    def __init__(
        self,
        owner: type[BaseModel] | None,
        path: tuple[str, ...],
        annotation: Any,
        root: type[BaseModel] | None = None,
    ) -> None:
        object.__setattr__(self, "_fk_owner", owner)
        object.__setattr__(self, "_fk_path", path)
        object.__setattr__(self, "_fk_annotation", annotation)
        object.__setattr__(self, "_fk_root", root if root is not None or path else owner)

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_"):
            owner: type[BaseModel] | None = object.__getattribute__(self, "_fk_owner")
            if owner is not None and name in owner.model_fields:
                return object.__getattribute__(self, "_child")(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> FieldRef:
        if name.startswith("__"):
            raise AttributeError(name)
        owner = self._fk_owner
        if owner is None:
            raise AttributeError(
                f"{'.'.join(self._fk_path)} is not a model; it has no field {name!r}"
            )
        close = closest(name, owner.model_fields)
        hint = "" if close is None else f"; did you mean {close!r}?"
        raise AttributeError(f"{owner.__name__} has no field {name!r}{hint}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("field references are immutable")

    def _child(self, name: str) -> FieldRef:
        owner = self._fk_owner
        assert owner is not None
        annotation = owner.model_fields[name].annotation
        optional_parent = bool(self._fk_path) and _is_optional(self._fk_annotation)
        child_owner, nullable = _model_in(annotation)
        if optional_parent and not nullable:
            annotation = annotation | None  # type: ignore[operator]
        return FieldRef(child_owner, (*self._fk_path, name), annotation, self._fk_root)

    @property
    def path(self) -> tuple[str, ...]:
        return self._fk_path

    @property
    def annotation(self) -> Any:
        return self._fk_annotation

    @property
    def name(self) -> str:
        """The last field name (the key this field gets in a picked projection)."""
        return self._fk_path[-1] if self._fk_path else ""

    def get(self, model: BaseModel) -> Any:
        """Read this field from a Model instance (``None`` if an optional ancestor is None)."""
        return read_field(self, model)

    def __repr__(self) -> str:
        return f"FieldRef({'.'.join(self._fk_path) or '<model>'})"


def field_path(ref: FieldRef) -> tuple[str, ...]:
    """The field names from the Model root to ``ref``."""
    return ref._fk_path  # pyright: ignore[reportPrivateUsage]


def field_root(ref: FieldRef) -> type[BaseModel] | None:
    """The Model class ``ref``'s path starts from (``App.model_type`` for ``App.model.x``)."""
    return ref._fk_root  # pyright: ignore[reportPrivateUsage]


def field_annotation(ref: FieldRef) -> Any:
    """The declared type of the field ``ref`` names."""
    return ref._fk_annotation  # pyright: ignore[reportPrivateUsage]


def read_field(ref: FieldRef, model: BaseModel) -> Any:
    """Read the field ``ref`` names from ``model`` (``None`` past an optional ancestor)."""
    value: Any = model
    for name in ref._fk_path:  # pyright: ignore[reportPrivateUsage]
        if value is None:
            return None
        value = getattr(value, name)
    return value


def _is_optional(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return type(None) in typing.get_args(annotation)
    return False


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The BaseModel inside ``X`` or ``X | None``, and whether None is allowed."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if _is_optional(annotation):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(rest) == 1 and isinstance(rest[0], type) and issubclass(rest[0], BaseModel):
            return rest[0], True
        return None, True
    return None, False


@dataclass(frozen=True, eq=False)
class Application(Generic[M, U]):
    """An application captured by :func:`application`, typed by its Model and Message union.

    Attributes:
        model_type: the Model class.
        message: the application's closed Message union.
        initial: the initial Model, when given.
        update: ``update(model, message) -> model | (model, commands)``, when given.
        model: a :class:`FieldRef` to the Model root; ``App.model.todos`` names a field.
    """

    model_type: type[M]
    message: MessageUnion[U]
    initial: M | None = None
    update: Callable[..., Any] | None = None
    model: FieldRef = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", FieldRef(self.model_type, (), self.model_type))


def application(
    *,
    model: type[M],
    message: MessageUnion[U],
    initial: M | None = None,
    update: Callable[..., Any] | None = None,
) -> Application[M, U]:
    """Capture an application: its Model type, Message union and, optionally, how it runs.

    Raises:
        AgentContractError: ``model`` is not a pydantic model or ``message`` not a union.
    """
    if not (isinstance(model, type) and issubclass(model, BaseModel)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("application(model=...) takes a pydantic model class")
    if not isinstance(message, MessageUnion):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("application(message=...) takes a message_union(...)")
    return Application(model_type=model, message=message, initial=initial, update=update)


@dataclass(frozen=True)
class Action(Generic[I]):
    """A user-facing action declared once and shared by a page and an agent.

    An Action names the Message it makes; ``agent.action(...)`` exposes it under that
    Message's tag with the Action's name, description and input. ``I`` is its input (the
    ``input`` model, else the Message), which types the hooks ``agent.action`` takes.

    Attributes:
        name: the capability name (``[A-Za-z0-9_-]{1,128}``).
        description: what it does, for people and agents.
        message: the Message class it produces.
        input: an optional input model; given together with ``to_message``.
        to_message: ``(input, ctx) -> Message`` (or a payload dict for ``message``).
    """

    name: str
    description: str
    message: type[Message]
    input: type[BaseModel] | None = None
    to_message: Callable[..., Any] | None = None


@typing.overload
def action(
    *,
    name: str,
    description: str,
    message: type[Msg],
    input: None = None,
    to_message: None = None,
) -> Action[Msg]: ...


@typing.overload
def action(
    *,
    name: str,
    description: str,
    message: type[Message],
    input: type[In],
    to_message: Callable[[In, Any], Any],
) -> Action[In]: ...


def action(
    *,
    name: str,
    description: str,
    message: type[Message],
    input: type[BaseModel] | None = None,
    to_message: Callable[..., Any] | None = None,
) -> Action[Any]:
    """Declare a surface :class:`Action` (see its attributes).

    Example:
        >>> AddTodo = surface.action(name="add_todo", description="Add", message=AddedTodo)
    """
    return Action(
        name=name, description=description, message=message, input=input, to_message=to_message
    )


@dataclass(frozen=True, eq=False)
class Feature:
    """A feature of the page: the projection its view renders and the Actions its Blocks
    cause, declared once so that an agent sees what the page shows.

    ``agent.make(context=feature)`` reads ``feature.projection`` as the contract's context
    (the contract, its introspection and its manifest are then those of that projection);
    each Action is exposed, as any other, with ``agent.action(...)``.

    Attributes:
        projection: what the feature shows (a :func:`~.projection.pick` or
            :func:`~.projection.compose` of the application's Model).
        actions: the :class:`Action` values its Blocks cause, in order.
    """

    projection: Projection
    actions: tuple[Action[Any], ...] = ()


def feature(*, projection: Projection, actions: Iterable[Action[Any]] = ()) -> Feature:
    """Declare a page feature: its projection and the Actions it causes.

    Raises:
        AgentContractError: ``projection`` is not a projection, an action is not a
            :func:`action`, or two actions share a name.

    Example:
        >>> todos = surface.feature(
        ...     projection=projection.pick(App.model.todos),
        ...     actions=[AddTodo],
        ... )
        >>> agent.make(context=todos, messages=...)
    """
    from .projection import Projection  # projection.py imports this module's FieldRef

    if not isinstance(projection, Projection):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentContractError("surface.feature(projection=...) takes a projection")
    found = tuple(actions)
    names: set[str] = set()
    for act in found:
        if not isinstance(act, Action):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentContractError(
                f"surface.feature(actions=...) takes surface actions, got {act!r}"
            )
        if act.name in names:
            raise AgentContractError(f"surface.feature has two actions named {act.name!r}")
        names.add(act.name)
    return Feature(projection=projection, actions=found)


@dataclass(frozen=True)
class MessageSet:
    """A subset of an application's Message union (see :func:`message_set`).

    Attributes:
        variants: tag -> Message class, in declaration order.
    """

    variants: Mapping[str, type[Message]]

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self.variants
        return item in self.variants.values()

    def __iter__(self) -> typing.Iterator[type[Message]]:
        return iter(self.variants.values())


def message_set(
    app: Application[Any] | MessageUnion, messages: Iterable[type[Message]]
) -> MessageSet:
    """A typed subset of ``app``'s Messages.

    Raises:
        AgentContractError: a class is not in the application's union, or appears twice.
    """
    union = app.message if isinstance(app, Application) else app
    variants: dict[str, type[Message]] = {}
    for cls in messages:
        if cls not in union:
            raise AgentContractError(
                f"{getattr(cls, '__name__', cls)!r} is not in the application's Message union"
            )
        if cls.tag() in variants:
            raise AgentContractError(f"{cls.tag()!r} appears twice in one message set")
        variants[cls.tag()] = cls
    return MessageSet(variants)


def message_set_union(*sets: MessageSet) -> MessageSet:
    """The union of disjoint Message sets.

    Raises:
        AgentContractError: two sets share a Message.
    """
    variants: dict[str, type[Message]] = {}
    for s in sets:
        for tag, cls in s.variants.items():
            if tag in variants:
                raise AgentContractError(f"message sets overlap on {tag!r}; they must be disjoint")
            variants[tag] = cls
    return MessageSet(variants)
