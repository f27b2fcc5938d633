"""The playground page in a real browser (headless Debian chromium) against ``boaf serve``.

Needs ``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` (``.ci/run`` installs them with
apt-get); skipped without them. Screenshots go to ``out/browser/`` (gitignored).
"""

from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from http_client import Client, boaf_serve

from boaf import search
from boaf.game import deal

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "out" / "browser"
PAGE_TOKEN = "page-token-1"
DESKTOP, PHONE = (1366, 768), (390, 844)
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
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def serving() -> Iterator[str]:
    """``boaf serve`` on free loopback ports; the line it prints when ready."""
    with boaf_serve(env=SERVER_ENV) as line:
        yield line


@pytest.fixture(scope="module")
def base_url(serving: str) -> str:
    """The server's HTTP address."""
    found = re.search(r"HTTP on (http://[\d.]+:\d+)/", serving)
    assert found, serving
    return found.group(1)


@pytest.fixture(scope="module")
def metrics_url(serving: str) -> str:
    found = re.search(r"metrics on (\d+)", serving)
    assert found, serving
    return f"http://127.0.0.1:{found.group(1)}/metrics"


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
    viewport(browser, *DESKTOP)
    browser.get(base_url + "/")
    wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#board .card"))
    return browser


def viewport(driver: WebDriver, width: int, height: int) -> None:
    """The page's viewport exactly ``width`` x ``height`` CSS px (a phone's is a touch screen)."""
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)


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
    assert text_of(page, "status") == f"You won in {len(line)} moves: one stack left."
    assert page.find_element(By.ID, "status").get_attribute("role") == "status"  # the live region says it
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
    assert not any(v.text for v in page.find_elements(By.CSS_SELECTOR, "#moves .verdict"))  # off by default
    page.find_element(By.ID, "show-verdicts").click()
    wait(page).until(lambda d: "checking" not in text_of(d, "moves"))
    verdicts = [v.text for v in page.find_elements(By.CSS_SELECTOR, "#moves .verdict")]
    assert verdicts and all(v.endswith(("(exact)", "(estimate)")) for v in verdicts)
    enter(page, "cards", "6", "generate")
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#depths tbody tr"))
    assert len(page.find_elements(By.CSS_SELECTOR, "#chart rect")) == len(
        page.find_elements(By.CSS_SELECTOR, "#depths tbody tr")
    )
    assert not page.find_element(By.ID, "show-verdicts").is_selected()  # a puzzle's verdicts wait to be asked for
    assert not any(v.text for v in page.find_elements(By.CSS_SELECTOR, "#moves .verdict"))
    viewport(page, 1366, 1100)  # the whole page, chart included
    screenshot(page, "puzzle")


def test_the_keyboard_plays_and_cards_have_text_alternatives(page: WebDriver) -> None:
    enter(page, "seed", "367297990", "deal")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 367297990.")
    labels = [card.get_attribute("aria-label") for card in page.find_elements(By.CSS_SELECTOR, "#board .card")]
    assert labels[0] == "5♠: 5 of spades, row 1, column 1"  # the name starts with the text shown (WCAG 2.5.3)
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
    wait(page).until(lambda d: text_of(d, "status") == "You won in 15 moves: one stack left.")
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


# --- issue 22: one action at a time, any grid on any screen, clear outcomes, links, hints, access ---

# Every call the page makes from now on: its path, bytes sent and received, and how it ended
# ("pending", "ok", or the error's name: "AbortError" for an abandoned request).
COUNT_CALLS = """
window.calls = [];
performance.clearResourceTimings();
window.realFetch = window.realFetch || window.fetch;
window.fetch = async (url, init) => {
  const call = { path: String(url), sent: (init && init.body || "").length, got: 0, end: "pending" };
  window.calls.push(call);
  try {
    const response = await window.realFetch(url, init);
    call.got = (await response.clone().text()).length;
    call.end = "ok";
    return response;
  } catch (error) {
    call.end = error.name;
    throw error;
  }
};
"""
CARDS = [rank + suit for suit in "CDHS" for rank in "A23456789TJQK"]


def count_calls(driver: WebDriver) -> None:
    driver.execute_script(COUNT_CALLS)


def calls(driver: WebDriver) -> list[dict[str, Any]]:
    return list(driver.execute_script("return window.calls"))


def settled(driver: WebDriver) -> bool:
    """No call pending and no action in flight (the board is not busy, no replay runs)."""
    busy = driver.find_element(By.ID, "board").get_attribute("aria-busy") == "true"
    replaying = driver.find_element(By.ID, "play-solution").text == "Stop"
    return not busy and not replaying and all(c["end"] != "pending" for c in calls(driver))


def grid_of(rows: int, cols: int) -> str:
    cells = CARDS[: rows * cols]
    return "/".join(" ".join(cells[r * cols : (r + 1) * cols]) for r in range(rows))


def board_cells(driver: WebDriver) -> list[str]:
    # One script: the board may be redrawn between finding a card and reading it.
    return list(driver.execute_script("return [...document.querySelectorAll('#board .card')].map(c => c.dataset.card)"))


def server_cells(url: str, state: dict[str, Any], moves: list[str]) -> list[str]:
    answer = Client(url).call("Game/Play", {"state": state, "moves": moves}).body
    return [c for c in answer["state"]["cells"] if c]


