"""Custom authentication and authorization: LangGraph's ``langgraph_sdk.Auth``, on stepgraph.

``"auth": {"path": "./auth.py:auth"}`` in the config names an ``Auth`` object
(``config.py`` checks the section, ``authorizer.py`` loads it). ``AuthMiddleware`` runs
its ``@auth.authenticate`` handler on every non-public request; route handlers call
``authorize(request, resource, action, value)`` (``guard.py``) for the ``@auth.on...``
handler of each operation and pass the filter it returns to the resources, which apply it
in their storage queries (``storage.filters``): a resource the user may not see is
answered 404 and left out of searches and counts. Runs carry the user in
``config["configurable"]["langgraph_auth_user"]`` (``users.py``).
"""

from stepgraph.server.auth.authorizer import Authorizer, RequestAuth, load_authorizer
from stepgraph.server.auth.config import AuthConfig, parse_auth_config
from stepgraph.server.auth.guard import (
    AUTH_CONFIG_KEYS,
    authorize,
    authorize_model,
    request_auth,
    run_auth_configurable,
    store_filter,
    with_auth_user,
)
from stepgraph.server.auth.middleware import PUBLIC_PATHS, AuthMiddleware

__all__ = [
    "AUTH_CONFIG_KEYS",
    "PUBLIC_PATHS",
    "AuthConfig",
    "AuthMiddleware",
    "Authorizer",
    "RequestAuth",
    "authorize",
    "authorize_model",
    "load_authorizer",
    "parse_auth_config",
    "request_auth",
    "run_auth_configurable",
    "store_filter",
    "with_auth_user",
]
