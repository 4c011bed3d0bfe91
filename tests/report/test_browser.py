"""The HTML report in a real browser: headless Chromium opens it from file:// and offline.

Debian's ``chromium`` driven by Playwright through its executable path (never a downloaded
browser); screenshots are kept in the test's temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from drift_pipeline.report import PLOT_TITLES
from report.tiny_world import invoke, run_tiny

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    run_tiny(folder)
    result = invoke("report", str(folder / "data"))
    assert result.exit_code == 0, result.output
    return Path(result.output.strip())


def test_the_report_shows_its_table_plots_and_drill_down(report_page: Path, tmp_path: Path):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} missing: apt-get install -y chromium", pytrace=False)
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report_page.as_uri())
            table = page.locator("#leaderboard-all")
            expect(table.locator("tbody tr")).to_have_count(4)
            first_arm = table.locator("tbody tr").first.get_attribute("data-arm")
            assert first_arm is not None
            # Sorting by DRIFT-C twice (descending, then ascending) reverses the ranked order.
            header = table.locator("th", has_text="DRIFT-C")
            header.click()
            header.click()
            assert table.locator("tbody tr").last.get_attribute("data-arm") == first_arm
            page.screenshot(path=str(tmp_path / "leaderboard.png"))
            # Every plot is drawn: an inline SVG with marks, with a size on the page.
            for name in PLOT_TITLES:
                plot = page.locator(f"#plot-{name} svg")
                expect(plot).to_be_visible()
                box = plot.bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 80, name
                assert plot.locator("path").count() > 3, name
                plot.scroll_into_view_if_needed()
                page.screenshot(path=str(tmp_path / f"plot-{name}.png"))
            # From the leaderboard to the arm, then to a probe and its verdict.
            table.locator(f'a[href="#arm-{first_arm.replace("@", "_")}"]').click()
            arm = page.locator(f"section#arm-{first_arm.replace('@', '_')}")
            expect(arm).to_be_in_viewport()
            arm.locator("ul a").first.click()
            probe = page.locator("section.probe:target")
            expect(probe).to_be_in_viewport()
            expect(probe).to_contain_text("retrieve returned")
            expect(probe.locator(".rationale")).not_to_be_empty()
            # Why, line by line: the mentions the reader counted (and any it ignored).
            expect(probe.locator("ul.reading li.counted").first).to_contain_text("rule ")
            expect(probe).to_contain_text("its lines about the asked values")
            page.screenshot(path=str(tmp_path / "drill-down.png"))
        finally:
            browser.close()
    # Offline: nothing but the file itself was requested.
    assert {url.split("#")[0] for url in requests} == {report_page.as_uri()}