def deal_state(url: str, seed: int) -> dict[str, Any]:
    return dict(Client(url).call("Game/Deal", {"seed": seed}).body)


def deal_seed(driver: WebDriver, seed: str) -> None:
    enter(driver, "seed", seed, "deal")
    wait(driver).until(lambda d: text_of(d, "status") == f"Deal {seed}.")


def solve_and_start_replay(driver: WebDriver) -> list[str]:
    deal_seed(driver, "367297990")
    driver.find_element(By.ID, "solve").click()
    wait(driver).until(lambda d: text_of(d, "status").startswith("Winnable: 15 moves"))
    driver.find_element(By.ID, "play-solution").click()
    return search.solve(deal(367297990)).moves


def played_line(driver: WebDriver) -> list[str]:
    moves = re.search(r"[?&]moves=([^&]*)", driver.current_url)
    return moves.group(1).replace("%2C", ",").split(",") if moves else []


def test_a_deal_after_a_puzzle_is_not_replaced_by_the_puzzle(page: WebDriver, base_url: str) -> None:
    count_calls(page)
    enter(page, "cards", "14", "generate")
    wait(page).until(lambda d: any(c["path"].endswith("GeneratePuzzle") for c in calls(d)))
    deal_seed(page, "1")
    wait(page).until(settled)
    generation = next(c for c in calls(page) if c["path"].endswith("GeneratePuzzle"))
    assert generation["end"] == "AbortError"  # abandoned: its answer can never be applied
    assert text_of(page, "status") == "Deal 1." and page.find_element(By.ID, "seed").get_attribute("value") == "1"
    assert board_cells(page) == deal_state(base_url, 1)["cells"]
    assert text_of(page, "board-title") == "Deal 1"


def test_play_the_solution_twice_stops_it_and_the_second_play_goes_on_to_the_win(page: WebDriver) -> None:
    solve_and_start_replay(page)
    wait(page).until(lambda d: d.find_element(By.ID, "play-solution").text == "Stop")
    page.find_element(By.ID, "play-solution").click()
    wait(page).until(lambda d: text_of(d, "status") == "Replay stopped.")
    count_calls(page)
    wait(page).until(settled)
    stopped_at = played(page)
    page.find_element(By.ID, "play-solution").click()
    wait(page).until(lambda d: text_of(d, "status") == "You won in 15 moves: one stack left.")
    assert text_of(page, "error") == "" and played(page) == 15 and stopped_at < 15


def test_undo_during_a_replay_stops_it_where_it_was(page: WebDriver, base_url: str) -> None:
    line = solve_and_start_replay(page)
    wait(page).until(lambda d: played(d) >= 2)
    count_calls(page)
    page.find_element(By.ID, "undo").click()
    wait(page).until(settled)
    played_moves = played_line(page)
    assert played_moves == line[: len(played_moves)] and played(page) == len(played_moves)
    assert board_cells(page) == server_cells(base_url, deal_state(base_url, 367297990), played_moves)
    assert text_of(page, "status") == "Move undone." and text_of(page, "error") == ""
    assert page.find_element(By.ID, "play-solution").text == "Play the solution"


def test_a_new_deal_during_a_replay_stops_it(page: WebDriver, base_url: str) -> None:
    solve_and_start_replay(page)
    wait(page).until(lambda d: played(d) >= 1)
    count_calls(page)
    deal_seed(page, "2")
    wait(page).until(settled)
    assert played(page) == 0 and board_cells(page) == deal_state(base_url, 2)["cells"]
    assert text_of(page, "status") == "Deal 2." and text_of(page, "error") == ""


def test_a_double_click_on_a_move_plays_it_once(page: WebDriver, base_url: str) -> None:
    deal_seed(page, "367297990")
    before = board_cells(page)
    first = page.find_element(By.CSS_SELECTOR, "#moves button")
    count_calls(page)
    ActionChains(page).double_click(first).perform()
    wait(page).until(lambda d: played(d) >= 1)
    wait(page).until(settled)
    assert played(page) == 1
    page.find_element(By.ID, "undo").click()
    wait(page).until(lambda d: played(d) == 0)
    assert board_cells(page) == before


