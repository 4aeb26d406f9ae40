"""Every private part of ``a2a-sdk`` (1.3) the A2A adapter reaches, in one place.

Each is covered by ``tests/adapters/a2a/test_sdk.py``, which fails when an SDK upgrade moves
it; nothing else in :mod:`foldkit_agent.adapters.a2a` reads an SDK attribute that starts with
an underscore or depends on the SDK's log wording.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers import request_handler as _rh
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.utils import proto_utils as _pu
from a2a.utils.errors import InvalidParamsError
from google.api.field_behavior_pb2 import FieldBehavior, field_behavior
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message as ProtobufMessage

__all__ = [
    "CLIENT_ERROR_RECORDS",
    "DUPLICATE_RECORDS",
    "below_required_check",
    "check_required_fields",
    "params_model",
    "required_field_errors",
    "unfinished_tasks",
]


def unfinished_tasks(handler: DefaultRequestHandler) -> list[asyncio.Event]:
    """The "finished" events of the handler's active tasks that have not finished yet.

    Each event is set once the SDK has consumed the task's last event (so a request waiting
    on that task can write its answer). The registry of active tasks
    (``handler._active_task_registry._active_tasks``, each ``ActiveTask._is_finished``) has
    no public accessor in a2a-sdk 1.3, hence the guarded private reads: anything missing
    reads as "no task".

    Example:
        >>> await asyncio.wait([asyncio.ensure_future(e.wait()) for e in unfinished_tasks(h)])
    """
    registry = getattr(handler, "_active_task_registry", None)
    active: Any = getattr(registry, "_active_tasks", None)
    if not isinstance(active, dict):
        return []
    events = [getattr(t, "_is_finished", None) for t in cast(dict[str, Any], active).values()]
    return [e for e in events if isinstance(e, asyncio.Event) and not e.is_set()]


CLIENT_ERROR_RECORDS: dict[str, tuple[str, ...]] = {
    # logger name -> message templates that describe a client's mistake, not a defect
    "a2a.server.routes.jsonrpc_dispatcher": ("Request Error (ID: %s)",),
    "a2a.utils.error_handlers": ("Request error: ", "Parse error: "),
}
"""The SDK's log records (logger name -> message-template prefixes) that report a client's
mistake; :func:`~foldkit_agent.adapters.a2a.errors.install_log_filter` demotes them."""

DUPLICATE_RECORDS: dict[str, tuple[str, ...]] = {
    # followed by one of the records above for the same request: dropped
    "a2a.server.routes.jsonrpc_dispatcher": (
        "Failed to parse request params",
        "Failed to validate base JSON-RPC request",
    ),
    "a2a.utils.version_validator": ("Version mismatch",),
}
"""The SDK's log records that always precede one of :data:`CLIENT_ERROR_RECORDS` for the same
request; the filter drops them."""


# -- the SDK's required-field check, without walking every JSON value ---------------------------
#
# a2a-sdk 1.3 checks every request against the spec's REQUIRED field annotations
# (``validate_request_params`` -> ``validate_proto_required_fields``) by walking the whole
# message, asking each field of each sub-message for its options. A data part is a
# ``google.protobuf.Value``: every JSON value of the input is a message of 6 fields, none
# REQUIRED, so a 1 MiB body of 9,900 values cost ~60,000 descriptor look-ups (about half of all
# the work the server does for such a body, on the event loop). :func:`check_required_fields`
# gives the same errors, in the same order, without entering sub-messages whose type cannot
# reach a REQUIRED field (``Struct``, ``Value``, ``ListValue``), and reads each type's fields once.

_SINGLE, _MAP, _REPEATED = 1, 2, 3

# full name of a message type -> its fields to look at: (field, required, how to recurse or 0)
_PLANS: dict[str, tuple[tuple[FieldDescriptor, bool, int], ...]] = {}


def _required(field: FieldDescriptor) -> bool:
    options: Any = field.GetOptions()
    return FieldBehavior.REQUIRED in options.Extensions[field_behavior]


def _child(field: FieldDescriptor) -> tuple[Descriptor | None, int]:
    """The message type the SDK's check enters below ``field``, and how (0: it does not)."""
    if field.type != FieldDescriptor.TYPE_MESSAGE or field.message_type is None:
        return None, 0
    if not _pu._field_is_repeated(field):  # pyright: ignore[reportPrivateUsage]
        return field.message_type, _SINGLE
    if field.message_type.GetOptions().map_entry:
        value = field.message_type.fields_by_name["value"]
        return (
            (value.message_type, _MAP) if value.type == FieldDescriptor.TYPE_MESSAGE else (None, 0)
        )
    return field.message_type, _REPEATED


