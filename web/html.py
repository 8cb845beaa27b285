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
    return Html(f'<table class="{esc(css)}">{thead}<tbody>{body}</tbody></table>')


_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
header { background: #1d2330; padding: .6rem 1.5rem; display: flex; gap: 1.4rem; align-items: baseline; }
header a { color: #fff; font-weight: 600; text-decoration: none; }
header nav a { font-weight: 400; margin-right: 1rem; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: .8rem 0 .3rem; } h2 { font-size: 1.15rem; margin: 1.6rem 0 .4rem; }
.meta { color: #555; margin: 0 0 .8rem; }
table { border-collapse: collapse; margin: .4rem 0 1rem; background: #fff; }
th, td { border-bottom: 1px solid #e2e2e2; padding: .3rem .7rem; text-align: left; vertical-align: top; }
th { background: #f0f1f4; font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .88em; }
pre { background: #fff; border: 1px solid #e2e2e2; padding: .6rem .8rem; overflow-x: auto; }
form.filters { display: flex; gap: .8rem; align-items: end; flex-wrap: wrap; margin: .4rem 0 .6rem; }
form.filters label { display: flex; flex-direction: column; font-size: .85rem; color: #444; }
.pager { display: flex; gap: 1.2rem; } .closed { color: #a33; } .note { color: #555; font-style: italic; }
.easy { color: #227a22; } .medium { color: #a0700b; } .hard { color: #b22; }
.running { color: #227a22; font-weight: 600; } .cancelled { color: #a33; } .penalty { color: #888; }
table.contest-board td.num a { text-decoration: none; } ol.podium { font-size: 1.05rem; }
img.chart { max-width: 100%; border: 1px solid #e2e2e2; background: #fff; }
"""

_LAYOUT = Template("""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title · Kernel Arena</title>
<style>$style</style>
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


# The header's account slot for the request being answered: "Sign in with Discord" or "<name> · Sign out", set
# per request by web/signin.py's middleware; empty while sign-in is off.
HEADER_ACCOUNT: ContextVar[Html] = ContextVar("header_account", default=Html(""))


def page(title: str, body: Html) -> str:
    """A whole document: `title` (escaped) in the tab and the layout around `body`."""
    return _LAYOUT.substitute(title=esc(title), style=_STYLE, body=body, account=HEADER_ACCOUNT.get())