LAYOUTS = {"4x4": (4, 4), "5x5": (5, 5), "4x13": (4, 13), "13x4": (13, 4), "1x8": (1, 8)}
GEOMETRY = """
const box = (e) => e.getBoundingClientRect();
const play = box(document.getElementById("play")), frame = box(document.getElementById("board-frame"));
const others = [...document.querySelectorAll(".side .panel")].map(box);
const meets = (o) => o.left < play.right && play.left < o.right && o.top < play.bottom && play.top < o.bottom;
const overlaps = others.filter(meets);
const cards = [...document.querySelectorAll("#board .card")].map(box);
return {
  scrollWidth: document.documentElement.scrollWidth, innerWidth, innerHeight,
  overlaps: overlaps.length, frameRight: frame.right, playRight: play.right, playTop: play.top,
  sideTop: Math.min(...others.map((o) => o.top)),
  boardTop: frame.top,
  cardsVisible: cards.filter((c) => c.right <= frame.right + 0.5 && c.left >= frame.left - 0.5).length,
  cards: cards.length,
  actionsBottom: Math.max(...["undo", "redo", "hint", "solve", "random"].map((id) => box(document.getElementById(id))
    .bottom)),
  statusBottom: box(document.getElementById("status")).bottom,
};
"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1366x768", "390x844"])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_every_grid_fits_the_screen(page: WebDriver, base_url: str, name: str, size: tuple[int, int]) -> None:
    rows, cols = LAYOUTS[name]
    viewport(page, *size)
    page.get(f"{base_url}/?grid={grid_of(rows, cols).replace(' ', '+')}")
    wait(page).until(lambda d: len(board_cells(d)) == rows * cols)
    shape = page.execute_script(GEOMETRY)
    screenshot(page, f"layout-{name}-{size[0]}x{size[1]}")
    assert shape["scrollWidth"] <= shape["innerWidth"], shape  # the page never scrolls sideways
    assert shape["overlaps"] == 0 and shape["frameRight"] <= shape["playRight"], shape
    assert shape["actionsBottom"] <= shape["innerHeight"] and shape["statusBottom"] <= shape["innerHeight"], shape
    if size == PHONE:
        assert shape["playTop"] < shape["sideTop"] and shape["boardTop"] < 300, shape  # the board comes first
    if (name, size) != ("4x13", PHONE):
        assert shape["cardsVisible"] == rows * cols, shape  # (a 4x13 phone board may scroll in its frame)


def test_a_win_and_a_dead_end_are_announced(page: WebDriver, base_url: str) -> None:
    page.get(f"{base_url}/?grid=AC+2C+9D")
    wait(page).until(lambda d: len(board_cells(d)) == 3)
    page.find_element(By.CSS_SELECTOR, "#moves button[data-move='AC-2C']").click()
    wait(page).until(lambda d: played(d) == 1)
    assert text_of(page, "status") == "No moves left: the deal is lost. Undo to go back."
    assert page.find_element(By.ID, "undo").is_enabled()
    screenshot(page, "lost")
    page.find_element(By.ID, "undo").click()
    wait(page).until(lambda d: played(d) == 0)
    page.get(f"{base_url}/?grid=AC+2C")
    wait(page).until(lambda d: len(board_cells(d)) == 2)
    page.find_element(By.CSS_SELECTOR, "#moves button[data-move='AC-2C']").click()
    wait(page).until(lambda d: text_of(d, "status") == "You won in 1 move: one stack left.")


def test_a_bad_seed_says_so_and_replaces_the_stale_status(page: WebDriver) -> None:
    deal_seed(page, "2")
    enter(page, "seed", "abc", "deal")
    wait(page).until(lambda d: text_of(d, "error").startswith("The seed “abc” is not a whole number"))
    assert text_of(page, "status") == ""
    screenshot(page, "bad-seed")


def test_solve_settles_the_verdicts_it_contradicts(page: WebDriver) -> None:
    deal_seed(page, "-115618")
    page.find_element(By.ID, "show-verdicts").click()
    wait(page).until(lambda d: "checking" not in text_of(d, "moves"))
    page.find_element(By.ID, "solve").click()
    wait(page).until(lambda d: text_of(d, "status").startswith("Unsolvable"))
    verdicts = [v.text for v in page.find_elements(By.CSS_SELECTOR, "#moves .verdict")]
    assert verdicts and all(v == "loses the deal (exact)" for v in verdicts)
    page.find_element(By.ID, "hint").click()
    wait(page).until(lambda d: text_of(d, "status") == "Hint: every move loses the deal (exact).")


def test_a_link_opens_its_position_and_the_url_follows_play(page: WebDriver, base_url: str) -> None:
    line = search.solve(deal(367297990)).moves
    page.get(f"{base_url}/?seed=367297990")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 367297990.")
    for number, move in enumerate(line[:2], start=1):
        page.find_element(By.CSS_SELECTOR, f"#moves button[data-move='{move}']").click()
        wait(page).until(lambda d, n=number: played(d) == n)  # type: ignore[misc]
    assert played_line(page) == line[:2] and "seed=367297990" in page.current_url
    cells = board_cells(page)
    page.get(page.current_url)
    wait(page).until(lambda d: played(d) == 2)
    opened = page.execute_script(
        "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/boaf.v1.')).length"
    )
    assert opened <= 4  # Deal, and Play of the start and of the line's end
    assert board_cells(page) == cells and page.find_element(By.ID, "seed").get_attribute("value") == "367297990"
    page.find_element(By.ID, "undo").click()
    wait(page).until(lambda d: played(d) == 1)
    page.find_element(By.ID, "redo").click()
    wait(page).until(lambda d: played(d) == 2)
    assert board_cells(page) == cells
    page.find_element(By.CSS_SELECTOR, "#history button[data-at='0']").click()
    wait(page).until(lambda d: played(d) == 0)
    assert played_line(page) == [] and page.find_element(By.ID, "redo").is_enabled()
    page.get(f"{base_url}/?grid={grid_of(2, 2).replace(' ', '+')}&moves=AC-2C")
    wait(page).until(lambda d: played(d) == 1)
    assert board_cells(page) == server_cells(base_url, {"rows": 2, "cols": 2, "cells": CARDS[:4]}, ["AC-2C"])


def test_hint_shows_one_winning_move(page: WebDriver, base_url: str) -> None:
    deal_seed(page, "367297990")
    count_calls(page)
    page.find_element(By.ID, "hint").click()
    wait(page).until(lambda d: text_of(d, "status").startswith("Hint: "))
    hint = text_of(page, "status")
    move = hint.split()[1].rstrip(",")
    assert hint.endswith(("keeps it winnable (exact).", "(an estimate: no move is settled winnable)."))
    assert move in [b.get_attribute("data-move") for b in page.find_elements(By.CSS_SELECTOR, "#moves button")]
    assert len([c for c in calls(page) if c["end"] == "ok"]) == 1
    if hint.endswith("(exact)."):
        answer = Client(base_url).call("Boaf/Solve", {"state": server_state(base_url, 367297990, [move])}).body
        assert answer["status"] == "SOLVABLE"
    page.find_element(By.ID, "show-verdicts").click()
    wait(page).until(lambda d: "checking" not in text_of(d, "moves"))
    viewport(page, 1200, 720)
    screenshot(page, "playground")  # docs/playground.png is this one


def server_state(url: str, seed: int, moves: list[str]) -> dict[str, Any]:
    answer = Client(url).call("Game/Play", {"state": deal_state(url, seed), "moves": moves}).body
    return dict(answer["state"])


def test_keyboard_only_play_with_arrow_keys(page: WebDriver) -> None:
    deal_seed(page, "367297990")
    first = search.solve(deal(367297990)).moves[0]
    cells = board_cells(page)
    stops = [c for c in page.find_elements(By.CSS_SELECTOR, "#board .card") if c.get_attribute("tabindex") == "0"]
    assert len(stops) == 1  # one tab stop on the board; arrows move inside it
    stops[0].click()
    page.switch_to.active_element.send_keys(Keys.ESCAPE)  # chosen and cleared: the board has the focus
    for card in first.split("-"):
        target = cells.index(card)
        row, col = divmod(target, 4)
        here = int(page.switch_to.active_element.get_attribute("data-index") or -1)
        keys = [Keys.ARROW_DOWN] * (row - here // 4) + [Keys.ARROW_UP] * (here // 4 - row)
        keys += [Keys.ARROW_RIGHT] * (col - here % 4) + [Keys.ARROW_LEFT] * (here % 4 - col)
        for key in keys:
            page.switch_to.active_element.send_keys(key)
        active = page.switch_to.active_element
        assert active.get_attribute("data-card") == card
        active.send_keys(Keys.ENTER)
    wait(page).until(lambda d: played(d) == 1)
    assert page.switch_to.active_element.get_attribute("data-index") is not None  # focus stays on the board
    page.find_element(By.CSS_SELECTOR, "#moves button").send_keys(Keys.ENTER)
    wait(page).until(lambda d: played(d) == 2)
    assert page.switch_to.active_element.get_attribute("data-index") is not None


def request_budget(driver: WebDriver) -> tuple[int, int]:
    driver.find_element(By.CSS_SELECTOR, "#moves button").click()
    wait(driver).until(lambda d: played(d) == 1)
    wait(driver).until(lambda d: settled(d) and "checking" not in text_of(d, "moves"))
    made = calls(driver)
    # Bytes on the wire: what the page sent, and each answer's body as received (gzipped: encodedBodySize).
    got = driver.execute_script(
        "return performance.getEntriesByType('resource')"
        ".filter(e => e.name.includes('/boaf.v1.')).reduce((n, e) => n + e.encodedBodySize, 0)"
    )
    return len(made), sum(c["sent"] for c in made) + int(got)


def test_request_budget_of_a_load_and_a_move(page: WebDriver, base_url: str) -> None:
    page.find_element(By.ID, "show-verdicts").click()
    wait(page).until(lambda d: "checking" not in text_of(d, "moves"))
    count_calls(page)
    deal_seed(page, "2")
    wait(page).until(lambda d: settled(d) and "checking" not in text_of(d, "moves"))
    load = len(calls(page))
    count_calls(page)
    small = request_budget(page)
    wide = Client(base_url).call("Game/Deal", {"seed": 1, "rows": 4, "cols": 13}).body  # 294 legal moves
    enter(page, "grid", "/".join(" ".join(wide["cells"][r * 13 : (r + 1) * 13]) for r in range(4)), "load-grid")
    wait(page).until(lambda d: len(board_cells(d)) == 52 and settled(d) and "checking" not in text_of(d, "moves"))
    count_calls(page)
    large = request_budget(page)
    print(f"requests: load {load}; a 4x4 move {small[0]} ({small[1]:,} B); a 4x13 move {large[0]} ({large[1]:,} B)")
    # With the verdicts on, a listed move is one Hint of its known result. Its answer carries each legal
    # move's result state: ~137 KB of JSON for this 4x13 deal, gzipped by the server for the browser.
    assert load <= 4 and small[0] <= 2 and large[0] <= 2
    assert large[1] < 60_000


def cancelled_generations(metrics_url: str) -> float:
    with urllib.request.urlopen(metrics_url) as response:
        text = response.read().decode()
    found = re.search(r'boaf_requests_total\{code="CANCELLED",method="GeneratePuzzle"\} (\S+)', text)
    return float(found.group(1)) if found else 0.0


def test_a_long_generation_shows_its_time_and_can_be_cancelled(page: WebDriver, metrics_url: str) -> None:
    before = cancelled_generations(metrics_url)
    deal_seed(page, "2")
    cells = board_cells(page)
    count_calls(page)
    enter(page, "cards", "16", "generate")
    wait(page).until(lambda d: d.find_element(By.ID, "progress").is_displayed())
    assert re.fullmatch(r"Generating the puzzle… \d+\.\d s", text_of(page, "elapsed"))
    page.find_element(By.ID, "cancel").click()
    wait(page).until(settled)
    assert text_of(page, "status") == "Generating the puzzle: cancelled."
    assert board_cells(page) == cells and not page.find_element(By.ID, "progress").is_displayed()
    assert [c["end"] for c in calls(page) if c["path"].endswith("GeneratePuzzle")] == ["AbortError"]
    wait(page).until(lambda d: cancelled_generations(metrics_url) > before)  # the server stopped it too


def test_the_pages_files_are_compressed_and_revalidated(base_url: str) -> None:
    for name in ["", "playground.js", "playground.css"]:
        request = urllib.request.Request(f"{base_url}/{name}", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request) as response:
            assert response.headers["Content-Encoding"] == "gzip", name
            assert response.headers["Cache-Control"] == "no-cache"
            etag = response.headers["ETag"]
            assert etag and gzip.decompress(response.read())
        again = urllib.request.Request(f"{base_url}/{name}", headers={"If-None-Match": etag})
        with pytest.raises(urllib.error.HTTPError) as unchanged:
            urllib.request.urlopen(again)
        assert unchanged.value.code == 304
    with urllib.request.urlopen(f"{base_url}/playground.js") as plain:  # no Accept-Encoding: as is
        assert plain.headers.get("Content-Encoding") is None


AXE = Path(__file__).resolve().parents[2] / "out" / "node" / "node_modules" / "axe-core" / "axe.min.js"
RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, { resultTypes: ["violations"] }).then(
  (results) => done(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)),
  (error) => done([`axe failed: ${error}`]),
);
"""


