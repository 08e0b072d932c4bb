"""Webhooks: which URLs a run may name, and delivering a finished run to it.

A webhook URL is checked when the run is created (``422`` naming the reason) and again before
every delivery attempt, since a name may resolve differently later:

* only ``http``/``https`` absolute URLs, no credentials in the URL, at most
  ``max_url_length`` characters; ``require_https``, ``allowed_ports`` and
  ``allowed_domains`` (``*.domain`` matches subdomains only) as configured;
* the host is resolved and *every* address must be allowed: loopback and private
  (RFC 1918, CGNAT, unique-local) addresses are refused unless ``webhooks.url``
  ``disable_loopback`` / ``disable_private_ips`` are false; link-local (cloud metadata),
  multicast, unspecified and reserved addresses always are. The request then goes to the
  address that was checked (the ``Host`` header and TLS server name stay the URL's), so a
  name cannot be re-pointed between the check and the connection. Redirects are not followed
  and proxy variables are ignored.

Delivery POSTs the run as JSON (its record with the final ``status``, ``values``, ``error``
when it failed, ``webhook_sent_at``; ``webhooks.allowed_fields`` filters it) with the
configured headers, and retries connection errors, timeouts, 429 and 5xx answers with
doubling back-off, ``attempts`` times at most, ``timeout`` seconds each.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from stepgraph.server.errors import ApiError
from stepgraph.server.serde import dumps
from stepgraph.server.util import now_iso

if TYPE_CHECKING:
    from stepgraph.server.config_webhooks import WebhookSettings
    from stepgraph.server.context import ServerContext
    from stepgraph.server.runtime.queue import RunJob

__all__ = ["WebhookRefused", "check_webhook", "deliver_webhook", "resolve_webhook", "webhook_payload"]

logger = logging.getLogger("stepgraph.server")

REFUSED = "SG530"
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "host.docker.internal")
_METADATA_NAMES = ("metadata.google.internal", "metadata", "instance-data")
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_AddressT = ipaddress.IPv4Address | ipaddress.IPv6Address


class WebhookRefused(ValueError):
    """A webhook URL the policy does not allow; ``str()`` says why."""


@dataclass(frozen=True)
class Target:
    """A checked webhook: the URL to connect to (an address), its Host header and TLS name."""

    url: str
    host_header: str
    server_name: str | None


def _split(policy: WebhookSettings, url: str) -> tuple[str, str, int]:
    if len(url) > policy.max_url_length:
        raise WebhookRefused(f"the URL is longer than {policy.max_url_length} characters")
    if url.startswith("/"):
        raise WebhookRefused("relative URLs (this server's own routes) are not supported")
    if any(ord(ch) < 33 or ch == "\x7f" for ch in url):
        raise WebhookRefused("the URL contains spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookRefused(f"not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise WebhookRefused(f"scheme {parts.scheme or '(none)'!r} is not allowed: only http and https")
    if policy.require_https and scheme != "https":
        raise WebhookRefused("webhooks.url.require_https is on: the URL must use https")
    if parts.username is not None or parts.password is not None:
        raise WebhookRefused("credentials in the URL are not supported (use webhooks.headers)")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise WebhookRefused("the URL has no host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise WebhookRefused(f"host {host!r} is not a valid domain name") from None
    port = port or (443 if scheme == "https" else 80)
    if policy.allowed_ports and port not in policy.allowed_ports:
        raise WebhookRefused(f"port {port} is not in webhooks.url.allowed_ports")
    if policy.allowed_domains and not any(
            host == d or (d.startswith("*.") and host.endswith(d[1:])) for d in policy.allowed_domains):
        raise WebhookRefused(f"host {host!r} is not in webhooks.url.allowed_domains")
    return scheme, host, port


def _blocked(policy: WebhookSettings, ip: _AddressT) -> str | None:
    """Why ``ip`` may not be a webhook target, or ``None``."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None if policy.allow_loopback else "a loopback address (set webhooks.url.disable_loopback to false)"
    if ip.is_link_local:
        return "a link-local address (cloud metadata lives there)"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return "a multicast, unspecified or reserved address"
    if ip.is_private or (isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED):
        return None if policy.allow_private else "a private address (set webhooks.url.disable_private_ips to false)"
    if not ip.is_global:
        return "not a public address"
    return None


async def _addresses(host: str, port: int) -> list[_AddressT]:
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return [literal]
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise WebhookRefused(f"host {host!r} cannot be resolved ({exc})") from None
    out: list[_AddressT] = []
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if ip not in out:
            out.append(ip)
    if not out:
        raise WebhookRefused(f"host {host!r} resolves to no address")
    return out


