"""A fake Discord OAuth2 provider, for the web's "Sign in with Discord" (web/signin.py) and the API's check of the
token it ends with (api/web_sessions.py).

    async with FakeDiscordOAuth() as fake:
        client = fake.add_client(redirect_uri="http://127.0.0.1:8080/signin/callback")
        fake.approve_as(FakeUser(id="80351110224678912", username="nelly"))
        ...the browser follows GET /signin to fake.base_url/oauth2/authorize, which answers with a code...
        assert fake.violations == []

It holds clients to the standards, not to Discord's leniency:
- The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3): a known `client_id` and one of its registered
  `redirect_uri`s, else a 400 page and no redirect (§4.1.2.1); `response_type=code`; `scope` naming only scopes
  that the vendored OpenAPI document defines for the authorization-code flow
  (`components.securitySchemes.OAuth2`); a `code_challenge` with `code_challenge_method=S256` (PKCE is required
  here). The configured user approves at once; `approve_as(None)` denies (`error=access_denied`).
- The token request (RFC 6749 §4.1.3, §5; RFC 7636 §4.5, §4.6): form-encoded, each parameter once; the client
  authenticated by its secret (HTTP Basic or the body, not both), else 401 `invalid_client`; `grant_type`
  `authorization_code` (anything else `unsupported_grant_type`); the code used once, by the client it was issued
  to, with the same `redirect_uri`, and a `code_verifier` whose S256 is the challenge, else `invalid_grant`. A code
  presented twice also revokes the tokens issued from it (§4.1.2). Errors are §5.2's JSON.
- `GET /api/v10/users/@me` and `GET /api/v10/oauth2/@me` with `Authorization: Bearer`: the scopes the document's
  operation requires, and each answer checked against the document's response schema.

What breaks the document (an answer of the fake's own that does not match it, a scope it does not define, a route
Discord does not have) is recorded in `violations`; refusals that follow the RFCs are answered and listed in
`refusals`, so a test can tell which rule fired.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from .models import FakeUser, Violation
from .payloads import private_user_payload, user_payload
from .validation import OpenAPISpec, load_spec

API_PREFIX = "/api/v10"
CODE_LIFETIME_S = 60.0  # RFC 6749 §4.1.2 recommends 10 minutes at most; a test flow takes well under one.
TOKEN_LIFETIME = timedelta(days=7)  # Discord's access tokens last a week.
# RFC 7636 §4.1: 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}")  # BASE64URL of a SHA-256, without padding


def s256(verifier: str) -> str:
    """RFC 7636 §4.2's S256 transform: BASE64URL(SHA256(ASCII(verifier))), no padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


@dataclass(frozen=True)
class OAuthClient:
    """A Discord application: its credentials and the redirect URIs registered for it."""

    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    name: str = "Kernel Arena"


@dataclass
class _Grant:
    code: str
    client_id: str
    redirect_uri: str
    user: FakeUser
    scopes: tuple[str, ...]
    challenge: str
    expires_at: float
    used: bool = False
    tokens: list[str] = field(default_factory=list)


@dataclass
class _AccessToken:
    client_id: str
    user: FakeUser
    scopes: tuple[str, ...]
    expires_at: datetime
    revoked: bool = False