def axe_violations(driver: WebDriver) -> list[str]:
    """axe-core's WCAG violations on the page as it is now (axe-core from npm: see .ci/run)."""
    if not AXE.exists():
        if os.environ.get("CI"):
            pytest.fail(f"axe-core is missing: {AXE} (.ci/run installs it with npm)")
        pytest.skip("needs axe-core: npm install --prefix out/node axe-core@4")
    driver.set_script_timeout(WAIT_S)
    driver.execute_script(AXE.read_text(encoding="utf-8"))
    return list(driver.execute_async_script(RUN_AXE))


def test_axe_finds_no_violations_on_a_deal_a_puzzle_an_error_and_a_phone(page: WebDriver) -> None:
    deal_seed(page, "367297990")
    page.find_element(By.ID, "show-verdicts").click()
    wait(page).until(lambda d: "checking" not in text_of(d, "moves"))
    assert axe_violations(page) == []
    enter(page, "cards", "6", "generate")
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#depths tbody tr"))
    assert axe_violations(page) == []
    enter(page, "seed", "abc", "deal")
    wait(page).until(lambda d: text_of(d, "error").startswith("The seed “abc” is not a whole number"))
    assert axe_violations(page) == []
    viewport(page, *PHONE)
    deal_seed(page, "2")
    assert axe_violations(page) == []