async def resolve_webhook(policy: WebhookSettings, url: str) -> Target:
    """Check ``url`` against ``policy``, resolve it, and check every address it resolves to."""
    scheme, host, port = _split(policy, url)
    lowered = host.lower()
    if lowered in _METADATA_NAMES:
        raise WebhookRefused(f"host {host!r} is a cloud metadata endpoint")
    if (lowered in _LOOPBACK_NAMES or lowered.endswith(".localhost")) and not policy.allow_loopback:
        raise WebhookRefused(f"host {host!r} is a loopback name (set webhooks.url.disable_loopback to false)")
    addresses = await _addresses(host, port)
    for ip in addresses:
        reason = _blocked(policy, ip)
        if reason is not None:
            raise WebhookRefused(f"host {host!r} resolves to {ip}, {reason}")
    parts = urlsplit(url)
    ip = addresses[0]
    netloc = f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"
    path = parts.path or "/"
    target = f"{scheme}://{netloc}{path}" + (f"?{parts.query}" if parts.query else "")
    shown = f"[{host}]" if ":" in host else host
    host_header = f"{shown}:{parts.port}" if parts.port else shown
    return Target(target, host_header, host if scheme == "https" else None)


async def check_webhook(policy: WebhookSettings, url: str | None) -> None:
    """At run creation: ``422`` when ``url`` is not an allowed webhook."""
    if url is None or policy.disabled:
        return
    try:
        await resolve_webhook(policy, url)
    except WebhookRefused as exc:
        raise ApiError(422, f"[{REFUSED}] Webhook URL refused: {exc}.") from None


def webhook_payload(run: dict[str, Any], job: RunJob, thread_values: Any,
                    allowed: frozenset[str] | None) -> dict[str, Any]:
    """What a finished run's webhook receives."""
    result = job.result
    payload = {key: run.get(key) for key in ("run_id", "thread_id", "assistant_id", "created_at", "updated_at",
                                             "metadata", "kwargs", "multitask_strategy")}
    payload["status"] = job.status
    if isinstance(result, dict) and "__error__" in result:
        payload["values"] = thread_values
        payload["error"] = result["__error__"]
    else:
        payload["values"] = result
    payload["webhook_sent_at"] = now_iso()
    if allowed is not None:
        payload = {k: v for k, v in payload.items() if k in allowed}
    return payload


async def _post(policy: WebhookSettings, url: str, body: bytes) -> str:
    """One delivery attempt: ``"ok"``, ``"retry"`` or ``"stop"`` (with a log line)."""
    import httpx

    try:
        target = await resolve_webhook(policy, url)
    except WebhookRefused as exc:
        logger.warning("webhook %s refused at delivery: %s", url, exc)
        return "stop"
    headers = {**policy.headers, "Host": target.host_header, "Content-Type": "application/json",
               "User-Agent": "stepgraph-webhook"}
    extensions = {"sni_hostname": target.server_name} if target.server_name else None
    try:
        async with httpx.AsyncClient(timeout=policy.timeout, trust_env=False, follow_redirects=False) as client:
            resp = await client.post(target.url, content=body, headers=headers, extensions=extensions)
    except httpx.HTTPError as exc:
        logger.warning("webhook %s failed: %s: %s", url, type(exc).__name__, exc)
        return "retry"
    if resp.status_code < 300:
        return "ok"
    logger.warning("webhook %s answered %d", url, resp.status_code)
    return "retry" if resp.status_code == 429 or resp.status_code >= 500 else "stop"


async def deliver_webhook(ctx: ServerContext, url: str, job: RunJob) -> bool:
    """POST the finished ``job`` to ``url`` (retrying as the policy says); ``True`` when delivered.

    Never raises: a webhook is best-effort and its failure is logged.
    """
    try:
        return await _deliver(ctx, url, job)
    except Exception:  # noqa: BLE001 - never let a webhook break the server
        logger.exception("webhook %s for run %s failed", url, job.run_id)
        return False


async def _deliver(ctx: ServerContext, url: str, job: RunJob) -> bool:
    policy = ctx.settings.webhooks
    if policy.disabled:
        logger.info("webhook of run %s not sent: http.disable_webhooks is on", job.run_id)
        return False
    run = await ctx.runs.find(job.run_id) or job.run
    failed = isinstance(job.result, dict) and "__error__" in job.result
    thread = await ctx.threads.find(job.thread_id) if failed else None
    body = dumps(webhook_payload(run, job, (thread or {}).get("values"), policy.allowed_fields), stream=False)
    delay = policy.backoff
    for attempt in range(1, max(1, policy.attempts) + 1):
        outcome = await _post(policy, url, body)
        if outcome == "ok":
            return True
        if outcome == "stop" or attempt >= policy.attempts:
            break
        await asyncio.sleep(delay)
        delay *= 2
    logger.warning("webhook %s for run %s not delivered", url, job.run_id)
    return False
