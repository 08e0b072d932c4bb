"""The ``http`` section of the config: which route groups the server keeps, the custom app,
the mount prefix and the headers copied into a run's ``configurable``.

``http_settings(checker, http)`` checks the section's values (problems go to the checker)
and returns ``HttpSettings``; ``server/app.py`` applies them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepgraph.server.config_schema import HttpConfig

__all__ = ["HeaderPatterns", "HttpSettings", "ROUTE_GROUPS", "http_settings"]

ROUTE_GROUPS = ("assistants", "threads", "runs", "store", "meta", "mcp", "a2a")
"""Route groups a ``disable_<group>`` key removes."""

_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")


@dataclass(frozen=True)
class HeaderPatterns:
    """``http.configurable_headers``: header names (``*`` matches any characters) copied into
    a run's ``config["configurable"]``; an excluded name is never copied. With only
    ``excludes``, every other header is copied; with neither, none."""

    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    def _compile(self, patterns: tuple[str, ...]) -> re.Pattern[str] | None:
        if not patterns:
            return None
        parts = (".*".join(re.escape(p) for p in pat.lower().split("*")) for pat in patterns)
        return re.compile("|".join(f"(?:{p})" for p in parts))

    def __post_init__(self) -> None:
        includes = self.includes or (("*",) if self.excludes else ())
        object.__setattr__(self, "_inc", self._compile(includes))
        object.__setattr__(self, "_exc", self._compile(self.excludes))

    def select(self, headers: Any) -> dict[str, str]:
        """The headers (``(name, value)`` pairs or a mapping) to copy, names lower-cased."""
        inc: re.Pattern[str] | None = self._inc  # type: ignore[attr-defined]
        exc: re.Pattern[str] | None = self._exc  # type: ignore[attr-defined]
        if inc is None:
            return {}
        items = headers.items() if hasattr(headers, "items") else headers
        out: dict[str, str] = {}
        for name, value in items:
            name = name.lower()
            if inc.fullmatch(name) and not (exc is not None and exc.fullmatch(name)):
                out[name] = value
        return out


@dataclass
class HttpSettings:
    """What the ``http`` section changes in the app (defaults: nothing)."""

    disabled: frozenset[str] = frozenset()
    """Route groups removed (``ROUTE_GROUPS``)."""
    app: str | None = None
    """``"./file.py:app"``: a Starlette/FastAPI app whose routes come before the API's."""
    enable_custom_route_auth: bool = False
    middleware_order: str = "middleware_first"
    mount_prefix: str = ""
    configurable_headers: HeaderPatterns | None = None
    studio: bool | None = None
    """``http.studio``: serve the studio at ``/ui`` (``None``: in ``stepgraph dev`` only)."""
    ui_disabled: bool = False
    """``http.disable_ui: true``: no ``/ui`` at all (the studio off even in ``dev``)."""


def _patterns(c: Any, key: str, values: list[str] | None) -> tuple[str, ...]:
    out = []
    for i, pattern in enumerate(values or ()):
        if not isinstance(pattern, str) or not pattern or not _HEADER_NAME.fullmatch(pattern):
            c.invalid(f"{key}[{i}]", f"expected a header name, with `*` as the only wildcard, got {pattern!r}",
                      'e.g. "x-user-id" or "x-org-*"')
        else:
            out.append(pattern)
    return tuple(out)


def http_settings(c: Any, http: HttpConfig | None, check_ref: Any) -> HttpSettings:
    """Check ``http`` (``c`` is config_policy's checker; ``check_ref`` its reference check)."""
    out = HttpSettings()
    if http is None:
        return out
    out.disabled = frozenset(g for g in ROUTE_GROUPS if getattr(http, f"disable_{g}"))
    if http.app is not None:
        out.app = check_ref(c, "http.app", http.app, "custom apps")
    out.enable_custom_route_auth = bool(http.enable_custom_route_auth)
    out.studio = http.studio
    out.ui_disabled = http.disable_ui is True
    if http.middleware_order is not None:
        out.middleware_order = http.middleware_order
    if http.app is None:
        for key in ("middleware_order", "enable_custom_route_auth"):
            if getattr(http, key) is not None:
                c.notes.append(f"config key `http.{key}` applies to the custom app of `http.app`, and "
                               "there is none; every API route is behind auth when it is configured")
    if http.mount_prefix is not None:
        prefix = http.mount_prefix.rstrip("/")
        if not prefix.startswith("/") or "//" in prefix or not re.fullmatch(r"[A-Za-z0-9/._~-]+", prefix):
            c.invalid("http.mount_prefix", f"expected a path such as \"/api\", got {http.mount_prefix!r}")
        else:
            out.mount_prefix = prefix
    rules = http.configurable_headers
    if rules is not None:
        includes = _patterns(c, "http.configurable_headers.includes", [*(rules.includes or ()), *(rules.include or ())])
        excludes = _patterns(c, "http.configurable_headers.excludes", [*(rules.excludes or ()), *(rules.exclude or ())])
        out.configurable_headers = HeaderPatterns(includes, excludes)
    return out
