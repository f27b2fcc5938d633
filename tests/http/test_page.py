"""The playground page in a real browser (headless Debian chromium) against ``boaf serve``.

Needs ``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` (``.ci/run`` installs them with
apt-get); skipped without them. Screenshots go to ``out/browser/`` (gitignored).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_client import Client, boaf_serve

import search
from game import deal

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "out" / "browser"
PAGE_TOKEN = "page-token-1"
WAIT_S = 300  # generous: a cold numba cache compiles on a shared machine
SERVER_ENV = {"BOAF_SOLVE_TIME_LIMIT_MS": str(WAIT_S * 1000), "BOAF_LOG_LEVEL": "WARNING"}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,900",
]

# On a developer's machine without a browser the page tests skip; CI (``.ci/run``, CI=true) installs
# one, so there a missing browser is a failure, never a silent skip.
pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()) and not os.environ.get("CI"),
    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """``boaf serve`` on free loopback ports; its HTTP address, read from the line it prints when ready."""
    with boaf_serve(env=SERVER_ENV) as line:
        found = re.search(r"HTTP on (http://[\d.]+:\d+)/", line)
        assert found, line
        yield found.group(1)


@pytest.fixture(scope="module")
def token_url() -> Iterator[str]:
    """``boaf serve`` with bearer tokens on (``PAGE_TOKEN``)."""
    with boaf_serve(env={**SERVER_ENV, "BOAF_API_TOKENS": PAGE_TOKEN}) as line:
        found = re.search(r"HTTP on (http://[\d.]+:\d+)/", line)
        assert found, line
        yield found.group(1)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


@pytest.fixture
def page(browser: WebDriver, base_url: str) -> WebDriver:
    browser.get(base_url + "/")
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#board .card"))
    return browser


def wait(driver: WebDriver) -> WebDriverWait[WebDriver]:
    return WebDriverWait(driver, WAIT_S)


def text_of(driver: WebDriver, element_id: str) -> str:
    return str(driver.find_element(By.ID, element_id).text)


def screenshot(driver: WebDriver, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def enter(driver: WebDriver, field: str, text: str, button: str) -> None:
    box = driver.find_element(By.ID, field)
    box.clear()
    box.send_keys(text)
    driver.find_element(By.ID, button).click()


def played(driver: WebDriver) -> int:
    return int(driver.find_element(By.ID, "board").get_attribute("data-played") or 0)


def test_the_winning_line_of_367297990_played_by_clicking_wins(page: WebDriver) -> None:
    enter(page, "seed", "367297990", "deal")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 367297990.")
    line = search.solve(deal(367297990)).moves
    for number, move in enumerate(line, start=1):
        source, target = move.split("-")
        page.find_element(By.CSS_SELECTOR, f"#board [data-card='{source}']").click()
        page.find_element(By.CSS_SELECTOR, f"#board [data-card='{target}']").click()
        wait(page).until(lambda d, n=number: played(d) == n)  # type: ignore[misc]
    assert text_of(page, "status") == "You won: one stack left."
    assert len(page.find_elements(By.CSS_SELECTOR, "#board .card")) == 1
    screenshot(page, "won")
    page.find_element(By.ID, "undo").click()
    wait(page).until(lambda d: played(d) == len(line) - 1)
    assert len(page.find_elements(By.CSS_SELECTOR, "#board .card")) == 2


def test_360528_is_marked_unsolvable_after_solve(page: WebDriver) -> None:
    enter(page, "seed", "360528", "deal")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 360528.")
    page.find_element(By.ID, "solve").click()
    wait(page).until(lambda d: text_of(d, "status").startswith("Unsolvable"))
    screenshot(page, "unsolvable")


def test_a_bad_grid_shows_the_servers_message(page: WebDriver, base_url: str) -> None:
    grid = "5S 7D/5S 2C"
    state = {"rows": 2, "cols": 2, "cells": grid.replace("/", " ").split()}
    message = Client(base_url).call("Game/Play", {"state": state}).body["message"]
    assert message == "state: duplicate card 5S at row 2, column 1 (first at row 1, column 1)"
    enter(page, "grid", grid, "load-grid")
    wait(page).until(lambda d: text_of(d, "error") == message)
    screenshot(page, "bad-grid")


def test_an_illegal_click_is_refused_with_the_servers_message(page: WebDriver) -> None:
    enter(page, "seed", "360528", "deal")  # 5S 7D QS 2C / ...: 5S and 7D share a row, not a suit or rank
    wait(page).until(lambda d: text_of(d, "status") == "Deal 360528.")
    page.find_element(By.CSS_SELECTOR, "#board [data-card='5S']").click()
    page.find_element(By.CSS_SELECTOR, "#board [data-card='7D']").click()
    wait(page).until(lambda d: "is not legal" in text_of(d, "error"))
    assert text_of(page, "error") == (
        "move 1 of 1: move '5S-7D' is not legal: the cards share no suit and their ranks are not adjacent"
    )
    assert played(page) == 0


def test_moves_are_judged_and_a_puzzle_shows_its_ratio_chart(page: WebDriver) -> None:
    enter(page, "seed", "2", "deal")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 2.")
    wait(page).until(lambda d: "checking" not in text_of(d, "moves"))
    verdicts = [v.text for v in page.find_elements(By.CSS_SELECTOR, "#moves .verdict")]
    assert verdicts and all(v.endswith(("(exact)", "(classifier estimate)")) for v in verdicts)
    enter(page, "cards", "6", "generate")
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#depths tbody tr"))
    assert len(page.find_elements(By.CSS_SELECTOR, "#chart rect")) == len(
        page.find_elements(By.CSS_SELECTOR, "#depths tbody tr")
    )
    page.set_window_size(1200, 1250)  # the whole page, chart included (docs/playground.png is one of these)
    screenshot(page, "puzzle")
    page.set_window_size(1200, 900)


def test_the_keyboard_plays_and_cards_have_text_alternatives(page: WebDriver) -> None:
    enter(page, "seed", "367297990", "deal")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 367297990.")
    labels = [card.get_attribute("aria-label") for card in page.find_elements(By.CSS_SELECTOR, "#board .card")]
    assert labels[0] == "5 of spades, row 1, column 1"
    assert len(labels) == 16 and all(labels)
    first = search.solve(deal(367297990)).moves[0]
    for card in first.split("-"):
        page.find_element(By.CSS_SELECTOR, f"#board [data-card='{card}']").send_keys(Keys.ENTER)
    wait(page).until(lambda d: played(d) == 1)
    assert "(first at" not in text_of(page, "error") and text_of(page, "status") == f"Played {first}."


def test_the_solution_is_played_move_by_move_to_the_win(page: WebDriver) -> None:
    enter(page, "seed", "367297990", "deal")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 367297990.")
    page.find_element(By.ID, "solve").click()
    wait(page).until(lambda d: text_of(d, "status").startswith("Winnable: 15 moves"))
    page.find_element(By.ID, "play-solution").click()
    wait(page).until(lambda d: text_of(d, "status") == "You won: one stack left.")
    assert played(page) == 15


def test_with_tokens_on_the_page_asks_for_one_keeps_it_for_the_tab_and_plays(
    browser: WebDriver, token_url: str
) -> None:
    browser.get(token_url + "/")
    wait(browser).until(lambda d: d.find_element(By.ID, "token-form").is_displayed())
    assert text_of(browser, "token-note") == "This server needs an access token."
    assert not browser.find_elements(By.CSS_SELECTOR, "#board .card")
    enter(browser, "token", "not-the-token", "use-token")
    wait(browser).until(lambda d: text_of(d, "token-note") == "That token was refused; enter another.")
    enter(browser, "token", PAGE_TOKEN, "use-token")
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#board .card"))
    assert not browser.find_element(By.ID, "token-form").is_displayed()
    assert browser.execute_script("return sessionStorage.getItem('boaf-token')") == PAGE_TOKEN
    screenshot(browser, "token")
    browser.refresh()  # the tab keeps its token: no question this time
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#board .card"))
    enter(browser, "seed", "360528", "deal")
    wait(browser).until(lambda d: text_of(d, "status") == "Deal 360528.")
    assert not browser.find_element(By.ID, "token-form").is_displayed()
