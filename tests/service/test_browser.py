"""The board viewer in a real browser: Debian's chromium driven by Selenium through chromium-driver.

The driver is given by its path (``/usr/bin/chromedriver``; nothing downloads a browser).  The
test opens the viewer of a finished round, checks the rendered text (rounds, parameters,
state, group sizes, the privacy ledger and the signature status) and saves a screenshot
under ``results/``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.service, pytest.mark.browser]
DRIVER = os.environ.get("SHUFFLEDP_CHROMEDRIVER", "/usr/bin/chromedriver")
RESULTS = Path(__file__).resolve().parents[2] / "results"


@pytest.fixture(scope="module")
def browser():
    if not (Path(DRIVER).exists() and (shutil.which("chromium") or shutil.which("chromium-browser"))):
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide chromium and {DRIVER} (.ci/services.sh installs Debian's packages)")
        pytest.skip(f"needs Debian's chromium and chromium-driver ({DRIVER}); .ci/services.sh installs them")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(arg)
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    yield driver
    driver.quit()


def test_viewer_shows_a_finished_round_with_ledger_and_signatures(services, published_round, browser):
    from selenium.webdriver.common.by import By

    rid = published_round["round_id"].hex()
    browser.get(services.viewer_url)
    rounds = browser.find_element(By.ID, "rounds").text
    assert rid[:16] in rounds and "published" in rounds and "riders (12)" in rounds
    browser.find_element(By.LINK_TEXT, rid[:16]).click()
    assert rid in browser.find_element(By.TAG_NAME, "h2").text
    assert browser.find_element(By.ID, "state").text == "published"
    params = browser.find_element(By.ID, "parameters").text
    assert "min-weight" in params and "24 entries" in params
    signatures = browser.find_element(By.ID, "signatures").text
    assert signatures.count("verified") == 3 and "INVALID" not in signatures
    groups = browser.find_element(By.ID, "groups").text
    assert "riders" in groups and "drivers" in groups and "minkowski" in groups
    ledger_rows = browser.find_element(By.ID, "ledger").find_elements(By.TAG_NAME, "tr")
    assert len(ledger_rows) == 3  # header + one row per group
    cells = [c.text for c in ledger_rows[1].find_elements(By.TAG_NAME, "td")]
    assert cells[0] == "riders" and cells[2] == "12" and cells[3] == "12" and float(cells[4]) <= 2.0 + 1e-6
    RESULTS.mkdir(exist_ok=True)
    shot = RESULTS / "board-viewer.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
