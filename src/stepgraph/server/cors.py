"""CORS for browser clients (``useStream``, ``@langchain/react``, agent-chat-ui): Starlette's
own ``CORSMiddleware``, configured from ``http.cors``.

* Default (no ``http.cors``, or one naming neither ``allow_origins`` nor
  ``allow_origin_regex``): only loopback origins (``http(s)://localhost``, ``127.0.0.1``,
  ``[::1]`` on any port) are allowed; no private-network access is granted (a loopback page
  calling a loopback server needs none).
* ``http.cors`` keys are Starlette's arguments, as on LangGraph's server. Keys it leaves out
  keep the defaults below (every method and header, the pagination and ``content-location``
  headers exposed, which the JS SDK reads), where Starlette's own defaults would allow only
  ``GET``. Private-network access (Chrome's preflight for a public page calling a private
  address) is granted to listed origins, never together with ``"*"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

if TYPE_CHECKING:
    from stepgraph.server.config_schema import CorsConfig

__all__ = ["EXPOSE_HEADERS", "LOOPBACK_ORIGINS", "cors_middleware", "cors_options"]

LOOPBACK_ORIGINS = r"https?://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?"
EXPOSE_HEADERS = ("x-pagination-total", "x-pagination-next", "content-location")


def cors_options(cors: CorsConfig | None) -> dict[str, Any]:
    """The ``CORSMiddleware`` arguments for ``http.cors`` (``None``: the loopback default)."""
    given = cors.model_dump(exclude_none=True) if cors is not None else {}
    options: dict[str, Any] = {
        "allow_methods": ["*"], "allow_headers": ["*"], "expose_headers": list(EXPOSE_HEADERS),
        "allow_credentials": False, "max_age": 600,
    }
    options.update(given)
    if "allow_origins" not in given and "allow_origin_regex" not in given:
        options["allow_origin_regex"] = LOOPBACK_ORIGINS
    explicit = "*" not in options.get("allow_origins", ())
    options["allow_private_network"] = explicit and cors is not None and (
        "allow_origins" in given or "allow_origin_regex" in given)
    return options


def cors_middleware(cors: CorsConfig | None) -> Middleware:
    """The app's CORS middleware."""
    return Middleware(CORSMiddleware, **cors_options(cors))
