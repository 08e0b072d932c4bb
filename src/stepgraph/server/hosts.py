"""The ``Host`` header check (a DNS-rebinding defence).

A page on ``evil.example`` whose name is re-pointed at 127.0.0.1 can reach a server on
loopback from the victim's browser; the browser then sends ``Host: evil.example``. A server
bound to a loopback address therefore accepts only ``localhost``, ``127.0.0.1`` and
``[::1]`` (any port), plus the names ``--allowed-hosts`` adds; bound to another address it
accepts any host unless ``--allowed-hosts`` is given (then: the loopback names and those).
``*`` turns the check off, and ``*.example.com`` allows subdomains. A refused request gets ``400`` with a JSON ``detail``.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Sequence

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from stepgraph.server.config_errors import CONFIG_INVALID, ConfigError

__all__ = ["LOOPBACK_HOSTS", "HostCheckMiddleware", "allowed_hosts_for", "is_loopback_bind", "parse_host"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
HOST_REFUSED = "SG531"


def is_loopback_bind(host: str) -> bool:
    """Whether binding ``host`` listens on loopback only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_hosts_for(bind: str, configured: Sequence[str] | None) -> list[str]:
    """The Host values accepted by a server bound to ``bind`` (``["*"]``: all).

    ``ConfigError`` (SG522) for a pattern that is not a host name, ``*`` or ``*.domain``.
    """
    if not configured:
        return list(LOOPBACK_HOSTS) if is_loopback_bind(bind) else ["*"]
    out = list(LOOPBACK_HOSTS)
    for entry in configured:
        pattern = entry.strip().lower()
        name = pattern[2:] if pattern.startswith("*.") else pattern
        if pattern != "*" and (not name or "*" in name or parse_host(name) != name):
            raise ConfigError(f"--allowed-hosts: {entry!r} is not a host name, '*' or '*.domain'",
                              code=CONFIG_INVALID, hint="e.g. --allowed-hosts localhost,api.example.com")
        if pattern not in out:
            out.append(pattern)
    return ["*"] if "*" in out else out


def parse_host(value: str) -> str | None:
    """The host part of a ``Host`` header (IPv6 kept in brackets), or ``None`` if malformed."""
    value = value.strip().lower()
    if not value or any(c in value for c in " /\\@?#"):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[: end + 1], value[end + 1:]
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
    else:
        host, sep, port = value.partition(":")
        rest = sep + port
        if not host:
            return None
    if rest and not (rest.startswith(":") and rest[1:].isdigit() and len(rest) <= 6):
        return None
    return host


def _matches(host: str, pattern: str) -> bool:
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return host == pattern


class HostCheckMiddleware:
    """Refuse requests whose ``Host`` is not one of ``allowed_hosts``."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str], bind: str = "") -> None:
        self.app = app
        self.allowed = [h.lower() for h in allowed_hosts]
        self.allow_any = "*" in self.allowed
        self.bind = bind

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allow_any or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        raw = Headers(scope=scope).get("host")
        host = parse_host(raw) if raw is not None else None
        if host is not None and any(_matches(host, p) for p in self.allowed):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        shown = "no Host header" if raw is None else f"Host header {raw[:100]!r}"
        detail = (f"[{HOST_REFUSED}] {shown} is not allowed: this server"
                  f"{' (bound to ' + self.bind + ')' if self.bind else ''} accepts only "
                  f"{', '.join(self.allowed)} (any port), a defence against DNS rebinding. "
                  "Hint: start it with --allowed-hosts NAME[,NAME...] to accept other names.")
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": 400, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
