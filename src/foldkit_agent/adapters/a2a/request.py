"""What a ``SendMessage`` asks for: the skill it names, its input and the ids it carries.

The skill is named in our extension's metadata (on the request, else on the message) and its
input is the message's one data part. The executor reads them to run the call; the request
handler reads them first, so a call naming no known skill is refused before the SDK creates a
task for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from a2a.types import Message, Part
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict

from ...contract.calls import Invocation
from ...contract.declare import Capability
from ...runtime.bound import AgentRuntime
from ...runtime.idempotency import key_from
from ...runtime.outcome import REFUSED
from .card import EXTENSION_URI, KEY_FIELD
from .ids import MAX_MESSAGE_ID, check_id

__all__ = [
    "check_message_ids",
    "data_part",
    "idempotency_key",
    "known",
    "payload",
    "skill_name",
    "unnamed_skill",
    "value",
]


def check_message_ids(message: Message) -> None:
    """Every id of ``message`` the task store keeps (see :mod:`.ids`).

    Raises:
        InvalidParamsError: an id the store cannot hold, naming its field.
    """
    check_id("message.messageId", message.message_id, MAX_MESSAGE_ID)
    check_id("message.taskId", message.task_id)
    check_id("message.contextId", message.context_id)
    for n, ref in enumerate(message.reference_task_ids):
        check_id(f"message.referenceTaskIds[{n}]", ref)


def _entries(metadata: Mapping[str, Any], message: Message | None) -> list[Mapping[str, Any]]:
    """Our extension's entries: the request metadata's, then the message metadata's."""
    sources: list[Any] = [metadata.get(EXTENSION_URI)]
    if message is not None and message.HasField("metadata"):
        sources.append(MessageToDict(message.metadata).get(EXTENSION_URI))
    return [cast(Mapping[str, Any], e) for e in sources if isinstance(e, Mapping)]


def skill_name(
    metadata: Mapping[str, Any], message: Message | None, skills: Sequence[str] = ()
) -> str:
    """The skill named in request metadata, else in message metadata (at most 200 characters).

    ``skills`` are the skill ids a refusal lists (a generic client, one that sends only text,
    learns from it which skills there are and how to name one).

    Raises:
        InvalidParamsError: no skill named, or one named by something other than a string.
    """
    for entry in _entries(metadata, message):
        skill = entry.get("skill")
        if isinstance(skill, str) and skill:
            return skill[:200]
        if skill is not None:
            raise InvalidParamsError(message="The skill must be named by its id, a string.")
    raise InvalidParamsError(message=unnamed_skill(skills))


def idempotency_key(metadata: Mapping[str, Any], message: Message | None) -> str | None:
    """The call's idempotency key: ``{"idempotencyKey": ...}`` in our extension's entry of the
    request metadata, else of the message metadata; ``None`` without one (:func:`key_from`
    turns a value that is not a string into one the runtime refuses).

    Example:
        >>> idempotency_key({EXTENSION_URI: {"skill": "create_todo", "idempotencyKey": "k"}}, None)
        'k'
    """
    for entry in _entries(metadata, message):
        if KEY_FIELD in entry:
            return key_from(entry[KEY_FIELD])
    return None


def unnamed_skill(skills: Sequence[str]) -> str:
    """The refusal of a message that names no skill: the skills there are, and how to name
    one, with the first as the example.

    Example:
        >>> unnamed_skill(["create_todo", "delete_todo"])[:60]
        'Refused: name the skill to run (this agent runs one skill pe'
    """
    example = skills[0] if skills else "<skill id>"
    listed = (
        f" Its skills: {', '.join(skills[:20])}{', ...' if len(skills) > 20 else ''}."
        if skills
        else ""
    )
    return (
        f"{REFUSED}name the skill to run (this agent runs one skill per message, and nothing "
        f'was run).{listed} Set metadata[{EXTENSION_URI!r}] = {{"skill": "{example}"}} on '
        "the request or the message, and send the skill's input as one data part (its schema "
        "is on the agent card's skill)."
    )


def data_part(message: Message | None) -> Part | None:
    """The one data part, ``None`` without one.

    Raises:
        InvalidParamsError: more than one data part.
    """
    if message is None:
        return None
    data = [p for p in message.parts if p.HasField("data")]
    if len(data) > 1:
        raise InvalidParamsError(message="Send the skill's input as exactly one data part.")
    return data[0] if data else None


def payload(message: Message | None) -> Any:
    """The one data part's value, ``{}`` without one (integers still as doubles)."""
    data = data_part(message)
    return {} if data is None else value(data)


def value(part: Part) -> Any:
    """A data part's JSON value."""
    # MessageToDict on a non-struct Value returns the plain value (list, str, float, ...).
    return cast(Any, MessageToDict(part.data))


async def known(
    runtime: AgentRuntime[Any, Any], name: str, input_value: Any, invocation: Invocation
) -> Capability:
    """The capability named ``name``; an unknown name is audited and raised as invalid params.

    Raises:
        InvalidParamsError: no capability of that name (the refusal is audited first, through
            the runtime's own call path).
    """
    cap = runtime.definition.by_name.get(name)
    if cap is not None:
        return cap
    await runtime.call(name, input_value, invocation)  # refused as unknown, and audited
    raise InvalidParamsError(
        message=(
            f"{REFUSED}there is no skill named {name!r}. Its skills: "
            f"{', '.join(list(runtime.definition.by_name)[:20])}. Name one of those (the agent "
            "card lists each with its input schema)."
        )
    )
