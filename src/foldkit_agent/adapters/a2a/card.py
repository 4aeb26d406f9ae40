"""The Agent Card: every exposed capability as a skill, and the skill extension.

Also the paths the A2A routes are served at, and which request is the public card (the one
request :class:`~foldkit_agent.adapters.a2a.auth.BearerTokenBackend` lets through anonymously
when credentials are required).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    AuthorizationCodeOAuthFlow,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.types import Scope

from ...contract.declare import Capability, Hints
from ...edge.guard import route_path
from ...edge.oauth import metadata_urls

__all__ = [
    "CARD_PATH",
    "EXTENSION_URI",
    "JSONRPC_PATH",
    "KEY_FIELD",
    "REST_PREFIX",
    "build_agent_card",
    "oauth_scheme",
]

EXTENSION_URI = "https://foldkit-agent.dev/a2a/skills/v1"
"""The extension that names the skill of a call and publishes each skill's input schema.

Stable for the life of major version 1 of this package. On a call:
``metadata[EXTENSION_URI] = {"skill": "<capability name>"}`` (request or message metadata),
with ``"idempotencyKey": "<key>"`` beside it for a call a retry must not run twice
(:data:`KEY_FIELD`, ``docs/retries.md``).
On the card: ``AgentExtension(uri=EXTENSION_URI, params={"skills": {name: {"inputSchema":
<JSON Schema>}}})``.
"""

KEY_FIELD = "idempotencyKey"
"""The field of our extension's metadata entry that carries a call's idempotency key."""

CARD_PATH = AGENT_CARD_WELL_KNOWN_PATH
"""``/.well-known/agent-card.json``."""

JSONRPC_PATH = "/a2a/jsonrpc"
"""Where the JSON-RPC binding is served."""

REST_PREFIX = "/a2a/rest"
"""The prefix of the HTTP+JSON binding (``POST /a2a/rest/message:send`` and so on)."""


def is_public_card(scope: Scope) -> bool:
    return scope.get("method") in ("GET", "HEAD") and route_path(scope) == CARD_PATH


# ---------------------------------------------------------------------------------------------
# the card
# ---------------------------------------------------------------------------------------------


def _skill_title(name: str) -> str:
    words = name.replace("-", "_").split("_")
    text = " ".join(w for w in words if w)
    return text[:1].upper() + text[1:] if text else name


def hint_tags(hints: Hints) -> list[str]:
    """The skill tags that say what a call does, from the declared hints (none if undeclared).

    ``read-only``; otherwise ``destructive`` / ``non-destructive`` and ``idempotent``; and
    ``open-world`` / ``closed-world``.

    Example:
        >>> hint_tags(Hints(destructive=False, idempotent=True, open_world=False))
        ['non-destructive', 'idempotent', 'closed-world']
    """
    tags: list[str] = []
    if hints.read_only:
        tags.append("read-only")
    else:
        if hints.destructive is not None:
            tags.append("destructive" if hints.destructive else "non-destructive")
        if hints.idempotent:
            tags.append("idempotent")
    if hints.open_world is not None:
        tags.append("open-world" if hints.open_world else "closed-world")
    return tags


def _skill(cap: Capability, scheme_name: str | None) -> AgentSkill:
    skill = AgentSkill(
        id=cap.name,
        name=cap.title or _skill_title(cap.name),
        description=cap.description,
        tags=[cap.tag, *hint_tags(cap.hints)],
        input_modes=["application/json"],
        output_modes=["application/json"],
    )
    if scheme_name is not None and (cap.authorize is not None or cap.scopes):
        # the scopes a token needs to call it (OAuth 2.0), as MCP's 403 names them
        skill.security_requirements.append(
            SecurityRequirement(schemes={scheme_name: StringList(list=list(cap.scopes))})
        )
    return skill


def oauth_scheme(
    issuer: str, found: tuple[str, Mapping[str, Any]] | None, scopes: Sequence[str]
) -> SecurityScheme:
    """The card's security scheme for tokens of the authorization server ``issuer``.

    With its metadata ``found`` (``(url, metadata)``, as
    :meth:`OAuthVerifier.issuer_metadata <foldkit_agent.edge.oauth.OAuthVerifier.issuer_metadata>`
    gives it) naming both endpoints: OAuth 2.0, the authorization code flow with PKCE at those
    endpoints, ``scopes`` listed and the metadata's URL given (RFC 8414). Without it (not
    fetched yet): OpenID Connect, naming the issuer's discovery document, from which a client
    finds the same endpoints.

    Example:
        >>> scheme = oauth_scheme("https://auth.example", None, [])
        >>> scheme.open_id_connect_security_scheme.open_id_connect_url
        'https://auth.example/.well-known/openid-configuration'
    """
    metadata: Mapping[str, Any] = {} if found is None else found[1]
    authorize, token = metadata.get("authorization_endpoint"), metadata.get("token_endpoint")
    if found is None or not isinstance(authorize, str) or not isinstance(token, str):
        return SecurityScheme(
            open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                description=f"Bearer tokens issued by {issuer} for this agent.",
                open_id_connect_url=metadata_urls(issuer)[1],
            )
        )
    flow = AuthorizationCodeOAuthFlow(
        authorization_url=authorize,
        token_url=token,
        scopes={s: f"The {s} scope" for s in scopes},
        pkce_required=True,
    )
    return SecurityScheme(
        oauth2_security_scheme=OAuth2SecurityScheme(
            description=f"Bearer tokens issued by {issuer} for this agent.",
            flows=OAuthFlows(authorization_code=flow),
            oauth2_metadata_url=found[0],
        )
    )


def extension_params(caps: Sequence[Capability]) -> dict[str, Any]:
    """Our extension's params: per skill its input schema and the declared behaviour hints."""
    return {
        "skills": {
            c.name: {"inputSchema": c.input_schema, "hints": c.hints.declared()} for c in caps
        }
    }


