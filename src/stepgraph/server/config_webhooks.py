"""The ``webhooks`` key (and ``http.disable_webhooks``) as resolved settings.

Defaults are stricter than LangGraph's: loopback *and* private addresses are refused unless
``webhooks.url.disable_loopback`` / ``webhooks.url.disable_private_ips`` are set to false.
Link-local (cloud metadata), multicast, unspecified and reserved addresses are always refused.
As on LangGraph, a ``webhooks.url`` object turns ``require_https`` on unless it says otherwise.
Header values may use ``${{ env.VAR }}`` templates; ``VAR`` must start with ``env_prefix``
(default ``LG_WEBHOOK_``) and be set (in the environment or the config's ``env``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from stepgraph.server.config_errors import CONFIG_INVALID, Problem
from stepgraph.server.config_schema import HttpConfig, WebhooksConfig

__all__ = ["PAYLOAD_FIELDS", "WebhookSettings", "webhook_settings"]

PAYLOAD_FIELDS = frozenset({
    "run_id", "thread_id", "assistant_id", "created_at", "updated_at", "metadata", "kwargs",
    "multitask_strategy", "status", "webhook_sent_at", "values", "error",
})
_TEMPLATE = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


@dataclass(frozen=True)
class WebhookSettings:
    """How webhooks are checked and delivered.

    ``attempts`` deliveries at most, waiting ``backoff`` seconds then doubling between them
    (retried on connection errors, timeouts, 429 and 5xx); each attempt has ``timeout`` seconds.
    """

    disabled: bool = False
    require_https: bool = False
    allowed_domains: tuple[str, ...] = ()
    allowed_ports: tuple[int, ...] = ()
    max_url_length: int = 2048
    allow_loopback: bool = False
    allow_private: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    allowed_fields: frozenset[str] | None = None
    timeout: float = 10.0
    attempts: int = 3
    backoff: float = 1.0


def _headers(cfg: WebhooksConfig, environ: Mapping[str, str], problems: list[Problem]) -> dict[str, str]:
    prefix = cfg.env_prefix if cfg.env_prefix is not None else "LG_WEBHOOK_"
    out: dict[str, str] = {}
    for name, template in (cfg.headers or {}).items():
        key = f"webhooks.headers.{name}"
        if not _HEADER_NAME.fullmatch(name):
            problems.append(Problem(CONFIG_INVALID, key, "not a valid HTTP header name"))
            continue
        failures: list[str] = []

        def render(match: re.Match[str], failures: list[str] = failures) -> str:
            expr = match.group(1)
            var = expr.removeprefix("env.")
            if not expr.startswith("env.") or not var or "." in var:
                failures.append(f"only ${{{{ env.VAR }}}} templates are allowed, got {match.group(0)!r}")
            elif not var.startswith(prefix):
                failures.append(f"variable {var!r} does not start with env_prefix {prefix!r}")
            elif var not in environ:
                failures.append(f"variable {var!r} is not set")
            else:
                return environ[var]
            return ""

        value = _TEMPLATE.sub(render, template)
        if failures:
            problems.append(Problem(CONFIG_INVALID, key, failures[0],
                                    f"set {prefix}... in the environment or in `env`"))
        elif any(ch in value for ch in "\r\n\0"):
            problems.append(Problem(CONFIG_INVALID, key, "the value contains a line break or NUL"))
        else:
            out[name] = value
    return out


def webhook_settings(cfg: WebhooksConfig | None, http: HttpConfig | None, environ: Mapping[str, str],
                     problems: list[Problem]) -> WebhookSettings:
    """Resolve ``webhooks`` (``problems`` collects what is wrong with it)."""
    disabled = bool(http and http.disable_webhooks)
    if cfg is None:
        return WebhookSettings(disabled=disabled)
    policy = cfg.url
    given = policy.given() if policy is not None else set()
    domains: list[str] = []
    for i, dom in enumerate((policy.allowed_domains if policy else None) or []):
        d = dom.strip().lower().rstrip(".")
        if not d or ("*" in d and not (d.startswith("*.") and "*" not in d[2:] and len(d) > 2)):
            problems.append(Problem(CONFIG_INVALID, f"webhooks.url.allowed_domains[{i}]",
                                    f"expected a host name or '*.domain', got {dom!r}"))
        else:
            domains.append(d)
    ports = tuple((policy.allowed_ports if policy else None) or ())
    for i, port in enumerate(ports):
        if not 0 < port < 65536:
            problems.append(Problem(CONFIG_INVALID, f"webhooks.url.allowed_ports[{i}]", f"not a port: {port}"))
    fields = None
    if cfg.allowed_fields is not None:
        bad = sorted(set(cfg.allowed_fields) - PAYLOAD_FIELDS)
        if bad:
            problems.append(Problem(CONFIG_INVALID, "webhooks.allowed_fields", f"unknown field(s) {bad}",
                                    f"valid fields: {', '.join(sorted(PAYLOAD_FIELDS))}"))
        fields = frozenset(cfg.allowed_fields)
    return WebhookSettings(
        disabled=disabled,
        require_https=bool(policy.require_https) if "require_https" in given else policy is not None,
        allowed_domains=tuple(domains),
        allowed_ports=ports,
        max_url_length=(policy.max_url_length if policy and policy.max_url_length else 2048),
        allow_loopback=policy is not None and policy.disable_loopback is False,
        allow_private=policy is not None and policy.disable_private_ips is False,
        headers=_headers(cfg, environ, problems),
        allowed_fields=fields,
    )