def test_the_api_page_opens_from_the_playground_and_axe_finds_no_violations(page: WebDriver) -> None:
    page.find_element(By.LINK_TEXT, "The API").click()
    wait(page).until(lambda d: d.find_elements(By.ID, "statuses"))
    assert page.title.startswith("boaf API")
    assert page.find_element(By.ID, "boaf-v1-state").text == "boaf.v1.State"
    assert axe_violations(page) == []


# --- issue 45: hints on the board, any grid from a seed, links that fail gently, a first start, phones ---

SIZES = pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1366x768", "390x844"])
# The hint as the page draws it: the marked cards, what assistive technology hears of them, the arrow, the list.
HINT_DRAWN = """
const cards = (kind) => [...document.querySelectorAll(`#board .card.hint-${kind}`)];
const arrow = document.getElementById("hint-arrow");
const list = document.getElementById("moves"), item = list.querySelector("button.hinted")?.closest("li");
const box = list.getBoundingClientRect(), shown = item?.getBoundingClientRect();
return {
  from: cards("from").map((c) => c.dataset.card), to: cards("to").map((c) => c.dataset.card),
  fromLabel: cards("from").map((c) => c.getAttribute("aria-label"))[0] || "",
  toLabel: cards("to").map((c) => c.getAttribute("aria-label"))[0] || "",
  arrow: arrow.querySelectorAll("line.shaft").length ? arrow.dataset.move : null,
  listed: list.querySelector("button.hinted")?.dataset.move || null,
  tags: [...list.querySelectorAll(".hint-tag")].filter((t) => !t.hidden).length,
  inView: Boolean(item) && shown.top >= box.top - 0.5 && shown.bottom <= box.bottom + 0.5,
  note: document.getElementById("hint-text").textContent,
};
"""


def hint_drawn(driver: WebDriver) -> dict[str, Any]:
    return dict(driver.execute_script(HINT_DRAWN))


def hinted_move(driver: WebDriver) -> str:
    return text_of(driver, "status").split()[1].rstrip(",")


