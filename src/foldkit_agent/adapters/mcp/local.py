"""The credentials of a stdio server's calls: the local user who started it.

A stdio transport authenticates nobody: whoever can write to the pipe is the person who
launched the server (Claude Desktop starts it for its user). ``foldkit-agent serve --mcp stdio
--principal 'alice;todos:delete'`` names that user once, and every call then carries a
:class:`LocalUser` as ``invocation.credentials``, for the runtime's principal provider to read
as it reads a verified bearer token (``subject`` and ``scopes`` have the same meaning). In
code: ``serve_stdio(mcp_server(rt, ..., credentials_of=lambda _ctx: LocalUser("alice", ...)))``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LocalUser", "parse_local_user"]


@dataclass(frozen=True)
class LocalUser:
    """The local user a stdio server runs for.

    Attributes:
        subject: who it is (``"alice"``), as a token's subject would be.
        scopes: what they may do (``("todos:delete",)``), as a token's scopes would be.

    Example:
        >>> LocalUser("alice", ("todos:delete",))
        LocalUser(subject='alice', scopes=('todos:delete',))
    """

    subject: str
    scopes: tuple[str, ...] = ()


def parse_local_user(spec: str) -> LocalUser:
    """``SUBJECT[;SCOPE,SCOPE...]`` (as on the right of ``serve --token``) as a user.

    Raises:
        ValueError: the subject is empty.

    Example:
        >>> parse_local_user("alice;todos:delete")
        LocalUser(subject='alice', scopes=('todos:delete',))
    """
    subject, _, scopes = spec.partition(";")
    if not subject.strip():
        raise ValueError(
            f"--principal takes SUBJECT[;SCOPE,...] (like 'alice;todos:delete'), got {spec!r}"
        )
    return LocalUser(subject.strip(), tuple(s.strip() for s in scopes.split(",") if s.strip()))
