"""Issue 27's "done when", in a real browser: a competitor signs in with (the fake) Discord, opens a problem, writes
a correct and a wrong solution in the page's editor (pasted into CodeMirror, then typed in), submits both, watches
each run's phases arrive live, lands on each result, finds the correct one on the board, and opens their own
competitor's page. On the way, another language's starter loads into the untouched editor, a loaded file replaces
the code and sets its language, and a refusal of the API shows in its own words; last, the page at a phone's
width, with the editor still usable.

Everything is real and local: the distribution's headless Chromium driven by Selenium, the web app, the API
service the web forwards to (it accepts the submissions and serves their events), a second API process that
dispatches (`arena api`, as in tests/store/fleet_processes.py) to a CPU runner that joined the `cpu` pool, and
PostgreSQL. Python solutions run on the CPU, so no GPU is needed.

Set ARENA_WEB_EDITOR_SCREENSHOTS=docs to keep docs/web-editor.png (the problem page with the editor),
docs/web-editor-running.png (a run followed live), docs/web-result.png (the correct run's result page) and
docs/web-competitor.png (the competitor's page, opened from their row on the board).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg

from core.settings import Settings
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.store.fleet_processes import RATES, fleet_on, start_fleet
from tests.store.store_helpers import add_problems
from tests.web.signin_helpers import NELLY, signin_stack
from tests.web.test_browser import _require_browser

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

ROOT = Path(__file__).resolve().parents[2]
CORRECT = """import torch


def solution(input_a, input_b, output_c, n):
    torch.add(input_a, input_b, out=output_c)
"""
# Wrong on the largest case only (a difference, not a sum), and slow enough that its run is seen while it runs:
# the first two cases pass, live, before the third fails.
WRONG = """import time

import torch


def solution(input_a, input_b, output_c, n):
    time.sleep(0.5)
    if n > 60000:
        torch.sub(input_a, input_b, out=output_c)
    else:
        torch.add(input_a, input_b, out=output_c)
"""
TYPED = "# typed in the editor"
CUDA_FILE = """#include <cuda_runtime.h>