@SIZES
def test_a_hint_is_drawn_on_the_board_its_move_scrolled_into_view_and_cleared_when_stale(
    page: WebDriver, size: tuple[int, int]
) -> None:
    viewport(page, *size)
    deal_seed(page, "104")
    page.find_element(By.ID, "hint").click()
    wait(page).until(lambda d: text_of(d, "status").startswith("Hint: "))
    estimate = hinted_move(page)
    source, target = estimate.split("-")
    drawn = hint_drawn(page)
    assert (drawn["from"], drawn["to"], drawn["arrow"], drawn["listed"], drawn["tags"]) == (
        [source],
        [target],
        estimate,
        estimate,
        1,
    ), drawn
    assert drawn["fromLabel"].endswith(f"; the hint: move it onto {card_name(target)}"), drawn
    assert drawn["toLabel"].endswith(f"; the hint: move {card_name(source)} onto it"), drawn
    assert drawn["inView"] and drawn["note"].startswith(f"Hint: move {card_name(source)}, row "), drawn
    screenshot(page, f"hint-estimate-{size[0]}x{size[1]}")
    page.find_element(By.ID, "solve").click()
    wait(page).until(lambda d: text_of(d, "status").startswith("Winnable: "))
    solution = search.solve(deal(104)).moves
    if estimate != solution[0]:  # the estimate's hint is stale once Solve settles another move
        cleared = hint_drawn(page)
        assert (cleared["from"], cleared["to"], cleared["arrow"], cleared["listed"], cleared["tags"]) == (
            [],
            [],
            None,
            None,
            0,
        ), cleared
        assert cleared["note"] == "" and "; the hint" not in cleared["fromLabel"]
    page.find_element(By.ID, "hint").click()
    wait(page).until(lambda d: text_of(d, "status").endswith("keeps it winnable (exact)."))
    exact = hinted_move(page)
    legal = [b.get_attribute("data-move") for b in page.find_elements(By.CSS_SELECTOR, "#moves button")]
    assert exact == "2S-JS" and legal.index(exact) == len(legal) - 1  # the list's last item: 28 of 28
    drawn = hint_drawn(page)
    assert drawn["arrow"] == drawn["listed"] == exact and drawn["inView"], drawn  # scrolled into the list's box
    screenshot(page, f"hint-exact-{size[0]}x{size[1]}")
    page.find_element(By.CSS_SELECTOR, f"#moves button[data-move='{legal[0]}']").click()
    wait(page).until(lambda d: played(d) == 1)
    moved = hint_drawn(page)
    assert moved["arrow"] is None and moved["listed"] is None and moved["from"] == [] and moved["note"] == ""


def card_name(card: str) -> str:
    ranks = {"A": "ace", "T": "ten", "J": "jack", "Q": "queen", "K": "king"}
    suits = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
    return f"{ranks.get(card[0], card[0])} of {suits[card[1]]}"


def choose_size(driver: WebDriver, preset: str, rows: int = 0, cols: int = 0) -> None:
    Select(driver.find_element(By.ID, "size")).select_by_value(preset)
    if preset == "custom":
        for field, value in (("rows", rows), ("cols", cols)):
            box = driver.find_element(By.ID, field)
            box.clear()
            box.send_keys(str(value))


def url_params(driver: WebDriver) -> dict[str, str]:
    query = urllib.parse.urlsplit(driver.current_url).query
    return dict(urllib.parse.parse_qsl(query))


@SIZES
def test_a_seed_deals_any_grid_and_its_link_reproduces_the_game(
    page: WebDriver, base_url: str, size: tuple[int, int]
) -> None:
    viewport(page, *size)
    for preset, rows, cols in [("4x13", 4, 13), ("5x5", 5, 5), ("custom", 2, 3), ("4x4", 4, 4)]:
        choose_size(page, preset, rows, cols)
        enter(page, "seed", "-7", "deal")
        title = "Deal -7" if (rows, cols) == (4, 4) else f"Deal -7, {rows}×{cols}"
        wait(page).until(lambda d, t=title: text_of(d, "status") == f"{t}.")  # type: ignore[misc]
        dealt = Client(base_url).call("Game/Deal", {"seed": -7, "rows": rows, "cols": cols}).body
        assert board_cells(page) == dealt["cells"] and text_of(page, "board-title") == title
        assert url_params(page) == {"seed": "-7", "rows": str(rows), "cols": str(cols)}
    page.get(f"{base_url}/?seed=1&rows=4&cols=13")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 1, 4×13.")
    assert url_params(page) == {"seed": "1", "rows": "4", "cols": "13"}  # no longer rewritten to ?seed=1
    assert page.find_element(By.ID, "size").get_attribute("value") == "4x13"
    first = page.find_element(By.CSS_SELECTOR, "#moves button").get_attribute("data-move")
    page.find_element(By.CSS_SELECTOR, "#moves button").click()
    wait(page).until(lambda d: played(d) == 1)
    cells, link = board_cells(page), page.current_url
    assert url_params(page) == {"seed": "1", "rows": "4", "cols": "13", "moves": first}
    page.get(link)  # the link reproduces the game exactly: its deal, size and moves
    wait(page).until(lambda d: played(d) == 1)
    assert board_cells(page) == cells and page.current_url == link
    state = Client(base_url).call("Game/Deal", {"seed": 1, "rows": 4, "cols": 13}).body
    assert cells == server_cells(base_url, state, [str(first)])
    page.get(f"{base_url}/?seed=3&rows=2&cols=3")
    wait(page).until(lambda d: text_of(d, "status") == "Deal 3, 2×3.")
    assert page.find_element(By.ID, "size").get_attribute("value") == "custom"
    assert page.find_element(By.ID, "rows").get_attribute("value") == "2"
    assert page.find_element(By.ID, "cols").get_attribute("value") == "3"


