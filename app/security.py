"""What stands between the network and the service: one login for the chat and the API, throttled,
and limits on request bodies.

Both are plain ASGI middleware around the whole server (the HTTP API, its OpenAPI pages and the
mounted Gradio chat), so there is exactly one login: HTTP Basic, which the browser asks for once
and then sends with every request the chat makes, and which API clients send themselves.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import secrets
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Mapping

from pipeline.configuration import ConfigurationError

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_log = logging.getLogger("adaptive_rag.security")

USER_KEY = "adaptive_rag.user"
"""Where the authenticated user name is kept in the ASGI scope (and so in ``request.scope``)."""


def parse_users(values: str | Iterable[str] | None) -> dict[str, str]:
    """``user:password`` entries (one string may hold several, separated by commas) as a mapping."""
    if not values:
        return {}
    entries = [values] if isinstance(values, str) else list(values)
    users: dict[str, str] = {}
    for entry in (e.strip() for value in entries for e in value.split(",")):
        if not entry:
            continue
        user, sep, password = entry.partition(":")
        if not sep or not user or not password:
            raise ConfigurationError("auth must be given as user:password (several separated by commas)")
        if user in users:
            raise ConfigurationError(f"auth names user {user!r} twice")
        users[user] = password
    return users


def basic_credentials(headers: Mapping[str, str] | Iterable[tuple[bytes, bytes]]) -> tuple[str, str] | None:
    """(user, password) from an ``Authorization: Basic`` header, or ``None``."""
    if isinstance(headers, Mapping):
        value = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    else:
        value = next((v.decode("latin-1") for k, v in headers if k.lower() == b"authorization"), "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "basic" or not token:
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


@dataclass
class LoginThrottle:
    """At most ``max_failures`` wrong logins per client address within ``window_s``; past that, every
    login from the address, right or wrong, is refused until the oldest failure leaves the window."""

    max_failures: int = 10
    window_s: float = 300.0

    def __post_init__(self) -> None:
        if self.max_failures < 1 or self.window_s <= 0:
            raise ConfigurationError("login throttle needs max_failures >= 1 and window_s > 0")
        self._failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        failures = self._failures[client]
        while failures and failures[0] <= now - self.window_s:
            failures.popleft()
        return failures

    def retry_after(self, client: str, now: float | None = None) -> float:
        """Seconds until ``client`` may try again (0 when it may now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            failures = self._recent(client, now)
            if len(failures) < self.max_failures:
                return 0.0
            return failures[0] + self.window_s - now

    def failed(self, client: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            self._recent(client, now).append(now)
            if len(self._failures) > 10_000:  # forget quiet addresses rather than grow without bound
                for key in [k for k, v in self._failures.items() if not v]:
                    del self._failures[key]

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)


async def _send_json(send: Send, status: int, body: dict[str, Any], headers: Iterable[tuple[str, str]] = ()) -> None:
    payload = json.dumps(body).encode()
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


class BasicAuthMiddleware:
    """HTTP Basic for every route. A valid login puts the user name in ``scope[USER_KEY]``."""

    def __init__(self, app: ASGIApp, users: Mapping[str, str], throttle: LoginThrottle | None = None,
                 realm: str = "adaptive-rag"):
        if not users:
            raise ConfigurationError("BasicAuthMiddleware needs at least one user")
        self.app = app
        self.users = dict(users)
        self.throttle = throttle or LoginThrottle()
        self.challenge = f'Basic realm="{realm}", charset="UTF-8"'

    def _check(self, credentials: tuple[str, str] | None) -> str | None:
        if credentials is None:
            return None
        user, password = credentials
        expected = self.users.get(user)
        # Compare against something even for an unknown user, so timing does not tell users apart.
        ok = secrets.compare_digest(password.encode(), (expected or "\0" * 16).encode())
        return user if ok and expected is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        client = (scope.get("client") or ("unknown", 0))[0]
        wait = self.throttle.retry_after(client)
        if wait > 0:
            if scope["type"] == "http":
                await _send_json(send, 429, {"detail": f"too many failed logins; try again in {wait:.0f} s"},
                                 [("retry-after", str(int(wait) + 1))])
            return
        credentials = basic_credentials(scope.get("headers") or [])
        user = self._check(credentials)
        if user is None:
            if credentials is not None:
                self.throttle.failed(client)
            if scope["type"] == "http":
                await _send_json(send, 401, {"detail": "authentication required"},
                                 [("www-authenticate", self.challenge)])
            return
        self.throttle.succeeded(client)
        await self.app({**scope, USER_KEY: user}, receive, send)


class RequestLimitsMiddleware:
    """Bounds on what a client may send: a body larger than the limit for its path gets 413 (from
    ``Content-Length`` before anything is read, or as soon as the streamed body passes it), and a
    body that does not arrive whole within ``body_timeout_s`` gets 408, so half-sent requests cannot
    hold the server's workers."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, body_timeout_s: float = 30.0,
                 path_limits: Mapping[str, int] | None = None):
        if max_body_bytes < 1 or body_timeout_s <= 0:
            raise ConfigurationError("request limits must be positive")
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s
        self.path_limits = dict(path_limits or {})

    def limit_for(self, path: str) -> int:
        for prefix, limit in self.path_limits.items():
            if path.startswith(prefix):
                return limit
        return self.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.limit_for(scope.get("path", ""))
        declared = next((v for k, v in scope.get("headers") or [] if k == b"content-length"), None)
        if declared is not None:
            try:
                too_large = int(declared) > limit
            except ValueError:
                return await _send_json(send, 400, {"detail": "invalid Content-Length header"})
            if too_large:
                return await _send_json(send, 413, {"detail": f"request body over the limit of {limit:,} bytes"})

        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout_s
        received = 0
        body_done = False
        started = answered = False

        async def refuse(status: int, detail: str) -> Message:
            """Answer for the app and tell it the client has gone, so it stops reading."""
            nonlocal answered, body_done
            if not started:
                await _send_json(send, status, {"detail": detail}, [("connection", "close")])
            answered = body_done = True
            return {"type": "http.disconnect"}

        async def limited_receive() -> Message:
            nonlocal received, body_done
            if body_done:  # after the body: waiting for a disconnect is the app's business
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0.001))
            except asyncio.TimeoutError:
                return await refuse(408, f"request body not received within {self.body_timeout_s:g} s")
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    return await refuse(413, f"request body over the limit of {limit:,} bytes")
                body_done = not message.get("more_body", False)
            else:
                body_done = True
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if answered:
                return  # the refusal above is the response
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, limited_receive, tracking_send)


class GuardedRoutesMiddleware:
    """The chat's own API (Gradio's routes under ``prefix``) raises on some malformed requests (an
    unknown ``fn_index`` is a ``KeyError`` inside Gradio). Such a request gets a 400 and one log line
    instead of a 500 and a traceback; an exception after the response has started is only logged."""

    def __init__(self, app: ASGIApp, prefix: str = "/gradio_api/"):
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope.get("path", "").startswith(self.prefix):
            return await self.app(scope, receive, send)
        started = False
        held: list[Message] = []  # a 5xx response, kept back until we know whether an exception follows

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if held or (not started and message["type"] == "http.response.start" and message["status"] >= 500):
                held.append(message)  # Gradio's own error handler answers 500 and then re-raises
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, guarded_send)
        except Exception as exc:  # Gradio's, not ours: our routes map their errors in app.errors
            _log.warning("refused a request the chat's API could not handle: %s %s: %s: %s", scope.get("method"),
                         scope.get("path"), type(exc).__name__, str(exc)[:200])
            if not started:
                await _send_json(send, 400, {"detail": f"invalid request for the chat's API ({type(exc).__name__})"})
            return
        for message in held:  # a 5xx Gradio meant to send, with no exception behind it
            await send(message)
