"""``/ui``: the local studio (issue 16), a single-page app shipped built inside the package.

The assets live in ``ui_dist/`` next to this module (built from ``ui/`` at the repository root by
``scripts/build_ui.sh``; nothing is fetched at run time). The page only calls the public HTTP API,
so serving it adds no data path: the files are public (they hold no data) and every API call the
page makes passes auth like any client's.

On by default in ``stepgraph dev``, off in ``stepgraph serve`` unless ``http.studio`` is ``true``
(or ``--studio``); ``http.disable_ui: true`` or ``http.studio: false`` turns it off in both.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from stepgraph.server.config_errors import CONFIG_INVALID
from stepgraph.server.settings import ConfigError

__all__ = ["UI_PREFIX", "build_info", "is_ui_path", "studio_enabled", "ui_routes"]

UI_PREFIX = "/ui"
DIST = "ui_dist"
BUILD_INFO = "build-info.json"
"""Written by the build: the hash of the sources it was built from (checked by a unit test)."""

_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
          ".svg": "image/svg+xml", ".json": "application/json", ".html": "text/html; charset=utf-8"}
_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
           "connect-src 'self' http: https:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""Nothing from other origins but API calls (the page may be pointed at another server)."""


def studio_enabled(settings: Any) -> bool:
    """Whether ``settings`` serve ``/ui``: ``http.studio`` when set, else on in ``dev`` only."""
    http = settings.http
    if getattr(http, "ui_disabled", False):
        return False
    wanted = getattr(http, "studio", None)
    return bool(settings.dev) if wanted is None else bool(wanted)


def _dist() -> Traversable:
    return resources.files("stepgraph.server").joinpath(DIST)


def build_info() -> dict[str, Any]:
    """The build's ``build-info.json`` (``{"sources_sha256": ..., "files": [...]}``)."""
    found = _dist().joinpath(BUILD_INFO)
    if not found.is_file():
        raise ConfigError(f"the studio (/ui) has no build in {DIST}/: run scripts/build_ui.sh, or turn it off "
                          "with http.studio: false", code=CONFIG_INVALID)
    info: dict[str, Any] = json.loads(found.read_text(encoding="utf-8"))
    return info


@functools.cache
def _assets() -> dict[str, tuple[bytes, str]]:
    """Every file of the build's ``assets/`` by name, with its media type (read once)."""
    out: dict[str, tuple[bytes, str]] = {}
    folder = _dist().joinpath("assets")
    if folder.is_dir():
        for item in folder.iterdir():
            if item.is_file():
                suffix = "." + item.name.rsplit(".", 1)[-1] if "." in item.name else ""
                out[item.name] = (item.read_bytes(), _TYPES.get(suffix, "application/octet-stream"))
    return out


def _asset(name: str) -> tuple[bytes, str] | None:
    """An asset of the build by its name under ``assets/`` (``None``: not one of them).

    Only the names of the build are served, so no path can leave the folder, and a rebuild
    while the server runs shows its new (content-hashed) names on the next look-up.
    """
    found = _assets().get(name)
    if found is None and "/" not in name and _dist().joinpath("assets", name).is_file():
        _assets.cache_clear()  # rebuilt since the first read
        found = _assets().get(name)
    return found


def _index() -> bytes:  # read each time: a rebuild shows without a restart
    return _dist().joinpath("index.html").read_bytes()


_HEADERS = {"Content-Security-Policy": _POLICY, "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer"}


async def _redirect(request: Request) -> Response:
    # relative, so that it also holds under http.mount_prefix
    return RedirectResponse("ui/", status_code=307)


async def _page(request: Request) -> Response:
    return Response(_index(), media_type="text/html; charset=utf-8",
                    headers={**_HEADERS, "Cache-Control": "no-cache"})


async def _asset_route(request: Request) -> Response:
    found = _asset(request.path_params["name"])
    if found is None:
        return Response(b"not found", status_code=404, media_type="text/plain", headers=_HEADERS)
    body, media = found
    # file names carry a content hash: cache them for good
    return Response(body, media_type=media, headers={**_HEADERS, "Cache-Control": "public, max-age=31536000, immutable"})


def ui_routes() -> list[BaseRoute]:
    """The routes of ``/ui`` (checks that the build is there)."""
    build_info()
    return [
        Route(UI_PREFIX, _redirect, methods=["GET"], include_in_schema=False),
        Route(UI_PREFIX + "/", _page, methods=["GET"], include_in_schema=False),
        Route(UI_PREFIX + "/assets/{name:path}", _asset_route, methods=["GET"], include_in_schema=False),
    ]


def is_ui_path(scope: Any) -> bool:
    """A request for the studio's files (public: they hold no data; the API calls pass auth)."""
    path = scope.get("path", "")
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return scope.get("method") in ("GET", "HEAD") and (path == UI_PREFIX or path.startswith(UI_PREFIX + "/"))
