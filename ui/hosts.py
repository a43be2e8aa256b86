"""Which requests the page answers: those addressed to it, never those a DNS-rebinding page sends it.

A web page the user visits can point a name it owns (attacker.example) at 127.0.0.1; the browser then sends
that page's requests, and opens its websocket, to the local codeqa page as if same-origin. The only trace is
the name: the `Host` header says attacker.example. So, as Jupyter does (`check_host`, `check_origin`), a
request is answered only when

- its `Host` is a name of this machine's loopback (localhost, 127.0.0.0/8, ::1) or the address the page is
  bound to; on a wildcard address (0.0.0.0, ::) any name reaches the page, which then needs its token
  (`codeqa ui` refuses to start without one);
- its `Origin`, when a browser sends one, is the page itself: the same scheme-less host and port as `Host`.

Anything else gets 403, the page and the websocket (`/_stcore/stream`) alike. `HostCheck` is plain ASGI
middleware, put in front of Streamlit's own by `serve.py`.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOCAL_NAMES = frozenset({"localhost"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})
REFUSED = (b"This codeqa page answers only requests addressed to it (localhost or the address it serves); "
           b"open the address `codeqa ui` printed.\n")


def _hostname(netloc: str) -> str | None:
    """The host of `name[:port]` (`::1` from `[::1]:8501`), lowercased; None unless it is just that: a Host
    header holding userinfo, a path or spaces is no address a browser sends."""
    if not netloc or any(c in netloc for c in "@/\\?# \t\r\n"):
        return None
    try:
        parts = urlsplit("//" + netloc)
        parts.port  # a port that is not a number is refused, not ignored
    except ValueError:
        return None
    return parts.hostname or None


def host_allowed(host: str | None, bound: str) -> bool:
    """Whether a request whose `Host` header is `host` is addressed to a page bound to `bound`."""
    name = _hostname(host or "")
    if name is None:
        return False
    bound = bound.strip("[]").lower()
    if bound in WILDCARDS or name == bound or name in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None, host: str) -> bool:
    """A request without `Origin` comes from no web page (curl, the health check); one with it must come from
    the page itself. "null" (a sandboxed frame, a file) is no page of ours."""
    if origin is None:
        return True
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and _hostname(parts.netloc) is not None
            and parts.netloc.lower() == host.lower() and not parts.path.strip("/"))


class HostCheck:
    """ASGI middleware: 403 for a request (HTTP or websocket) not addressed to the page at `bound`."""

    def __init__(self, app, bound: str):
        self.app = app
        self.bound = bound

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] in ("http", "websocket") and not self.allows(scope):
            if scope["type"] == "websocket":
                # closing before the handshake is accepted makes the server answer the upgrade with 403
                await send({"type": "websocket.close", "code": 1008})
                return
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(REFUSED)).encode())]})
            await send({"type": "http.response.body", "body": REFUSED})
            return
        await self.app(scope, receive, send)

    def allows(self, scope) -> bool:
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope.get("headers", ()):
            headers.setdefault(name.lower(), []).append(value)
        hosts, origins = headers.get(b"host", []), headers.get(b"origin", [])
        if len(hosts) != 1 or len(origins) > 1:  # two Host headers: which one a proxy believes is anyone's guess
            return False
        host = hosts[0].decode("latin-1")
        return host_allowed(host, self.bound) and origin_allowed(
            origins[0].decode("latin-1") if origins else None, host)
