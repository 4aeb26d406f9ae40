"""How capabilities are listed as MCP tools: titles, annotations and the three listing modes.

DESIGN §10. Many clients list tools once: fastmcp's client never opens
``subscriptions/listen``, so in the 2026-07-28 era it never hears ``tools/list_changed``, and
pydantic-ai's MCP toolset caches the list it got first. For them a capability that becomes
available later does not exist. The listing mode decides what ``tools/list`` answers:

* ``"available"`` (default): the capabilities available now; ``tools/list_changed`` on
  change. Right for clients that re-list on the notification.
* ``"all"``: every exposed capability, always. One that is unavailable when listed says so at
  the start of its description, and a call to it is refused (as unavailable, nothing sent)
  until the application allows it. For clients that list once.
* ``"catalog"``: exactly two tools, :data:`LIST_CAPABILITIES` (what is available now, with
  schemas and hints) and :data:`CALL_CAPABILITY` (``{"name", "input"}``). The tool list never
  changes, so nothing is cached wrong; every call still goes through the runtime's
  ``call`` (the path of ``dispatch_unknown``), audited and refused exactly as a direct call.

Each capability's ``title`` and behaviour hints become the tool's ``title`` (also
``annotations.title``, for clients of 2025-03-26) and ``annotations`` (``readOnlyHint``,
``destructiveHint``, ``idempotentHint``, ``openWorldHint``); a hint declared ``None`` is left
out, so a client assumes its cautious default.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp_types.methods import validate_client_request
from pydantic_core import to_json

from ...contract.declare import Capability, Hints
from ...runtime.bound import AgentRuntime
from .shapes import OUTPUT_SCHEMA, tool_annotations

if TYPE_CHECKING:
    from .feed import Feed

__all__ = [
    "CALL_CAPABILITY",
    "CATALOG_NAMES",
    "LISTINGS",
    "LIST_CAPABILITIES",
    "UNAVAILABLE_NOTE",
    "Catalog",
    "Listing",
    "Tools",
    "call_arguments",
    "check_listing",
    "unavailable_tool",
]

Listing = Literal["available", "all", "catalog"]
"""How ``tools/list`` answers: see the module docstring."""

LISTINGS: Final[tuple[Listing, ...]] = ("available", "all", "catalog")

LIST_CAPABILITIES: Final = "list_capabilities"
"""The catalog tool that lists what is available now."""

CALL_CAPABILITY: Final = "call_capability"
"""The catalog tool that calls one capability by name: ``{"name": str, "input": {...}}``."""

CATALOG_NAMES: Final = frozenset({LIST_CAPABILITIES, CALL_CAPABILITY})

UNAVAILABLE_NOTE: Final = (
    "[Unavailable when this list was made: a call is refused, and nothing is done, until the "
    "application's state allows it. It may be available now.] "
)
"""What ``listing="all"`` puts before the description of a capability unavailable at listing."""


def check_listing(listing: str) -> Listing:
    """``listing`` if it is one of :data:`LISTINGS`, else :class:`ValueError`.

    Example:
        >>> check_listing("catalog")
        'catalog'
    """
    if listing not in LISTINGS:
        raise ValueError(f"listing must be one of {', '.join(LISTINGS)}; got {listing!r}")
    return listing


def unavailable_tool(tool: types.Tool) -> types.Tool:
    """``tool`` as ``listing="all"`` shows it while its capability is unavailable."""
    return tool.model_copy(update={"description": UNAVAILABLE_NOTE + (tool.description or "")})


# -- the catalog ------------------------------------------------------------------------------

_LIST_OUTPUT: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "capabilities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "title": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "description": {"type": "string"},
                    "input_schema": {"type": "object"},
                    "hints": {"type": "object"},
                },
                "required": ["name", "description", "input_schema", "hints"],
            },
        }
    },
    "required": ["capabilities"],
}


def _aggregate(hints: Sequence[Hints]) -> Hints:
    """What holds for every capability at once (the catalog's call tool can reach any).

    Read-only only if all are; destructive if any is, not destructive only if none may be
    (read-only ones never are); idempotent only if all are; open world likewise.
    """

    def any_true(values: list[bool | None]) -> bool | None:
        if any(v is True for v in values):
            return True
        return False if all(v is False for v in values) else None

    writers = [h for h in hints if not h.read_only]
    return Hints(
        read_only=not writers,
        destructive=any_true([h.destructive for h in writers]),
        idempotent=all(h.idempotent for h in writers),
        open_world=any_true([h.open_world for h in hints]),
    )


class Catalog:
    """The two catalog tools for one contract (``listing="catalog"``).

    Attributes:
        tools: ``[list_capabilities, call_capability]``.
        schemas: name -> input schema of the two tools.
    """

    def __init__(self, capabilities: Sequence[Capability]) -> None:
        names = [c.name for c in capabilities]
        reach = _aggregate([c.hints for c in capabilities])
        list_input: dict[str, Any] = {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }
        call_input: dict[str, Any] = {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The capability to call, as list_capabilities names it",
                    **({"enum": names} if names else {}),
                },
                "input": {
                    "type": "object",
                    "description": "Its input, as its input_schema describes; {} for none",
                },
            },
            "required": ["name"],
            "additionalProperties": False,
        }
        self.schemas: dict[str, dict[str, Any]] = {
            LIST_CAPABILITIES: list_input,
            CALL_CAPABILITY: call_input,
        }
        self.tools: list[types.Tool] = [
            types.Tool(
                name=LIST_CAPABILITIES,
                title="List capabilities",
                description=(
                    "List what you can do in this application right now: each capability's "
                    "name, title, description, input schema and behaviour hints. Call one with "
                    f"{CALL_CAPABILITY}. The list follows the application's state, so list again "
                    "after a call is refused as unavailable or the state changed."
                ),
                input_schema=list_input,
                output_schema=_LIST_OUTPUT,
                annotations=tool_annotations(
                    "List capabilities",
                    Hints(read_only=True, destructive=False, idempotent=True, open_world=False),
                ),
            ),
            types.Tool(
                name=CALL_CAPABILITY,
                title="Call a capability",
                description=(
                    f"Call one capability that {LIST_CAPABILITIES} offers, with its input. "
                    "Refusals (unavailable now, invalid input, not allowed) come back as an "
                    "error result explaining what to change; nothing was done."
                ),
                input_schema=call_input,
                output_schema=OUTPUT_SCHEMA,
                annotations=tool_annotations("Call a capability", reach),
            ),
        ]

    def listed(self, rt: AgentRuntime[Any, Any]) -> tuple[str, dict[str, Any]]:
        """What ``list_capabilities`` answers: (text for the model, structured content)."""
        caps = [
            {
                "name": c.name,
                "title": c.title,
                "description": c.listed_description,
                "input_schema": c.input_schema,
                "hints": c.hints.declared(),
            }
            for c in rt.messages.available()
        ]
        data = {"capabilities": caps}
        if not caps:
            text = "Nothing is available in the application's current state."
        else:
            text = f"{len(caps)} available now:\n" + to_json(data).decode()
        return text, data


def list_arguments(arguments: Mapping[str, Any] | None) -> str | None:
    """What is wrong with ``list_capabilities``' arguments as a sentence, or ``None``.

    It takes none, as its schema says (``additionalProperties: false``).
    """
    if not arguments:
        return None
    extra = ", ".join(map(repr, sorted(arguments)))
    return f"{LIST_CAPABILITIES} takes no arguments; leave out {extra}."


def call_arguments(arguments: Mapping[str, Any] | None) -> tuple[str, Any] | str:
    """``(name, input)`` from ``call_capability``'s arguments, or what is wrong as a sentence.

    Only mistakes about the catalog tool itself are refused here; ``input`` is passed on as
    it came, so the runtime decodes it strictly and audits the call like a direct one.
    """
    args = dict(arguments or {})
    extra = sorted(set(args) - {"name", "input"})
    if extra:
        return (
            f"{CALL_CAPABILITY} takes only 'name' and 'input'; move "
            f"{', '.join(map(repr, extra))} inside 'input' if they are the capability's fields."
        )
    name = args.get("name")
    if not isinstance(name, str) or not name:
        given = "" if "name" not in args else " as a non-empty string"
        return (
            f"{CALL_CAPABILITY} needs 'name'{given}: the capability to call, as "
            f"{LIST_CAPABILITIES} names it."
        )
    return name, args.get("input", {})


# -- tools/list, kept ------------------------------------------------------------------------


RuntimeOf = Callable[[ServerRequestContext[Any, Any]], Awaitable[AgentRuntime[Any, Any]]]
"""``(request_context) -> runtime`` as the server resolves it (tracking the connection)."""


class Tools:
    """What one server lists as tools, the list kept in its wire form, and which calls need no
    stream.

    Args:
        listing: the listing mode.
        static: the server's fixed runtime, or ``None`` for a ``resolve`` target.
        runtime: the server's ``(ctx) -> runtime`` (awaitable).
        feed: ``runtime -> Feed``, the runtime's change feed, where its tools are built once.
    """

    def __init__(
        self,
        listing: Listing,
        static: AgentRuntime[Any, Any] | None,
        runtime: RuntimeOf,
        feed: Callable[[AgentRuntime[Any, Any]], Feed],
    ) -> None:
        self.listing: Listing = listing
        self.static = static
        self.runtime = runtime
        self.feed = feed

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The ``tools/list`` handler: tools are built once per runtime (a contract's never
        change) and filtered by what is available now, per the listing mode."""
        rt = await self.runtime(ctx)
        feed = self.feed(rt)
        if feed.catalog is not None:
            return types.ListToolsResult(tools=feed.catalog.tools)
        available = [feed.tools[c.name] for c in rt.messages.available()]
        if self.listing == "available":
            return types.ListToolsResult(tools=available)
        now = {t.name for t in available}
        listed = [
            feed.tools[c.name] if c.name in now else feed.unavailable[c.name]
            for c in rt.messages.all()
        ]
        return types.ListToolsResult(tools=listed)

    async def keep(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """``tools/list`` in its wire form, built once per runtime, availability set and
        protocol version, and reused until one of them changes (a ``Server.middleware``).

        The first request for a set runs the SDK's whole pipeline (:meth:`list_tools`, then
        the SDK's validation and serialization of every tool for that protocol version); its
        wire dict is kept on the runtime's feed, which empties it when the availability set
        changes, and later requests return it as a middleware result, which the SDK passes on
        as written. A request with parameters other than ``_meta`` (a ``cursor``), or whose
        ``_meta`` the SDK's own parameter check refuses (a ``clientInfo`` of ``7``, a
        ``logLevel`` of ``42``), always takes the whole pipeline, which answers it in the
        SDK's words. Nothing is kept for a runtime the feed cannot watch.
        """
        params = ctx.params or {}
        if any(key != "_meta" for key in params) or not isinstance(params.get("_meta", {}), dict):
            return await call_next(ctx)
        feed = self.feed(await self.runtime(ctx))
        kept = feed.listed.get(ctx.protocol_version)
        if kept is not None and _valid_list(ctx):
            return kept[0]
        wire = await call_next(ctx)
        if isinstance(wire, dict) and feed.watching:
            # Encoded as the SDK writes a JSON-RPC result (compact, ASCII), once per set.
            encoded = json.dumps(wire, separators=(",", ":")).encode()
            feed.listed[ctx.protocol_version] = (wire, encoded)
        return wire

    def kept(self, version: str) -> bytes | None:
        """The encoded ``tools/list`` result kept for ``version`` (for the availability set of
        now: the feed empties it on a change); ``None`` for a resolved runtime or before the
        first ``tools/list`` of that version since the last change."""
        rt = self.static
        if rt is None:
            return None
        kept = self.feed(rt).listed.get(version)
        return None if kept is None else kept[1]


def _valid_list(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The check the SDK's dispatch runs on a ``tools/list`` before any middleware result
    counts (``validate_client_request``, public): a kept answer is given only where the SDK
    would have reached the handler."""
    try:
        validate_client_request("tools/list", ctx.protocol_version, ctx.params)
    except (ValueError, KeyError):  # pydantic's ValidationError is a ValueError
        return False
    return True
