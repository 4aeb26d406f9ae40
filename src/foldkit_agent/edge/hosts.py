"""One ``Host`` and ``Origin`` policy for every network route (DESIGN §9, steps 1 and 2).

A ``Host`` header is read strictly (RFC 9110 §7.2, RFC 3986 §3.2.2): a host name, an IPv4
address or a bracketed IPv6 address, then optionally ``:port`` with a port from 1 to 65535.
Anything else is malformed and refused the same way as a foreign name: userinfo
(``127.0.0.1:8766@evil.example``), junk after the address, a path, spaces inside, an empty or
out-of-range port, an unbracketed IPv6 address. Names compare case-insensitively, and one
trailing dot (``localhost.``) is dropped.

The accepted names are the loopback names (:data:`LOOPBACK_HOSTS`) plus ``allowed_hosts``;
``"*"`` accepts any well-formed host (only behind a proxy that checks ``Host`` itself).

Example:
    >>> policy = HostPolicy(["lan.example"])
    >>> [policy.allows(h) for h in ("LOCALHOST:8000", "[::1]", "lan.example", "evil.example")]
    [True, True, True, False]
    >>> policy.allows("127.0.0.1:8766@evil.example")
    False
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, cast

__all__ = [
    "LOOPBACK_HOSTS",
    "Authority",
    "HostPolicy",
    "host_names",
    "parse_host",
    "parse_origin",
]

LOOPBACK_HOSTS: Final[tuple[str, ...]] = ("127.0.0.1", "localhost", "::1")
"""Host names that always name this machine (``::1`` is written ``[::1]`` in a header)."""

_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST = re.compile(
    rf"(?:\[(?P<ip6>[0-9a-f:.]{{2,45}})\]|(?P<name>{_LABEL}(?:\.{_LABEL})*)\.?)"
    r"(?::(?P<port>[0-9]{1,5}))?"
)
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Authority:
    """A parsed ``host[:port]``.

    Attributes:
        host: the lower-case name, or the IPv6 address without brackets (``"::1"``).
        port: the port, or ``None`` when none was written.
    """

    host: str
    port: int | None


def parse_host(value: str | None) -> Authority | None:
    """Parse a ``Host`` header value; ``None`` when it is missing or malformed.

    Example:
        >>> parse_host("LOCALHOST:8000")
        Authority(host='localhost', port=8000)
        >>> parse_host("127.0.0.1:8766@evil.example") is None
        True
    """
    if value is None or len(value) > 300:
        return None
    found = _HOST.fullmatch(value.strip(" \t").lower())
    if found is None:
        return None
    port: int | None = None
    if found["port"] is not None:
        port = int(found["port"])
        if not 0 < port < 65536:
            return None
    if found["ip6"] is not None:
        try:
            address = ipaddress.IPv6Address(found["ip6"])
        except ValueError:
            return None
        return Authority(address.compressed, port)
    return Authority(found["name"], port)


def parse_origin(value: str | None) -> tuple[str, Authority] | None:
    """Parse an ``Origin`` header (``scheme://host[:port]``, RFC 6454); ``None`` if malformed.

    ``null``, a scheme other than ``http``/``https``, a path, userinfo or a query make it
    malformed. The port defaults to the scheme's.

    Example:
        >>> parse_origin("http://localhost:5173")
        ('http', Authority(host='localhost', port=5173))
    """
    if value is None:
        return None
    scheme, sep, rest = value.strip().lower().partition("://")
    if not sep or scheme not in _DEFAULT_PORTS:
        return None
    authority = parse_host(rest)
    if authority is None:
        return None
    return scheme, Authority(authority.host, authority.port or _DEFAULT_PORTS[scheme])


def _normal_name(entry: str) -> str:
    name = entry.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return ipaddress.IPv6Address(name).compressed
    except ValueError:
        pass
    name = name.removesuffix(".")
    if _NAME.fullmatch(name) is None:
        raise ValueError(
            f"allowed_hosts takes host names or IP addresses without a port, got {entry!r}"
        )
    return name


def host_names(allowed_hosts: Iterable[str] | str | None) -> tuple[str, ...]:
    """``allowed_hosts`` as a tuple of entries, each checked to be a name ``Host`` can carry.

    A single string is one name; ``None`` is none; ``"*"`` stays as it is (any host).

    Raises:
        TypeError: ``allowed_hosts`` is not a string or an iterable of strings.
        ValueError: an entry that is not a host name or IP address (a URL, one with a port).

    Example:
        >>> host_names("todo.example")
        ('todo.example',)
        >>> host_names(["todo.example:8000"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: allowed_hosts takes host names or IP addresses without a port, got ...
    """
    if allowed_hosts is None:
        return ()
    if isinstance(allowed_hosts, str):
        entries: tuple[object, ...] = (allowed_hosts,)
    elif isinstance(allowed_hosts, Iterable):  # pyright: ignore[reportUnnecessaryIsInstance]
        entries = tuple(cast("Iterable[object]", allowed_hosts))
    else:
        raise TypeError(f"allowed_hosts takes a host name or a list of them, got {allowed_hosts!r}")
    for entry in entries:
        if not isinstance(entry, str):
            raise TypeError(f"allowed_hosts takes host names as strings, got {entry!r}")
        if entry.strip() != "*":
            _normal_name(entry)
    return cast("tuple[str, ...]", entries)


class HostPolicy:
    """Which ``Host`` (and API ``Origin``) names a server answers for.

    Args:
        allowed_hosts: names accepted besides the loopback names, any port (a single string
            is one name); ``"*"`` accepts any well-formed host. ``None`` means loopback only.
        also: names the adapter itself serves under (A2A's ``base_url`` host, say).

    Raises:
        TypeError, ValueError: as :func:`host_names`.

    Example:
        >>> HostPolicy().allows("127.0.0.1")
        True
        >>> HostPolicy().allows("192.168.1.20:8000")
        False
    """

    __slots__ = ("any", "names")

    def __init__(
        self, allowed_hosts: Iterable[str] | str | None = None, *, also: Iterable[str] = ()
    ) -> None:
        extra = host_names(allowed_hosts) + tuple(also)
        self.any = "*" in (e.strip() for e in extra)
        names = {*LOOPBACK_HOSTS}
        names.update(_normal_name(e) for e in extra if e.strip() != "*")
        self.names: frozenset[str] = frozenset(names)

    def allows_name(self, host: str) -> bool:
        """Whether an already-parsed host name is accepted."""
        return self.any or host in self.names

    def allows(self, value: str | None) -> bool:
        """Whether a ``Host`` header value is well-formed and names an accepted host."""
        authority = parse_host(value)
        return authority is not None and self.allows_name(authority.host)

    def allows_origin(self, value: str) -> bool:
        """Whether an ``Origin`` header is well-formed and names an accepted host (any port)."""
        origin = parse_origin(value)
        return origin is not None and self.allows_name(origin[1].host)

    def __repr__(self) -> str:
        return f"HostPolicy({'*' if self.any else sorted(self.names)!r})"
