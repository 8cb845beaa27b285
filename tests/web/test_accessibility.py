"""Every page of the web, read by axe-core in headless Chromium: no serious or critical accessibility violation.

axe-core is vendored (tests/web/vendor/axe-core, its version and digest in VENDORED.md) and injected by the driver
into each page after it loaded; the pages themselves never load it, and their CSP stays `script-src 'self'`. The
pages are the ones a reader meets (problem list and its filters, a problem's board, a submission, the contests, a
contest board and its upsolve board, the ratings, a competitor, a page that is not there), seeded with a hostile
user name, and the problem page a signed-in member sees, with its submit form and editor, at desktop and phone
width. Skips, saying why, only where Chromium or chromedriver is missing outside CI, as tests/web/test_browser.py.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg
from aiohttp.test_utils import TestClient

from tests.web.signin_helpers import NELLY, session_cookie, sign_in, signin_stack
from tests.web.test_browser import _driver, _require_browser
from tests.web.web_helpers import FROZEN_AT, Clock, Seeded, seed_contest
from web.session import SESSION_COOKIE

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
# What fails the test: axe's two highest impacts. "moderate" and "minor" findings are printed, not failed.
FAILING = ("serious", "critical")
PHONE = (390, 844)


@dataclass(frozen=True)
class Finding:
    page: str
    rule: str
    impact: str
    help: str
    targets: list[str]

    def __str__(self) -> str:
        return f"{self.page}: {self.impact} {self.rule} ({self.help}) at {', '.join(self.targets[:5])}"


def _audit(driver: WebDriver, page: str) -> list[Finding]:
    """axe's violations on the page the driver shows now."""
    driver.execute_script(AXE.read_text(encoding="utf-8"))
    driver.set_script_timeout(60)
    result: dict[str, Any] = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then(r => done({violations: r.violations}), e => done({error: String(e)}));"
    )
    assert "error" not in result, f"axe failed on {page}: {result.get('error')}"
    return [
        Finding(page, v["id"], v["impact"] or "unknown", v["help"], [str(n["target"]) for n in v["nodes"]])
        for v in result["violations"]
    ]


@dataclass(frozen=True)
class Audit:
    pages: list[str]  # each page axe read, with its width
    findings: list[Finding]


def audit_pages(base_url: str, paths: list[str], browser: str, driver_path: str, cookie: str | None = None) -> Audit:
    """Open each path (at desktop width, then at phone width) and collect axe's findings."""
    driver = _driver(browser, driver_path)
    pages: list[str] = []
    findings: list[Finding] = []
    try:
        if cookie is not None:
            driver.get(base_url)  # a cookie is set for the site the driver is on
            driver.add_cookie({"name": SESSION_COOKIE, "value": cookie, "path": "/"})
        for width, height in ((1200, 900), PHONE):
            driver.set_window_size(width, height)
            for path in paths:
                driver.get(base_url.rstrip("/") + path)
                pages.append(f"{path} at {width} px")
                findings += _audit(driver, pages[-1])
    finally:
        driver.quit()
    return Audit(pages, findings)


def _failing(findings: list[Finding]) -> list[Finding]:
    for finding in findings:
        if finding.impact not in FAILING:
            print(f"axe, not failing: {finding}")
    return [f for f in findings if f.impact in FAILING]


async def test_every_public_page_has_no_serious_or_critical_accessibility_violation(
    client: TestClient, seeded: Seeded, clock: Clock, pool: asyncpg.Pool
) -> None:
    browser, driver = _require_browser()
    await seed_contest(pool, freeze=True)
    clock.at = FROZEN_AT
    bob = await pool.fetchval("SELECT user_id FROM submissions WHERE id = $1", seeded.ranked["bob"])
    paths = [
        "/",
        "/?difficulty=easy",
        "/problems/vector_add",
        f"/submissions/{seeded.ranked['bob']}",
        "/contests",
        "/contests/spring",
        "/contests/spring/upsolve",
        "/ratings",
        f"/users/{bob}",
        "/problems/no-such-problem",
    ]
    audit = await asyncio.to_thread(audit_pages, str(client.make_url("/")), paths, browser, driver)
    assert len(audit.pages) == 2 * len(paths)
    failing = _failing(audit.findings)
    assert not failing, "axe found serious or critical violations:\n" + "\n".join(map(str, failing))


async def test_the_signed_in_problem_page_with_its_editor_has_no_serious_or_critical_violation(
    pool: asyncpg.Pool, db_dsn: str, seeded: Seeded
) -> None:
    browser, driver = _require_browser()
    async with signin_stack(pool, db_dsn) as stack:
        await sign_in(stack.client, stack.fake, NELLY)
        cookie = session_cookie(stack.client)
        assert cookie is not None
        base = str(stack.client.make_url("/"))
        page = await stack.client.get("/problems/vector_add")
        assert 'id="submit-form"' in await page.text()  # the member's page, with the form axe is to read
        audit = await asyncio.to_thread(audit_pages, base, ["/problems/vector_add"], browser, driver, cookie)
    assert len(audit.pages) == 2
    failing = _failing(audit.findings)
    assert not failing, "axe found serious or critical violations:\n" + "\n".join(map(str, failing))