@SIZES
def test_a_link_with_an_illegal_move_shows_the_deal_plays_the_legal_prefix_and_says_why(
    page: WebDriver, base_url: str, size: tuple[int, int]
) -> None:
    viewport(page, *size)
    page.get(f"{base_url}/?seed=367297990&moves=5S-7D")
    wait(page).until(lambda d: "cannot be played" in text_of(d, "error"))
    assert board_cells(page) == deal_state(base_url, 367297990)["cells"] and played(page) == 0
    assert text_of(page, "board-title") == "Deal 367297990"
    assert page.find_element(By.ID, "seed").get_attribute("value") == "367297990"
    assert text_of(page, "error") == (
        "Move 1 of the link, 5S-7D (5 of spades onto 7 of diamonds), cannot be played: row 1, column 1 and row 4, "
        "column 2 share no row or column. The board shows the position before it."
    )
    screenshot(page, f"illegal-link-{size[0]}x{size[1]}")
    line = search.solve(deal(367297990)).moves
    page.get(f"{base_url}/?seed=367297990&moves={line[0]},{line[1]},XX-7D,{line[2]}")
    wait(page).until(lambda d: "cannot be played" in text_of(d, "error"))
    assert played(page) == 2 and played_line(page) == line[:2]
    assert board_cells(page) == server_cells(base_url, deal_state(base_url, 367297990), line[:2])
    assert text_of(page, "error").startswith("Move 3 of the link, XX-7D, cannot be played: unknown card 'XX'")


BAD_INPUTS = [
    (
        "seed",
        "abc",
        "The seed “abc” is not a whole number: use digits, and a minus sign for a negative seed "
        "(such as 367297990 or -1).",
    ),
    (
        "seed",
        "99999999999999999999999",
        "The seed 99999999999999999999999 is outside the range "
        "-2147483648…2147483647: seeds are 32-bit signed numbers.",
    ),
    (
        "seed",
        "-2147483649",
        "The seed -2147483649 is outside the range -2147483648…2147483647: seeds are 32-bit signed numbers.",
    ),
    (
        "seed",
        "1.5",
        "The seed “1.5” is not a whole number: use digits, and a minus sign for a negative seed "
        "(such as 367297990 or -1).",
    ),
    ("seed", "", "Enter a seed: a whole number such as 367297990."),
    ("rows", "0", "Rows must be a whole number from 1 to 52; “0” is not one."),
    ("cols", "four", "Columns must be a whole number from 1 to 52; “four” is not one."),
    ("rows", "8", "A 8×8 grid has 64 cells, but a deck has 52 cards: rows × columns must be at most 52."),
    ("grid", "5S 7D/4C", "Row 2 has 1 cells, but row 1 has 2: every row needs the same number (-- for an empty cell)."),
    (
        "grid",
        "5S 1X/4C AD",
        "Row 1, column 2: “1X” is not a card. A card is a rank (A, 2–9, T, J, Q, K) then a suit "
        "(C, D, H, S), such as 5S or TD; -- is an empty cell.",
    ),
    ("grid", "", "Enter a grid: its cards row by row, rows split by /, such as 5S 7D/4C AD."),
]


@SIZES
def test_a_bad_seed_size_or_grid_explains_itself_in_a_players_words(page: WebDriver, size: tuple[int, int]) -> None:
    viewport(page, *size)
    for field, text, message in BAD_INPUTS:
        deal_seed(page, "2")
        before = board_cells(page)
        if field in ("rows", "cols"):
            choose_size(page, "custom", 8 if text == "8" else 4, 8 if text == "8" else 4)
            box = page.find_element(By.ID, field)
            box.clear()
            box.send_keys(text)
        button = "load-grid" if field == "grid" else "deal"
        enter(page, "grid" if field == "grid" else "seed", text if field in ("seed", "grid") else "5", button)
        wait(page).until(lambda d, m=message: text_of(d, "error") == m)  # type: ignore[misc]
        assert text_of(page, "status") == "" and board_cells(page) == before  # the game stays as it was
        choose_size(page, "4x4")
    screenshot(page, f"bad-input-{size[0]}x{size[1]}")


def test_after_a_win_the_move_list_is_not_a_numbered_none(page: WebDriver, base_url: str) -> None:
    page.get(f"{base_url}/?grid=AC+2C")
    wait(page).until(lambda d: len(board_cells(d)) == 2)
    page.find_element(By.CSS_SELECTOR, "#moves button[data-move='AC-2C']").click()
    wait(page).until(lambda d: text_of(d, "status") == "You won in 1 move: one stack left.")
    assert page.find_elements(By.CSS_SELECTOR, "#moves li") == []
    assert text_of(page, "no-moves") == "None: the deal is won."
    assert "1. None" not in text_of(page, "moves") + text_of(page, "no-moves")


# Every visible target's size, and where the panels are (all in CSS px).
TARGETS = """
const targets = [...document.querySelectorAll("button, a[href], input, select, summary")]
  .filter((e) => e.getClientRects().length && getComputedStyle(e).visibility !== "hidden");
const box = (id) => document.getElementById(id).getBoundingClientRect();
return {
  small: targets.map((e) => [e.id || e.dataset.card || e.dataset.move || e.dataset.at || e.textContent.trim(),
    e.getBoundingClientRect()]).filter(([, r]) => r.width < 24 || r.height < 24)
    .map(([name, r]) => `${name}: ${r.width.toFixed(1)}x${r.height.toFixed(1)}`),
  count: targets.length,
  movesTop: box("moves-title").top, startTop: box("start-title").top, hintTop: box("hint-text").top,
};
"""


