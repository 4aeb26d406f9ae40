"""Messages and closed Message unions.

A :class:`Message` is a frozen pydantic model that refuses undeclared fields; its *tag* is
its class name. :func:`message_union` closes a set of Message classes into the application's
Message type::

    class RequestedCreateTodo(Message):
        title: str

    TodoMessage = message_union(RequestedCreateTodo, RequestedDeleteTodo)
    TodoMessage.RequestedCreateTodo(title="Milk")        # the constructor
    TodoMessage.decode({"_tag": "RequestedDeleteTodo", "id": "t1"})
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Generic

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypeVar

from ..errors import AgentContractError

__all__ = ["Message", "MessageUnion", "message_union", "tag_of"]


class Message(BaseModel):
    """Base class of every Message: frozen, ``extra="forbid"``, tagged by class name.

    Example:
        >>> class Incremented(Message):
        ...     by: int = 1
        >>> Incremented.tag()
        'Incremented'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    __message_tag__: ClassVar[str] = "Message"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__message_tag__ = cls.__name__

    @classmethod
    def tag(cls) -> str:
        """The Message's tag: its class name."""
        return cls.__message_tag__

    def encode(self) -> dict[str, Any]:
        """The Message as JSON data with its tag: ``{"_tag": "...", **fields}``."""
        return {"_tag": self.__message_tag__, **self.model_dump(mode="json", by_alias=True)}


def tag_of(message: Message | type[Message]) -> str:
    """The tag of a Message instance or class."""
    return message.__message_tag__


Msg = TypeVar("Msg", bound=Message)
U = TypeVar("U", contravariant=True, default=Any)


class MessageUnion(Generic[U]):
    """A closed union of Message classes. Build it with :func:`message_union`.

    Attributes:
        variants: tag -> Message class, in declaration order.

    Each variant is also an attribute: ``TodoMessage.RequestedCreateTodo``.

    For a type checker, ``message_union(A, B)`` is a ``MessageUnion[A | B]``, read as "a
    union holding at least ``A`` and ``B``": a wider union stands in for a narrower one (so
    ``U`` is contravariant), which is how ``expose`` rejects a key outside the union.
    """

    __slots__ = ("_by_class", "variants")

    def __init__(self, classes: tuple[type[Message], ...]) -> None:
        variants: dict[str, type[Message]] = {}
        for cls in classes:
            if not (isinstance(cls, type) and issubclass(cls, Message)):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise AgentContractError(f"message_union takes Message classes, got {cls!r}")
            tag = cls.tag()
            if tag in variants:
                raise AgentContractError(f"Two Messages in one union share the tag {tag!r}")
            variants[tag] = cls
        self.variants: Mapping[str, type[Message]] = variants
        self._by_class = frozenset(classes)

    def __getattr__(self, name: str) -> type[Message]:
        try:
            return self.variants[name]
        except KeyError:
            raise AttributeError(f"the union has no Message tagged {name!r}") from None

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self.variants
        if isinstance(item, type):
            return item in self._by_class
        return type(item) in self._by_class

    def __iter__(self) -> Iterator[type[Message]]:
        return iter(self.variants.values())

    def __len__(self) -> int:
        return len(self.variants)

    def __repr__(self) -> str:
        return f"message_union({', '.join(self.variants)})"

    def decode(self, data: Mapping[str, Any]) -> Message:
        """Decode ``{"_tag": tag, **fields}`` into the Message it names.

        Raises:
            ValueError: the tag is missing or not in the union.
            pydantic.ValidationError: the fields do not validate.
        """
        payload = dict(data)
        tag = payload.pop("_tag", None)
        cls = self.variants.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise ValueError(f"no Message tagged {tag!r} in this union")
        return cls.model_validate(payload)


def message_union(*classes: type[Msg]) -> MessageUnion[Msg]:
    """Close Message classes into one union.

    Raises:
        AgentContractError: two classes share a tag, or an argument is not a Message class.
    """
    return MessageUnion(classes)