extern "C" void solution(const float* a, const float* b, float* c, size_t n) {}
"""
# A run goes through a queue, a dispatcher and a CPU runner that starts a sandboxed worker: generous on a busy host.
RUN_TIMEOUT_S = 300
# Ranked runs answered host_busy ("too busy to rank this run; run it again") are submitted again this many times.
BUSY_RETRIES = 2
PHONE = (390, 844)


@dataclass
class Run:
    """One submission as the browser saw it: the live panel's phases, the events the page received (kept by the
    script in sessionStorage), and the result page it landed on."""

    submission_id: int
    phases: list[str]
    events: list[str]
    result_url: str
    result_text: str
    cases: list[list[str]]


@dataclass
class Visit:
    editor_source: str
    correct: Run
    wrong: Run
    cuda_starter: str
    uploaded_language: str
    refusal: str
    board_rows: list[list[str]]
    competitor_url: str
    competitor_heading: str
    phone: dict[str, float]
    phone_source: str
    csp_errors: list[str]


def _driver(browser: str, driver_path: str) -> WebDriver:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    # --no-sandbox: Chromium's sandbox refuses to run as root, which CI is; the pages are our own.
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=options)


def _wait(driver: WebDriver, timeout_s: float, condition, what: str):  # type: ignore[no-untyped-def]
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.wait import WebDriverWait

    try:
        return WebDriverWait(driver, timeout_s, poll_frequency=0.05).until(condition)
    except TimeoutException:
        seen = f"at {driver.current_url}; the page: {driver.page_source[-3000:]}"
        raise AssertionError(f"{what} within {timeout_s:.0f} s {seen}") from None


# The editor is in a shadow root (its styles must be, under the CSP): found through its host.
EDITOR_CONTENT = "return document.querySelector('.editor-host')?.shadowRoot?.querySelector('.cm-content')"


def _editor_ready(driver: WebDriver) -> None:
    _wait(driver, 30, lambda d: d.execute_script(EDITOR_CONTENT), "the editor did not start")


def _content(driver: WebDriver):  # type: ignore[no-untyped-def]
    return driver.execute_script(EDITOR_CONTENT)


def _paste(driver: WebDriver, text: str) -> None:
    """Select everything in the editor and paste `text` over it, as Ctrl+A then Ctrl+V with `text` on the clipboard
    would (the clipboard itself is out of reach of a headless browser; the paste event is the same)."""
    from selenium.webdriver.common.keys import Keys

    content = _content(driver)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", content)
    content.click()
    content.send_keys(Keys.CONTROL, "a")
    driver.execute_script(
        "const data = new DataTransfer(); data.setData('text/plain', arguments[1]);"
        "const paste = new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true});"
        "arguments[0].dispatchEvent(paste);",
        content,
        text,
    )


def _type_at_end(driver: WebDriver, text: str) -> None:
    from selenium.webdriver.common.keys import Keys

    content = _content(driver)
    content.send_keys(Keys.CONTROL, Keys.END)
    content.send_keys(Keys.ENTER, text)


def _form_source(driver: WebDriver) -> str:
    """What the form will send: the textarea the editor keeps in step with its text."""
    return driver.execute_script("return document.querySelector('textarea[name=source]').value")


def _choose(driver: WebDriver, name: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.NAME, name)).select_by_value(value)


def _submit_and_follow(driver: WebDriver, shots: dict[str, bytes], running_shot: str | None = None) -> Run:
    """Press Submit, watch the run's panel until its result, then the result page it lands on."""
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, "#submit-form button[type=submit]").click()
    panel = _wait(driver, 60, lambda d: d.find_element(By.ID, "run") if d.find_element(By.ID, "run").is_displayed()
                  else False, "the run's panel did not open")  # fmt: skip
    submission_id = int(_wait(driver, 60, lambda d: panel.get_attribute("data-submission"), "no submission id"))
    if running_shot is not None:
        # On screen while it runs: once two cases have come in, before the result.
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while time.monotonic() < deadline and panel.get_attribute("data-finished") != "true":
            if len(panel.find_elements(By.CSS_SELECTOR, "ol.phases li.case")) >= 2:
                break
            time.sleep(0.05)
        driver.execute_script("arguments[0].scrollIntoView({block: 'end'})", panel)
        shots[running_shot] = driver.get_screenshot_as_png()
    _wait(driver, RUN_TIMEOUT_S, lambda d: panel.get_attribute("data-finished") == "true", "the run did not finish")
    phases = [li.text for li in panel.find_elements(By.CSS_SELECTOR, "ol.phases li")]
    _wait(driver, 30, lambda d: d.current_url.endswith(f"/submissions/{submission_id}"), "no result page")
    _wait(driver, 30, lambda d: d.find_element(By.TAG_NAME, "h1").text == f"Submission #{submission_id}",
          "the result page did not show")  # fmt: skip
    events = json.loads(driver.execute_script(f"return sessionStorage.getItem('arena-run-{submission_id}')") or "[]")
    cases = [
        [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        for row in driver.find_elements(By.CSS_SELECTOR, "table.tests tbody tr")
    ]
    return Run(submission_id, phases, events, driver.current_url, driver.find_element(By.TAG_NAME, "main").text, cases)


def compete(base_url: str, browser: str, driver_path: str, upload_file: Path, shots: dict[str, bytes]) -> Visit:
    """The whole visit, as a competitor makes it (`upload_file` is the file they load into the editor); `shots`
    gets the screenshots as they are taken."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions

    driver = _driver(browser, driver_path)
    try:
        problem_url = base_url + "problems/vector_add"
        driver.get(problem_url)
        driver.find_element(By.LINK_TEXT, "Sign in to submit").click()  # Discord approves at once (the fake)
        # Back on the problem's page, under its own name or its canonical one (the page links the canonical).
        canonical = base_url + "problems/vector-addition"
        _wait(driver, 60, lambda d: d.current_url in (problem_url, canonical), "the sign-in did not come back")
        _editor_ready(driver)

        # The correct solution, ranked: pasted over the starter, then a line typed at its end.
        _choose(driver, "mode", "ranked")
        _paste(driver, CORRECT)
        _type_at_end(driver, TYPED)
        editor_source = _form_source(driver)
        driver.execute_script("window.scrollTo(0, 0)")  # the problem's title, then the form
        shots["web-editor.png"] = driver.get_screenshot_as_png()
        correct = _submit_and_follow(driver, shots)
        for _ in range(BUSY_RETRIES):
            if "host_busy" not in correct.result_text:
                break
            # The runner was too busy to rank it (a loaded 2-core machine, a browser beside it): the result says to
            # run it again, and so the competitor does, with the same code.
            driver.get(problem_url)
            _editor_ready(driver)
            _choose(driver, "mode", "ranked")
            _paste(driver, editor_source)
            correct = _submit_and_follow(driver, shots)
        shots["web-result.png"] = driver.get_screenshot_as_png()

        # The wrong one, a test run, caught on screen while it runs.
        driver.get(problem_url)
        _editor_ready(driver)
        _choose(driver, "mode", "test")
        _paste(driver, WRONG)
        wrong = _submit_and_follow(driver, shots, running_shot="web-editor-running.png")

        # Another language loads its starter into the untouched editor; a file loads over it and names its
        # language; a refusal of the API is shown as it comes (profiling needs a GPU pool, and there is none).
        driver.get(problem_url)
        _editor_ready(driver)
        _choose(driver, "language", "cuda")
        _wait(driver, 30, lambda d: 'extern "C"' in _form_source(d), "the CUDA starter did not load")
        cuda_starter = _form_source(driver)
        _choose(driver, "language", "python")
        driver.find_element(By.NAME, "upload").send_keys(str(upload_file))
        _wait(driver, 30, lambda d: _form_source(d) == upload_file.read_text(), "the file did not load")
        uploaded_language = driver.find_element(By.NAME, "language").get_attribute("value")
        _choose(driver, "mode", "profile")
        driver.find_element(By.CSS_SELECTOR, "#submit-form button[type=submit]").click()
        refusal = _wait(driver, 30, lambda d: d.find_element(By.CSS_SELECTOR, ".form-error").text,
                        "the API's refusal was not shown")  # fmt: skip

        # The board of the CPU pool, and the competitor's page from their row.
        driver.get(problem_url + "?gpu=cpu")
        _wait(driver, 30, expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "table.board")),
              "no board")  # fmt: skip
        board_rows = [
            [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
            for row in driver.find_elements(By.CSS_SELECTOR, "table.board tbody tr")
        ]
        driver.find_element(By.CSS_SELECTOR, "table.board tbody").find_element(By.LINK_TEXT, NELLY.global_name).click()
        _wait(driver, 30, expected_conditions.url_contains("/users/"), "the competitor's page did not open")
        competitor = (driver.current_url, driver.find_element(By.TAG_NAME, "h1").text)
        shots["web-competitor.png"] = driver.get_screenshot_as_png()

        # A phone's width: the editor fits, the page does not scroll sideways, and typing still works.
        driver.set_window_size(*PHONE)
        driver.get(problem_url)
        _editor_ready(driver)
        phone = driver.execute_script(
            "const e = document.querySelector('.editor-host').shadowRoot.querySelector('.cm-editor')"
            ".getBoundingClientRect();"
            "const s = document.querySelector('#submit-form button[type=submit]').getBoundingClientRect();"
            "return {viewport: window.innerWidth, page: document.documentElement.scrollWidth,"
            " editor_left: e.left, editor_right: e.right, editor_height: e.height, submit_right: s.right};"
        )
        driver.execute_script("document.getElementById('submit-form').scrollIntoView()")
        shots["web-editor-phone.png"] = driver.get_screenshot_as_png()
        _paste(driver, "")
        _content(driver).send_keys("x = 1")
        phone_source = _form_source(driver)

        csp_errors = [
            entry["message"]
            for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]
        ]
        return Visit(editor_source, correct, wrong, cuda_starter, uploaded_language, refusal, board_rows, *competitor,
                     phone, phone_source, csp_errors)  # fmt: skip
    finally:
        driver.quit()


async def test_a_competitor_submits_from_the_editor_watches_both_runs_live_and_finds_the_board(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    browser, driver_path = _require_browser()
    upload_file = tmp_path / "kernel.cu"
    upload_file.write_text(CUDA_FILE)
    await add_problems(pool)
    async with fleet_on(db_dsn) as fleet:
        await start_fleet(pool, fleet, ["cpu-a"])  # dispatches what the web's API replica accepts
        async with signin_stack(pool, db_dsn, arena=Settings(rate=RATES)) as stack:
            stack.fake.approve_as(NELLY)
            shots: dict[str, bytes] = {}
            try:
                url = str(stack.client.make_url("/"))
                visit = await asyncio.to_thread(compete, url, browser, driver_path, upload_file, shots)
            finally:
                if target := os.environ.get("ARENA_WEB_EDITOR_SCREENSHOTS"):
                    for name, png in shots.items():
                        (ROOT / target / name).write_bytes(png)

    # What the form sent is what was pasted, with the line typed after it.
    assert visit.editor_source.startswith(CORRECT) and visit.editor_source.rstrip().endswith(TYPED), visit.editor_source

    # Both followed live: the panel showed each phase as the API sent it, and the page received the events in order.
    for run in (visit.correct, visit.wrong):
        assert run.events[0] == "submitted" and run.events[-1] == "result", run.events
        assert "running" in run.events and run.events.index("running") < run.events.index("result"), run.events
        assert len(run.phases) == len(run.events) and run.phases[-1].startswith("Finished:"), run.phases
    # Each case as its runner reported it, before the result: the three tests, then the three timed cases. Case
    # events are told live, not kept: a page that opened its stream late on a loaded machine may have missed the
    # first ones of a fast run, so the correct run's must come in order; the wrong run's (half a second a case) all.
    expected = ["Test 1 of 3 (n=7)", "Test 2 of 3 (n=1000)", "Test 3 of 3 (n=65539)",
                "Timed 1 of 3 (n=7)", "Timed 2 of 3 (n=1000)", "Timed 3 of 3 (n=65539)"]  # fmt: skip
    correct_cases = [p.split(":")[0] for p in visit.correct.phases if p.startswith(("Test ", "Timed "))]
    assert correct_cases and correct_cases == [c for c in expected if c in correct_cases], visit.correct.phases
    assert visit.correct.phases[-1] == "Finished: passed."
    assert visit.wrong.phases[-1] == "Finished: failed.", visit.wrong.phases
    wrong_cases = [p for p in visit.wrong.phases if p.startswith("Test ")]
    assert wrong_cases == ["Test 1 of 3 (n=7): passed.", "Test 2 of 3 (n=1000): passed.",
                           "Test 3 of 3 (n=65539): failed."], visit.wrong.phases  # fmt: skip

    # The result pages: the correct run passed every case and was scored; the wrong one names its failed case.
    correct_page = visit.correct.result_text
    assert "Tests: 3 of 3 passed." in correct_page and "Score:" in correct_page, correct_page
    assert all(verdict == "passed" for _, verdict, *_ in visit.correct.cases) and len(visit.correct.cases) == 3
    assert TYPED in correct_page  # its author sees the code
    assert "wrong_answer" in visit.wrong.result_text and [c[1] for c in visit.wrong.cases] == [
        "passed",
        "passed",
        "failed",
    ], visit.wrong

    # The starter follows the language; a loaded file replaces the code and sets its language; the API's refusal
    # reaches the page in its own words.
    assert 'extern "C" void solution(' in visit.cuda_starter and "def solution" not in visit.cuda_starter
    assert visit.uploaded_language == "cuda"
    assert visit.refusal.startswith("Profiling needs Nsight Compute on a GPU"), visit.refusal

    # On the board: the correct run, the competitor's only ranked one, linked from their row to their page.
    nelly_rows = [row for row in visit.board_rows if row[1] == NELLY.global_name]
    assert len(nelly_rows) == 1 and f"#{visit.correct.submission_id}" in nelly_rows[0], visit.board_rows
    assert visit.competitor_heading == NELLY.global_name and "/users/" in visit.competitor_url

    # At a phone's width the editor fits in the screen and the page does not scroll sideways; typing still works.
    phone = visit.phone
    assert phone["viewport"] <= PHONE[0] and phone["page"] <= phone["viewport"], phone
    assert 0 <= phone["editor_left"] and phone["editor_right"] <= phone["viewport"], phone
    assert phone["submit_right"] <= phone["viewport"] and phone["editor_height"] >= 200, phone
    assert visit.phone_source == "x = 1"

    # The CSP (script-src 'self', no inline style) refused nothing the editor needs.
    assert visit.csp_errors == []
