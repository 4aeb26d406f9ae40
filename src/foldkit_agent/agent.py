"""The ``agent`` namespace: declare a contract, bind it, and read it back.

``from foldkit_agent import agent`` is the documented style::

    TodoAgent = agent.for_application(App)
    AppAgent = TodoAgent.make(
        context=projection.pick(App.model.todos),
        messages=TodoAgent.expose(TodoMessage, {RequestedCreateTodo: "Create a todo"}),
    )
    runtime = TodoAgent.bind(definition=AppAgent, host=running.host)

The error family is here too (``agent.AgentError`` and its subclasses, the same classes as
:mod:`foldkit_agent.errors` and the front door), so ``except agent.AgentError`` catches every
refusal a dispatch can raise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Generic, Required, TypedDict, Unpack, overload

from pydantic import BaseModel
from typing_extensions import TypeVar

from . import audit, contract, errors, runtime
from .app.host import SupportsHost
from .app.message import MessageUnion
from .app.projection import Projection
from .app.surface import Action, Application, Feature, MessageSet
from .audit import *  # noqa: F403
from .audit.log import AuditLog
from .contract import *  # noqa: F403
from .contract.calls import AuthorizationRequest
from .contract.completion import CompletionContract, when
from .contract.declare import (
    AgentDefinition,
    ExposedMessages,
    Resource,
    expose,
    expose_subset,
    make,
    resource,
)
from .contract.presentation import PresentationOptions
from .contract.variant import ActionVariant, Variant, VariantFn, action, variant
from .contract.view import View
from .errors import *  # noqa: F403
from .errors import AgentContractError
from .manifest import context_schema, messages, resources, schema, to_manifest, to_markdown
from .runtime import *  # noqa: F403
from .runtime.bound import AgentRuntime, PrincipalProvider, bind
from .runtime.idempotency import IdempotencyKeys

__all__: list[str] = [
    "AgentBuilder",
    "context_schema",
    "for_application",
    "for_model",
    "messages",
    "resources",
    "schema",
    "to_manifest",
    "to_markdown",
]
__all__ += contract.__all__
__all__ += audit.__all__
__all__ += errors.__all__
__all__ += runtime.__all__

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P")
P2 = TypeVar("P2")
U = TypeVar("U", contravariant=True, default=Any)
E = TypeVar("E")
I = TypeVar("I")  # noqa: E741 - a surface Action's input

_Variants = (
    Mapping[type[E], Variant[M, P, Any] | ActionVariant | str]
    | Mapping[str, Variant[M, P, Any] | ActionVariant | str]
)
"""An ``expose`` mapping: Message class (or tag) -> variant, action or description."""


class _Binding(TypedDict, Generic[P, E], total=False):
    """The keywords of :func:`~foldkit_agent.runtime.bind` besides ``definition``, which
    ``AgentBuilder.bind`` forwards as they are: bind keeps their defaults and documents them.
    ``E`` is the contract's Message union (the host must accept it), ``P`` its principal."""

    host: Required[SupportsHost[Any, E]]
    audit: AuditLog | None
    principal: PrincipalProvider[P] | None
    approval_timeout: float | timedelta
    idempotency: IdempotencyKeys | None