def _plan(root: Any) -> tuple[tuple[FieldDescriptor, bool, int], ...]:
    plan = _PLANS.get(root.full_name)
    if plan is not None:
        return plan
    seen: dict[str, Descriptor] = {}
    todo = [root]
    while todo:  # every message type reachable from ``root``
        desc = todo.pop()
        if desc.full_name in seen:
            continue
        seen[desc.full_name] = desc
        todo.extend(c for c in (_child(f)[0] for f in desc.fields) if c is not None)
    needs = {name for name, desc in seen.items() if any(_required(f) for f in desc.fields)}
    grew = True
    while grew:  # a type needs a look when one of its children does (a fixpoint: cycles)
        grew = False
        for name, desc in seen.items():
            if name not in needs and any(
                (c := _child(f)[0]) is not None and c.full_name in needs for f in desc.fields
            ):
                needs.add(name)
                grew = True
    for name, desc in seen.items():
        entries: list[tuple[FieldDescriptor, bool, int]] = []
        for field in desc.fields:
            child, how = _child(field)
            how = how if child is not None and child.full_name in needs else 0
            required = _required(field)
            if required or how:
                entries.append((field, required, how))
        _PLANS.setdefault(name, tuple(entries))
    return _PLANS[root.full_name]


def required_field_errors(msg: ProtobufMessage) -> list[Any]:
    """The SDK's ``ValidationDetail`` list for ``msg`` (``[]`` when every REQUIRED field is set).

    The same list as ``a2a.utils.proto_utils._validate_proto_required_fields_internal``
    (``tests/adapters/a2a/test_sdk.py`` compares them), found by visiting only the
    sub-messages that can hold a REQUIRED field.
    """
    errors: list[Any] = []
    for field, required, how in _plan(msg.DESCRIPTOR):
        if required:
            violation = _pu._check_required_field_violation(msg, field)  # pyright: ignore[reportPrivateUsage]
            if violation:
                errors.append(violation)
        if not how:
            continue
        value: Any = getattr(msg, field.name)
        if how == _SINGLE:
            if msg.HasField(field.name):
                _nested(errors, field.name, required_field_errors(value))
        elif how == _MAP:
            for key, item in value.items():
                if isinstance(item, ProtobufMessage):
                    _nested(errors, f"{field.name}[{key}]", required_field_errors(item))
        else:
            for i, item in enumerate(value):
                _nested(errors, f"{field.name}[{i}]", required_field_errors(item))
    return errors


def _nested(errors: list[Any], prefix: str, found: list[Any]) -> None:
    if found:
        _pu._append_nested_errors(errors, prefix, found)  # pyright: ignore[reportPrivateUsage]


def check_required_fields(msg: ProtobufMessage) -> None:
    """What the SDK's ``validate_request_params`` checks before a handler method runs.

    Raises:
        InvalidParamsError: a REQUIRED field is missing or empty (the SDK's own error:
            ``"Validation failed"``, ``data={"errors": [...]}``).
    """
    errors = required_field_errors(msg)
    if errors:
        raise InvalidParamsError(message="Validation failed", data={"errors": errors})


def _validating_wrappers() -> frozenset[Any]:
    async def call(*_args: Any) -> None:
        return None

    async def stream(*_args: Any) -> AsyncIterator[None]:
        yield None

    validating: Any = getattr(_rh, "validate_request_params")  # noqa: B009 (untyped in the SDK)
    return frozenset(getattr(validating(f), "__code__", None) for f in (call, stream))


_VALIDATING = _validating_wrappers()


def below_required_check(method: Any) -> Callable[..., Any] | None:
    """What the SDK's ``@validate_request_params`` wraps in ``method``, or ``None``.

    ``DefaultRequestHandler.on_message_send`` is the SDK's telemetry wrapper around the
    required-field check around the method itself (``functools.wraps`` chains them through
    ``__wrapped__``); calling the layer below the check, after :func:`check_required_fields`,
    runs the same method without the slow walk. ``None`` (the check was not found) means: call
    ``method`` as it is.
    """
    layer: Any = method
    while layer is not None:
        if getattr(layer, "__code__", None) in _VALIDATING:
            return cast(Callable[..., Any], getattr(layer, "__wrapped__", None))
        layer = getattr(layer, "__wrapped__", None)
    return None


def params_model(method: str | None) -> type[ProtobufMessage] | None:
    """The protobuf message a JSON-RPC ``method``'s params decode into, or ``None``.

    a2a-sdk 1.3 keeps the table on its JSON-RPC dispatcher (``METHOD_TO_MODEL``), a server
    internal with no public accessor.
    """
    table: Any = getattr(JsonRpcDispatcher, "METHOD_TO_MODEL", {})
    return None if method is None else table.get(method)
