"""The pages in a real browser: the distribution's headless Chromium, driven by Selenium through its chromedriver.

Skipped, saying why, only where Chromium or its driver is missing; CI installs both (scripts/setup-browser.sh),
and there a missing browser fails the test instead, so that the browser test cannot quietly stop running.
Set ARENA_WEB_SCREENSHOT=docs/web-board.png to keep a screenshot of the board page, and
ARENA_WEB_CONTEST_SCREENSHOT=docs/web-contest.png one of the contest page.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg
import pytest
from aiohttp.test_utils import TestClient

from tests.web.web_helpers import FROZEN_AT, HOSTILE, Clock, Seeded, seed_contest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser")


def _browser() -> tuple[str, str] | None:
    """(Chromium, chromedriver) from PATH, or None."""
    browser = next((found for name in BROWSERS if (found := shutil.which(name))), None)
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def _require_browser() -> tuple[str, str]:
    found = _browser()
    reason = "needs Chromium and chromedriver on PATH (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        found, reason = None, "needs selenium (pip install -e '.[dev]' in the checkout)"
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: it {reason}; scripts/setup-browser.sh installs them")
        pytest.skip(reason)
    return found


@dataclass(frozen=True)
class Visit:
    list_title: str
    board_heading: str
    rows: list[list[str]]
    screenshot: bytes


def _driver(browser: str, driver_path: str) -> WebDriver:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    # --no-sandbox: Chromium's sandbox refuses to run as root, which CI is; the pages are our own.
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=options)


def _follow(driver: WebDriver, link_text: str, table_css: str) -> list[list[str]]:
    """Click the link as a reader would, wait for the table, and read its body's rows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    driver.find_element(By.LINK_TEXT, link_text).click()
    WebDriverWait(driver, 30).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, table_css)))
    return [
        [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        for row in driver.find_elements(By.CSS_SELECTOR, f"{table_css} tbody tr")
    ]


def browse_to_board(base_url: str, browser: str, driver_path: str, slug: str) -> Visit:
    """Open the problem list, follow the problem's link as a reader would, and read the board's rows."""
    from selenium.webdriver.common.by import By

    driver = _driver(browser, driver_path)
    try:
        driver.get(base_url)
        list_title = driver.title
        rows = _follow(driver, slug, "table.board")
        heading = driver.find_element(By.TAG_NAME, "h1").text
        return Visit(list_title, heading, rows, driver.get_screenshot_as_png())
    finally:
        driver.quit()


def browse_to_contest(base_url: str, browser: str, driver_path: str, title: str) -> Visit:
    """From the home page, follow the header's Contests link, then the contest's, and read its board's rows."""
    from selenium.webdriver.common.by import By

    driver = _driver(browser, driver_path)
    try:
        driver.get(base_url)
        _follow(driver, "Contests", "table.contests")
        list_title = driver.title
        rows = _follow(driver, title, "table.contest-board")
        heading = driver.find_element(By.TAG_NAME, "h1").text
        return Visit(list_title, heading, rows, driver.get_screenshot_as_png())
    finally:
        driver.quit()


async def test_a_reader_follows_a_problem_link_to_its_board_and_reads_the_rows(
    client: TestClient, seeded: Seeded
) -> None:
    browser, driver = _require_browser()
    visit = await asyncio.to_thread(browse_to_board, str(client.make_url("/")), browser, driver, "vector_add")
    assert visit.list_title == "Problems · Kernel Arena"
    assert visit.board_heading.endswith("(vector_add)")
    # Rank, user, score, runtime, language, submission: the hostile name shows as the text it is.
    assert [row[:6] for row in visit.rows] == [
        ["1", "bob", "50", "1.000 µs", "cuda", f"#{seeded.ranked['bob']}"],
        ["2", "carol", "40", "1.000 µs", "triton", f"#{seeded.ranked['carol']}"],
        ["3", "alice", "30", "1.000 µs", "python", f"#{seeded.ranked['alice']}"],
        ["4", HOSTILE, "20", "1.000 µs", "cuda", f"#{seeded.ranked[HOSTILE]}"],
    ]
    assert visit.screenshot.startswith(b"\x89PNG")
    if target := os.environ.get("ARENA_WEB_SCREENSHOT"):
        (ROOT / target).write_bytes(visit.screenshot)


async def test_a_reader_follows_the_contests_link_to_a_frozen_contest_and_reads_its_board(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    browser, driver = _require_browser()
    await seed_contest(pool, freeze=True)
    clock.at = FROZEN_AT
    visit = await asyncio.to_thread(browse_to_contest, str(client.make_url("/")), browser, driver, "Spring sprint")
    assert visit.list_title == "Contests · Kernel Arena"
    assert visit.board_heading == "Spring sprint (spring)"
    # Place, user, total, then rank · score in each column (vector_add, matmul on h100/float32).
    assert visit.rows == [
        ["1", "bob", "2", "1 · 80", "1 · 40"],
        ["2", "alice", "4", "2 · 50", "2 · 30"],
        ["3", "carol", "6", "3 · 40", "3 · -"],
        ["4", HOSTILE, "7", "4 · 20", "3 · -"],
    ]
    assert visit.screenshot.startswith(b"\x89PNG")
    if target := os.environ.get("ARENA_WEB_CONTEST_SCREENSHOT"):
        (ROOT / target).write_bytes(visit.screenshot)
