"""Whole pages kept for the readers who have not signed in: rendered once per `ttl_s` and address, served to all.

Three hundred readers asking for the rating table or a busy board at once would otherwise each have it read and
rendered: the process renders a few hundred pages a second, so the last of them waited over a second. A page a
reader who has not signed in gets is the same for all of them (nothing in it depends on who reads it), so it is
rendered by one request at a time and served as it is, at most `ttl_s` plus one rendering old (`StaleWhileRevalidate`).
A reader with a session cookie always gets a page rendered for them: theirs may show their own runs and forms.

Only a 200 is kept: a 404 or 400 for an address nobody should ask for again (hostile input) is rendered each time
and never fills the cache.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp.web import AppKey, Request, Response, StreamResponse

from web.board_cache import StaleWhileRevalidate
from web.session import SESSION_COOKIE

# How many pages are kept, least recently read dropped first: each is tens of kilobytes of HTML.
PAGES_KEPT = 512


@dataclass(frozen=True)
class Rendered:
    body: bytes
    content_type: str
    charset: str | None


class NotKeptError(Exception):
    """A page that is not a 200: not kept, and rendered again for each reader who waited for it (a response can be
    sent only once)."""


PAGES: AppKey[StaleWhileRevalidate[Rendered]] = AppKey("pages")
Handler = Callable[[Request], Awaitable[StreamResponse]]


def page_cache(ttl_s: float) -> StaleWhileRevalidate[Rendered]:
    return StaleWhileRevalidate(ttl_s, size=PAGES_KEPT)


def kept(handler: Handler) -> Handler:
    """`handler`, its pages kept for readers who have not signed in (by path and query)."""

    async def serve(request: Request) -> StreamResponse:
        if request.cookies.get(SESSION_COOKIE):
            return await handler(request)

        async def render() -> Rendered:
            response = await handler(request)
            if response.status != 200 or not isinstance(response, Response) or not isinstance(response.body, bytes):
                raise NotKeptError(response.status)
            return Rendered(response.body, response.content_type, response.charset)

        try:
            page = (await request.app[PAGES].get(request.path_qs, render)).value
        except NotKeptError:
            return await handler(request)
        return Response(body=page.body, content_type=page.content_type, charset=page.charset)

    return serve