class _OAuthError(Exception):
    """An error answer of RFC 6749 §5.2: `error`, `error_description`, and its status."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


class FakeDiscordOAuth:
    """A fake Discord OAuth2 provider on 127.0.0.1 (a free port): authorize, token, and who a token is."""

    def __init__(self, *, spec_path: Path | None = None) -> None:
        self.spec: OpenAPISpec = load_spec(spec_path)
        flows = self.spec.document["components"]["securitySchemes"]["OAuth2"]["flows"]
        self.scopes: frozenset[str] = frozenset(flows["authorizationCode"]["scopes"])
        self.clients: dict[str, OAuthClient] = {}
        self.approver: FakeUser | None = None
        self.violations: list[Violation] = []
        self.refusals: list[str] = []  # `error: description` of every error answered, in order
        self.revoked: list[str] = []  # access tokens revoked by their client (RFC 7009)
        self.authorizations: list[dict[str, str]] = []  # the query of each authorization request
        self._grants: dict[str, _Grant] = {}
        self._tokens: dict[str, _AccessToken] = {}
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    # -- configuration ---------------------------------------------------------------------------------------

    def add_client(self, redirect_uri: str, *, name: str = "Kernel Arena") -> OAuthClient:
        """Register an application with one redirect URI; its id is a fresh snowflake, its secret random."""
        client = OAuthClient(str(secrets.randbelow(10**18) + 10**17), secrets.token_urlsafe(24), (redirect_uri,), name)
        self.clients[client.client_id] = client
        return client

    def approve_as(self, user: FakeUser | None) -> None:
        """Who approves the next authorization requests; None: the user clicks Cancel (`access_denied`)."""
        self.approver = user

    def issue_token(self, client: OAuthClient, user: FakeUser, scopes: tuple[str, ...] = ("identify",)) -> str:
        """An access token of `client` for `user`, as if its own flow had run (another application's token)."""
        return self._new_token(client.client_id, user, scopes)

    def _new_token(self, client_id: str, user: FakeUser, scopes: tuple[str, ...]) -> str:
        token = secrets.token_urlsafe(30)
        self._tokens[token] = _AccessToken(client_id, user, scopes, datetime.now(UTC) + TOKEN_LIFETIME)
        return token

    # -- lifecycle -------------------------------------------------------------------------------------------

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._unknown_routes])
        app.add_routes(
            [
                # The browser's page is discord.com/oauth2/authorize; the API also answers it under /api.
                web.get("/oauth2/authorize", self.authorize),
                web.get("/api/oauth2/authorize", self.authorize),
                web.post("/api/oauth2/token", self.token),
                web.post(f"{API_PREFIX}/oauth2/token", self.token),
                web.post("/api/oauth2/token/revoke", self.revoke),
                web.post(f"{API_PREFIX}/oauth2/token/revoke", self.revoke),
                web.get(f"{API_PREFIX}/users/@me", self.users_me),
                web.get(f"{API_PREFIX}/oauth2/@me", self.oauth2_me),
            ]
        )
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self._app(), handle_signals=False, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscordOAuth:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    @web.middleware
    async def _unknown_routes(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.match_info.http_exception is not None:
            self.violations.append(Violation("unknown-route", request.method, request.path, "not a route of the fake"))
            return web.json_response({"code": 0, "message": "404: Not Found"}, status=404)
        return await handler(request)

    # -- the authorization endpoint (RFC 6749 §4.1.1) --------------------------------------------------------

    async def authorize(self, request: web.Request) -> web.Response:
        query = request.query
        self.authorizations.append(dict(query))
        duplicated = sorted({k for k in query if len(query.getall(k)) > 1})
        client = self.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        # §4.1.2.1: with no valid client or redirect URI, tell the user and never redirect.
        if client is None:
            return self._page_refusal("invalid_client", "Unknown client_id.")
        if redirect_uri not in client.redirect_uris:
            return self._page_refusal("invalid_request", f"redirect_uri {redirect_uri!r} is not registered.")
        state = query.get("state")

        def back(params: dict[str, str]) -> web.Response:
            if state is not None:
                params["state"] = state
            return web.Response(status=302, headers={"Location": f"{redirect_uri}?{urlencode(params)}"})

        def refuse(error: str, description: str) -> web.Response:
            self.refusals.append(f"{error}: {description}")
            return back({"error": error, "error_description": description})

        if duplicated:
            return refuse("invalid_request", f"parameters sent more than once: {', '.join(duplicated)}")
        if query.get("response_type") != "code":
            return refuse("unsupported_response_type", "only response_type=code is served")
        scopes = tuple(query.get("scope", "").split())
        unknown = [s for s in scopes if s not in self.scopes]
        if unknown:
            self.violations.append(
                Violation("request-schema", "GET", request.path, f"scopes not in the document: {unknown}")
            )
            return refuse("invalid_scope", f"unknown scopes: {' '.join(unknown)}")
        if not scopes:
            return refuse("invalid_scope", "no scope requested")
        challenge, method = query.get("code_challenge"), query.get("code_challenge_method")
        if not challenge:
            return refuse("invalid_request", "code challenge required (PKCE)")
        if method != "S256":
            return refuse("invalid_request", "transform algorithm not supported: use code_challenge_method=S256")
        if not _CHALLENGE.fullmatch(challenge):
            return refuse("invalid_request", "code_challenge is not a BASE64URL SHA-256")
        if self.approver is None:
            return refuse("access_denied", "The resource owner denied the request")
        code = secrets.token_urlsafe(24)
        self._grants[code] = _Grant(
            code, client.client_id, redirect_uri, self.approver, scopes, challenge, time.monotonic() + CODE_LIFETIME_S
        )
        return back({"code": code})

    def _page_refusal(self, error: str, description: str) -> web.Response:
        self.refusals.append(f"{error}: {description}")
        return web.Response(status=400, text=f"Invalid OAuth2 request: {description}")

    # -- the token endpoint (RFC 6749 §4.1.3, RFC 7636 §4.5) ------------------------------------------------

    async def token(self, request: web.Request) -> web.Response:
        try:
            return self._token_answer(self._exchange(request, await request.post(), request.content_type))
        except _OAuthError as exc:
            self.refusals.append(f"{exc.error}: {exc.description}")
            headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
            if exc.status == 401 and request.headers.get("Authorization", "").startswith("Basic "):
                headers["WWW-Authenticate"] = 'Basic realm="discord"'
            body = {"error": exc.error, "error_description": exc.description}
            return web.json_response(body, status=exc.status, headers=headers)

    async def revoke(self, request: web.Request) -> web.Response:
        """Token revocation (RFC 7009 §2.1): the client authenticates as at the token endpoint; a token it holds is
        revoked, and an unknown or already revoked one is answered 200 all the same (§2.2)."""
        try:
            if request.content_type != "application/x-www-form-urlencoded":
                raise _OAuthError("invalid_request", f"the body must be form-encoded, not {request.content_type!r}")
            form = await request.post()
            client = self._client(request, form)
            token = form.get("token")
            if not token:
                raise _OAuthError("invalid_request", "token is missing")
        except _OAuthError as exc:
            self.refusals.append(f"revoke {exc.error}: {exc.description}")
            return web.json_response({"error": exc.error, "error_description": exc.description}, status=exc.status)
        found = self._tokens.get(str(token))
        if found is not None and found.client_id == client.client_id:
            found.revoked = True
            self.revoked.append(str(token))
        return web.Response(status=200)

    def _client(self, request: web.Request, form: Any) -> OAuthClient:
        """The client that authenticated (§2.3.1): HTTP Basic or the body's client_id/client_secret, not both."""
        header = request.headers.get("Authorization", "")
        in_body = "client_secret" in form
        if header.startswith("Basic "):
            if in_body:
                raise _OAuthError("invalid_request", "the client authenticated twice (header and body)")
            try:
                decoded = base64.b64decode(header[6:], validate=True).decode()
            except ValueError:
                raise _OAuthError("invalid_client", "unreadable Basic credentials", 401) from None
            client_id, _, secret = decoded.partition(":")
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        client = self.clients.get(client_id)
        if client is None or not secrets.compare_digest(secret.encode(), client.client_secret.encode()):
            raise _OAuthError("invalid_client", "client authentication failed", 401)
        if "client_id" in form and form["client_id"] != client.client_id:
            raise _OAuthError("invalid_client", "client_id does not match the authenticated client", 401)
        return client

    def _exchange(self, request: web.Request, form: Any, content_type: str) -> tuple[str, tuple[str, ...]]:
        if content_type != "application/x-www-form-urlencoded":
            raise _OAuthError("invalid_request", f"the body must be form-encoded, not {content_type!r}")
        duplicated = sorted({k for k in form if len(form.getall(k)) > 1})
        if duplicated:
            raise _OAuthError("invalid_request", f"parameters sent more than once: {', '.join(duplicated)}")
        client = self._client(request, form)
        grant_type = form.get("grant_type")
        if not grant_type:
            raise _OAuthError("invalid_request", "grant_type is missing")
        if grant_type != "authorization_code":
            raise _OAuthError("unsupported_grant_type", f"grant_type {grant_type!r} is not served")
        for name in ("code", "redirect_uri", "code_verifier"):
            if not form.get(name):
                raise _OAuthError("invalid_request", f"{name} is missing")
        verifier = form["code_verifier"]
        if not _VERIFIER.fullmatch(verifier):
            raise _OAuthError("invalid_request", "code_verifier must be 43-128 unreserved characters")
        grant = self._grants.get(form["code"])
        if grant is None or grant.client_id != client.client_id:
            raise _OAuthError("invalid_grant", "invalid code")
        if grant.used:
            # §4.1.2: a code used twice may have leaked; what it was exchanged for is revoked.
            for token in grant.tokens:
                self._tokens[token].revoked = True
            raise _OAuthError("invalid_grant", "the code was used already")
        grant.used = True
        if time.monotonic() > grant.expires_at:
            raise _OAuthError("invalid_grant", "the code expired")
        if form["redirect_uri"] != grant.redirect_uri:
            raise _OAuthError("invalid_grant", "redirect_uri does not match the authorization request's")
        if not secrets.compare_digest(s256(verifier), grant.challenge):
            raise _OAuthError("invalid_grant", "code_verifier does not match the code_challenge")
        token = self._new_token(client.client_id, grant.user, grant.scopes)
        grant.tokens.append(token)
        return token, grant.scopes

    def _token_answer(self, issued: tuple[str, tuple[str, ...]]) -> web.Response:
        token, scopes = issued
        body = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": int(TOKEN_LIFETIME.total_seconds()),
            "refresh_token": secrets.token_urlsafe(30),
            "scope": " ".join(scopes),
        }
        return web.json_response(body, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})

    # -- who a token is ---------------------------------------------------------------------------------------

    def _bearer(self, request: web.Request, path: str) -> _AccessToken | web.Response:
        """The live token the request carries, with a scope the document's operation accepts; else Discord's 401."""
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        found = self._tokens.get(token) if scheme == "Bearer" else None
        if found is None or found.revoked or found.expires_at <= datetime.now(UTC):
            return web.json_response({"code": 0, "message": "401: Unauthorized"}, status=401)
        op = self.spec.match("GET", path)
        assert op is not None, f"the document has no GET {path}"
        security = self.spec.document["paths"][op.template]["get"].get("security", [])
        accepted = {scope for entry in security for scope in entry.get("OAuth2", [])}
        if not accepted & set(found.scopes):
            return web.json_response({"code": 0, "message": "401: Unauthorized"}, status=401)
        return found

    def _checked(self, path: str, body: dict[str, Any]) -> web.Response:
        op = self.spec.match("GET", path)
        assert op is not None
        errors = self.spec.validate_response(op, 200, body)
        if errors:
            message = "the fake answered against the document: " + "; ".join(map(str, errors))
            self.violations.append(Violation("response-schema", "GET", path, message, op.operation_id))
        return web.Response(body=json.dumps(body).encode(), content_type="application/json")

    async def users_me(self, request: web.Request) -> web.Response:
        found = self._bearer(request, "/users/@me")
        if isinstance(found, web.Response):
            return found
        return self._checked("/users/@me", private_user_payload(found.user))

    async def oauth2_me(self, request: web.Request) -> web.Response:
        found = self._bearer(request, "/oauth2/@me")
        if isinstance(found, web.Response):
            return found
        client = self.clients.get(found.client_id)
        body: dict[str, Any] = {
            "application": {
                "id": found.client_id,
                "name": client.name if client else "Another app",
                "icon": None,
                "description": "",
                "type": None,
                "bot_public": False,
                "bot_require_code_grant": False,
                "verify_key": "0" * 64,
                "flags": 0,
                "flags_new": "0",
            },
            "scopes": list(found.scopes),
            "expires": found.expires_at.isoformat(),
        }
        if "identify" in found.scopes:
            body["user"] = user_payload(found.user)
        return self._checked("/oauth2/@me", body)