@SIZES
@pytest.mark.parametrize("grid", [(4, 4), (4, 13)], ids=["4x4", "4x13"])
def test_every_target_is_at_least_24_px_and_the_moves_come_before_start(
    page: WebDriver, base_url: str, size: tuple[int, int], grid: tuple[int, int]
) -> None:
    viewport(page, *size)
    page.get(f"{base_url}/?seed=1&rows={grid[0]}&cols={grid[1]}")
    wait(page).until(lambda d: len(board_cells(d)) == grid[0] * grid[1])
    page.find_element(By.ID, "hint").click()
    wait(page).until(lambda d: text_of(d, "status").startswith("Hint: "))
    found = page.execute_script(TARGETS)
    assert found["count"] > grid[0] * grid[1] and found["small"] == [], found
    if size == PHONE:  # one column: the hint (under the board), then the moves, then Start
        assert found["hintTop"] < found["movesTop"] < found["startTop"], found


def test_axe_finds_no_violations_on_a_4x13_phone_deal_with_its_hint_drawn(page: WebDriver, base_url: str) -> None:
    viewport(page, *PHONE)
    page.get(f"{base_url}/?seed=1&rows=4&cols=13")
    wait(page).until(lambda d: len(board_cells(d)) == 52)
    page.find_element(By.ID, "hint").click()
    wait(page).until(lambda d: hint_drawn(d)["arrow"] is not None)
    screenshot(page, "hint-4x13-390x844")
    assert axe_violations(page) == []
    page.get(f"{base_url}/?seed=367297990&moves=5S-7D")  # and an illegal link's error
    wait(page).until(lambda d: "cannot be played" in text_of(d, "error"))
    assert axe_violations(page) == []


FIRST_START_S = 1200  # a cold compile on a shared 2-core machine: generous, only ever waited on conditions
LISTENING = re.compile(r'"message": "listening \(HTTP\)".*?"address": "127\.0\.0\.1:(\d+)"')


@contextmanager
def first_start(tmp_path: Path) -> Iterator[str]:
    """``boaf serve`` on an empty numba cache, as a fresh machine's first start; yields its HTTP address as soon
    as it listens (long before SERVING), and ends it with its compile processes (the background kernels too)."""
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    log = tmp_path / "serve.log"
    env = {
        **os.environ,
        **SERVER_ENV,
        "NUMBA_CACHE_DIR": str(cache),
        "BOAF_LOG_LEVEL": "INFO",
        "BOAF_LOG_FORMAT": "json",
    }
    command = [str(Path(sys.executable).with_name("boaf")), "serve", "--host", "127.0.0.1", "--port", "0"]
    command += ["--metrics-port", "0", "--http-port", "0"]
    with log.open("w") as written:
        process = subprocess.Popen(command, stdout=written, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:

        def listening(_: object) -> str | None:
            assert process.poll() is None, log.read_text()[-2000:]
            found = LISTENING.search(log.read_text())
            return f"http://127.0.0.1:{found.group(1)}" if found else None

        yield WebDriverWait(log, FIRST_START_S, poll_frequency=0.2).until(listening)
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # its session: the server and the compile processes it started
        process.wait(60)


def readiness(url: str) -> dict[str, Any]:
    return dict(Client(url).get("/readyz").body)


@pytest.mark.slow
def test_a_first_start_shows_the_solver_getting_ready_and_answers_hint_by_itself(
    browser: WebDriver, tmp_path: Path
) -> None:
    """One cold start (~1-2 min of compiling): Hint pressed while the kernels compile answers once SERVING."""
    with first_start(tmp_path) as url:
        ready = readiness(url)
        assert ready["status"] == "NOT_SERVING", ready  # the kernels compile: nothing is cached
        viewport(browser, *DESKTOP)
        browser.get(url + "/?seed=367297990")
        wait(browser).until(lambda d: len(board_cells(d)) == 16)  # Deal and Play answer during the compile
        count_calls(browser)
        assert readiness(url)["stage"] == "compiling kernels (first start only)"
        browser.find_element(By.ID, "hint").click()
        wait(browser).until(lambda d: "parts compiled" in text_of(d, "ready-text"))  # the count /readyz gives
        waiting = text_of(browser, "ready-text")
        assert waiting.startswith("The solver is getting ready (first start only)"), waiting
        assert "retry" not in waiting and "SERVING" not in waiting
        counted = re.search(r": (\d+) of (\d+) parts compiled\.", waiting)
        assert counted and int(counted.group(1)) < int(counted.group(2)), waiting
        screenshot(browser, "first-start")
        WebDriverWait(browser, FIRST_START_S).until(lambda d: text_of(d, "status").startswith("Hint: "))
        assert readiness(url) == {"status": "SERVING"}
        assert hint_drawn(browser)["arrow"] == hinted_move(browser)  # drawn, without another click
        assert not browser.find_element(By.ID, "getting-ready").is_displayed()
        hints = [c for c in calls(browser) if c["path"].endswith(".Game/Hint")]
        assert len(hints) >= 2 and hints[-1]["end"] == "ok"  # refused while compiling, then asked again