class AgentBuilder(Generic[M, P, U]):
    """The contract functions with the Model, principal and Message union types fixed.

    Build it with :func:`for_application` or :func:`for_model`; ``with_principal(User)``
    fixes the principal type. Its methods are the module functions of the same names, typed
    so that hooks receive ``M``, ``P`` and the variant's input, ``expose`` reads the exposed
    Messages off its keys, and ``bind`` rejects a host that cannot accept them or a principal
    provider of another type. ``variant`` and ``when`` are the module's functions themselves.
    """

    variant: VariantFn[M, P]
    """:func:`~foldkit_agent.contract.variant.variant`, typed for ``M`` and ``P``."""

    when = staticmethod(when)

    def __init__(self, model_type: type[M], union: MessageUnion[U] | None = None) -> None:
        self.model_type = model_type
        self.union = union
        self.variant = variant

    def with_principal(self, principal_type: type[P2] | None = None) -> AgentBuilder[M, P2, U]:
        """The same builder, with the principal type fixed (for type checkers)."""
        return AgentBuilder(self.model_type, self.union)

    def action(
        self,
        surface_action: Action[I],
        *,
        available: Callable[[M], bool] | None = None,
        available_when: str | None = None,
        authorize: Callable[[AuthorizationRequest[M, P, I]], Any] | None = None,
        completion: CompletionContract | None = None,
        scopes: Sequence[str] = (),
        **presentation: Unpack[PresentationOptions[M, P, I]],
    ) -> ActionVariant:
        """See :func:`~foldkit_agent.contract.variant.action`."""
        return action(
            surface_action,
            available=available,
            available_when=available_when,
            authorize=authorize,
            completion=completion,
            scopes=scopes,
            **presentation,
        )

    @overload
    def expose(self, mapping: _Variants[E, M, P], /) -> ExposedMessages[E]: ...

    @overload
    def expose(
        self, union: MessageUnion[E] | Application[Any, E], mapping: _Variants[E, M, P], /
    ) -> ExposedMessages[E]: ...

    def expose(
        self,
        union_or_mapping: MessageUnion | Application[Any, Any] | Mapping[Any, Any],
        mapping: Mapping[Any, Any] | None = None,
        /,
    ) -> ExposedMessages[Any]:
        """See :func:`~foldkit_agent.contract.declare.expose`; the union defaults to the app's.

        ``TodoAgent.expose({...})`` exposes Messages of the builder's own union (the one
        :func:`for_application` captured); ``TodoAgent.expose(TodoMessage, {...})`` names the
        union explicitly. Both type-check and type the exposed Messages from the class keys;
        a class key outside the union is a type error in the second form, and in both a
        contract error here.

        Raises:
            AgentContractError: see :func:`~foldkit_agent.contract.declare.expose`.
            AgentContractError: also when only a mapping is given and the builder has no
                union (:func:`for_model` without ``union=``).

        Example:
            >>> TodoAgent.expose({RequestedCreateTodo: "Create a todo"})
        """
        if mapping is None:
            if not isinstance(union_or_mapping, Mapping):
                raise AgentContractError("expose takes a mapping, or a Message union and a mapping")
            if self.union is None:
                raise AgentContractError(
                    "expose needs the Message union: this builder has none, so call "
                    "expose(TodoMessage, {...})"
                )
            return expose(self.union, union_or_mapping)
        if isinstance(union_or_mapping, Mapping):
            raise AgentContractError("expose takes the Message union first, then the mapping")
        return expose(union_or_mapping, mapping)

    def expose_subset(self, subset: MessageSet, mapping: _Variants[E, M, P]) -> ExposedMessages[E]:
        """See :func:`~foldkit_agent.contract.declare.expose_subset`."""
        return expose_subset(subset, mapping)

    def resource(self, name: str, *, description: str, projection: Projection) -> Resource:
        """See :func:`~foldkit_agent.contract.declare.resource`."""
        return resource(name, description=description, projection=projection)

    def make(
        self,
        *,
        messages: ExposedMessages[E] | Iterable[ExposedMessages[E]],
        context: Projection | Feature | None = None,
        resources: Iterable[Resource] = (),
        view: View | None = None,
    ) -> AgentDefinition[M, P, E]:
        """See :func:`~foldkit_agent.contract.declare.make`."""
        return make(
            messages=messages,
            context=context,
            resources=resources,
            model_type=self.model_type,
            view=view,
        )

    def bind(
        self, *, definition: AgentDefinition[M, P, E], **binding: Unpack[_Binding[P, E]]
    ) -> AgentRuntime[M, P, E]:
        """See :func:`~foldkit_agent.runtime.bind`: the same keywords (``host=``, ``audit=``,
        ``principal=``, ``approval_timeout=``, ``idempotency=``), typed by :class:`_Binding`.

        Raises:
            AgentContractError: as ``bind``, and when the contract reads another Model.
        """
        reads = definition.reads_model() if isinstance(definition, AgentDefinition) else None  # pyright: ignore[reportUnnecessaryIsInstance]
        if reads is not None and reads is not self.model_type:
            raise AgentContractError(
                f"this contract reads {reads.__name__}, but the builder is for "
                f"{self.model_type.__name__}; bind it with the builder of its own application"
            )
        return bind(definition=definition, **binding)


def for_application(app: Application[M, U]) -> AgentBuilder[M, Any, U]:
    """A builder typed for ``app``'s Model, with ``expose`` defaulting to its Message union.

    Raises:
        TypeError: ``app`` is not from ``surface.application``.
    """
    if not isinstance(app, Application):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError("for_application takes surface.application(...)")
    return AgentBuilder(app.model_type, app.message)


def for_model(model_type: type[M], union: MessageUnion[U] | None = None) -> AgentBuilder[M, Any, U]:
    """A builder typed for a Model class when there is no captured application."""
    return AgentBuilder(model_type, union)
