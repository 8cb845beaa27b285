"""HTML from the standard library: escaping that is hard to forget, a table, and the page layout.

Text becomes HTML only through `esc` (or `prose`, which escapes first); both return `Html`, a str that the
helpers here pass through unchanged, while any other str they are given is escaped. So a display name, a file
name or a title can only reach a page escaped, wherever a render function forgets to.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from string import Template


class Html(str):
    """Markup that is safe to put in a page as it is: escaped text, or tags built around escaped text.

    Adding a plain str to it escapes that str: `Html("<p>") + name` cannot inject markup.
    """

    __slots__ = ()

    def __add__(self, other: str) -> Html:
        return Html(str.__add__(self, esc(other)))

    def __radd__(self, other: str) -> Html:
        return Html(str.__add__(esc(other), self))


def esc(text: object) -> Html:
    """`text` escaped for an element's content or a quoted attribute value (already-safe `Html` is kept)."""
    if isinstance(text, Html):
        return text
    return Html(html.escape(str(text), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Html:
    return Html(esc(sep).join(esc(p) for p in parts))


_CODE = re.compile(r"`([^`]+)`")


def prose(text: str) -> Html:
    """A core message or description as HTML: escaped, with `backticked` spans as <code> (the core writes its
    messages for Discord's markdown)."""
    return Html(_CODE.sub(r"<code>\1</code>", esc(text)))


def link(href: str, text: object) -> Html:
    return Html(f'<a href="{esc(href)}">{esc(text)}</a>')


def path_with(path: str, params: Mapping[str, object | None]) -> str:
    """`path?query` from the parameters that are set (their values are encoded; escape the result for HTML)."""
    query = urllib.parse.urlencode({k: str(v) for k, v in params.items() if v is not None})
    return f"{path}?{query}" if query else path


def table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], *, numeric: Sequence[int] = (), css: str = ""
) -> Html:
    """A table; columns whose index is in `numeric` are aligned right. Cells that are not `Html` are escaped."""
    head = "".join(f"<th{' class=num' if i in numeric else ''}>{esc(h)}</th>" for i, h in enumerate(headers))
    thead = f"<thead><tr>{head}</tr></thead>" if any(headers) else ""  # a two-column list of facts has none
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=num' if i in numeric else ''}>{esc(c)}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    # In a box that scrolls sideways on a narrow screen, the page itself staying as wide as the screen; the box takes
    # keyboard focus (tabindex), so that a keyboard can scroll it too.
    inner = f'<table class="{esc(css)}">{thead}<tbody>{body}</tbody></table>'
    return Html(f'<div class="scroll" tabindex="0">{inner}</div>')


_LAYOUT = Template("""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title · Kernel Arena</title>
<link rel="stylesheet" href="$stylesheet">
</head>
<body>
<header><a href="/">Kernel Arena</a>
<nav><a href="/">Problems</a><a href="/contests">Contests</a><a href="/ratings">Ratings</a></nav>$account</header>
<main>
$body
</main>
</body>
</html>
""")


# The style sheet, a file served by the app (web/static/arena.css): the Content-Security-Policy allows no inline
# style. Its query names its version, so that a browser that kept an older copy fetches the new one.
STYLESHEET = "/static/arena.css?v=4"


# The header's account slot for the request being answered: "Sign in with Discord" or "<name> · Sign out", set
# per request by web/signin.py's middleware; empty while sign-in is off.
NO_ACCOUNT = Html("")
HEADER_ACCOUNT: ContextVar[Html] = ContextVar("header_account", default=NO_ACCOUNT)


def page(title: str, body: Html) -> str:
    """A whole document: `title` (escaped) in the tab and the layout around `body`."""
    return _LAYOUT.substitute(title=esc(title), stylesheet=STYLESHEET, body=body, account=HEADER_ACCOUNT.get())