def build_agent_card(
    capabilities: Sequence[Capability],
    *,
    name: str,
    version: str,
    base_url: str,
    description: str | None = None,
    security_scheme: SecurityScheme | None = None,
    security_required: bool = False,
) -> AgentCard:
    """The Agent Card listing ``capabilities`` as skills.

    Args:
        capabilities: the capabilities to list (all of them for the public card, the available
            ones for a caller's extended card).
        name, version: the agent's name and version.
        base_url: the origin the app is served at (``http://127.0.0.1:8000``); the JSON-RPC and
            HTTP+JSON interface URLs are derived from it.
        description: the agent's description; a default sentence when omitted.
        security_scheme: declared as ``"foldkit"`` in ``security_schemes`` when given, and
            required by every skill whose capability has an ``authorize`` hook.
        security_required: with ``security_scheme``, the card also lists it in its top-level
            ``security_requirements``: every call needs credentials, whatever the skill.

    Returns:
        An ``a2a.types.AgentCard`` (protobuf) with one ``AgentSkill`` per capability (``id`` is
        the capability name, ``tags`` its Message tag) and :data:`EXTENSION_URI` in
        ``capabilities.extensions`` carrying every listed skill's input JSON Schema.

    Protocol: A2A 1.0 ``AgentCard``, ``AgentSkill``, ``AgentExtension`` (extensions carry
    their data in ``params``), ``SecurityScheme``/``SecurityRequirement``.

    Example:
        >>> card = build_agent_card(rt.messages.all(), name="todo", version="1", base_url=url)
        >>> [s.id for s in card.skills]
        ['create_todo', ...]
    """
    base = base_url.rstrip("/")
    scheme_name = "foldkit" if security_scheme is not None else None
    extension = AgentExtension(
        uri=EXTENSION_URI,
        description=(
            'Invoke a skill: put {"skill": <skill id>} under this URI in the request (or message) '
            "metadata and send the input as one data part. params.skills[<id>].inputSchema is "
            "the JSON Schema the input must satisfy; undeclared fields are refused. Add "
            '"idempotencyKey": <key> beside the skill so a retry with that key answers the '
            "first call's outcome instead of running again."
        ),
        required=False,
    )
    extension.params.update(extension_params(capabilities))
    card = AgentCard(
        name=name,
        description=description or f"{name}: an application an agent can drive through its skills.",
        version=version,
        supported_interfaces=[
            AgentInterface(
                protocol_binding="JSONRPC", protocol_version="1.0", url=base + JSONRPC_PATH
            ),
            AgentInterface(
                protocol_binding="HTTP+JSON", protocol_version="1.0", url=base + REST_PREFIX
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extended_agent_card=True,
            extensions=[extension],
        ),
        default_input_modes=["application/json"],
        default_output_modes=["application/json"],
        skills=[_skill(c, scheme_name) for c in capabilities],
    )
    if security_scheme is not None:
        card.security_schemes["foldkit"].CopyFrom(security_scheme)
        if security_required:
            card.security_requirements.append(
                SecurityRequirement(schemes={"foldkit": StringList(list=[])})
            )
    return card
