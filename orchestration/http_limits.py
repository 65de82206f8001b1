"""HTTP limits of a served app: which Host names it answers, and how large a request body may be.

Both are Starlette's own: `TrustedHostMiddleware` answers 400 to a Host header
outside the list (DNS rebinding reaches a server bound to localhost only under
a foreign name), and an app's ``max_body_size`` (`RequestBodyLimitMiddleware`)
counts body bytes as they arrive, so a chunked body, or one whose
Content-Length lies, is refused with 413 once it passes the cap.
"""
from __future__ import annotations

from typing import Any, Optional

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp

LOCAL_HOSTS = ("localhost", "127.0.0.1")
ANY_INTERFACE = ("", "0.0.0.0", "::")
"""Bind addresses that name no host: a server bound to them answers only the configured names and LOCAL_HOSTS."""


def trusted_hosts(config: Any, bound: Optional[str]) -> list[str]:
    """Returns the Host names served: the bound host (unless it is every interface), LOCAL_HOSTS and the
    config's ``server.trustedHosts``."""
    named = [] if bound is None or bound in ANY_INTERFACE else [bound]
    return list(dict.fromkeys([*named, *LOCAL_HOSTS, *config.server.trusted_hosts]))


def trusting(app: ASGIApp, config: Any, bound: Optional[str]) -> ASGIApp:
    """Returns `app` answering only requests whose Host header is one of `trusted_hosts` (else 400)."""
    return TrustedHostMiddleware(app, allowed_hosts=trusted_hosts(config, bound), www_redirect=False)
