"""The rendered leaderboard site in a real headless browser (Debian chromium + chromedriver,
driven by Selenium): every page loads without console errors, every link and image
resolves, tables sort, no env column is hidden at 1280 px, the agent column stays in view when
a phone scrolls the table sideways, a phone shows one regret figure per env at its own size
(linked to its SVG), no figure text is cut by the figure's edge, import paths wrap only at
dots, and screenshots at 1280 and 390 px are written for a person to look at.

The pages are a fresh render of the committed leaderboards (``conftest.rendered_leaderboards``;
``test_leaderboard_site.test_committed_site_is_current`` keeps the committed pages equal to it).

Screenshots go to ``leaderboards/_screenshots/`` (git-ignored), or to ``$HBO_SCREENSHOTS``.

In CI (``CI=true``, set by ``.ci/run``, which installs the browser) a missing browser is a
failure; elsewhere the test is skipped saying what to install.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from hbo_envs.leaderboard.site import PAPER_URLS, load_site_config

# One browser (the module's driver fixture) for every test here, on the worker that renders
# the site once (conftest.rendered_leaderboards): one xdist worker.
pytestmark = pytest.mark.xdist_group("rendered_leaderboards")

COMMITTED = Path(__file__).resolve().parents[1] / "leaderboards"
SHOTS = Path(os.environ.get("HBO_SCREENSHOTS") or COMMITTED / "_screenshots")
BOARDS = COMMITTED  # replaced by the rendered copy (the autouse fixture below)


@pytest.fixture(autouse=True, scope="module")
def _boards(rendered_leaderboards: Path) -> Any:
    global BOARDS
    BOARDS = rendered_leaderboards
    yield
    BOARDS = COMMITTED


def _pages() -> list[Path]:
    return sorted(p for p in BOARDS.rglob("*.html") if "_screenshots" not in p.parts)


def _suites_with_entries() -> list[Path]:
    return [
        p.parent
        for p in sorted(BOARDS.glob("*/index.html"))
        if any(p.parent.glob("entries/*.html"))
    ]


def _browser_paths() -> tuple[str, str] | None:
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chrome, driver) if chrome and driver else None


@pytest.fixture(scope="module")
def driver() -> Any:
    paths = _browser_paths()
    if paths is None:
        msg = (
            "chromium and chromedriver are not installed (Debian: apt-get install chromium "
            "chromium-driver; .ci/run does it)"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {msg}")
        pytest.skip(msg)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = paths[0]
    for a in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-extensions",
        "--no-first-run",
    ):
        opts.add_argument(a)
    opts.add_argument("--window-size=1400,1000")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=paths[1]), options=opts)
    d.set_page_load_timeout(30)
    yield d
    d.quit()


def _viewport(d: Any, width: int, height: int = 900) -> None:
    """Emulate a ``width`` px wide screen (a phone below 600 px), independent of window
    limits of the headless browser."""
    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def _errors(d: Any) -> list[dict[str, Any]]:
    return [e for e in d.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def _column(d: Any, index: int, table: str = "#ranking") -> list[str]:
    from selenium.webdriver.common.by import By

    rows = d.find_elements(By.CSS_SELECTOR, f"{table} tbody tr")
    return [r.find_elements(By.TAG_NAME, "td")[index].get_attribute("data-sort") for r in rows]


def test_every_page_loads_without_errors_and_every_link_resolves(driver: Any) -> None:
    pages = _pages()
    suites = sorted(BOARDS.glob("*/suite.toml"))
    assert len(pages) >= 2 + len(suites)  # index, submit, one per suite (+ envs, entries)
    _viewport(driver, 1280)
    allowed = set(PAPER_URLS.values())
    repo = load_site_config(BOARDS).repository + "/"
    checked = 0
    for page in pages:
        driver.get(page.as_uri())
        assert driver.title, page
        assert not _errors(driver), (page, _errors(driver))
        links = driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
        )
        for href in links:
            u = urlparse(href)
            if u.scheme in ("http", "https"):
                # only the papers' own pages and the agent code in the repository
                assert href in allowed or (href + "/").startswith(repo), (page, href)
                continue
            assert u.scheme == "file", (page, href)
            target = Path(unquote(u.path))
            assert target.exists(), f"{page.relative_to(BOARDS)}: broken link {href}"
            checked += 1
        broken = driver.execute_script(
            "return Array.from(document.images)"
            ".filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
        )
        assert not broken, (page, broken)
    assert checked > len(pages)


def test_tables_sort(driver: Any) -> None:
    from selenium.webdriver.common.by import By

    suite = max(_suites_with_entries(), key=lambda s: len(list(s.glob("entries/*.html"))))
    _viewport(driver, 1280)
    driver.get((suite / "index.html").as_uri())
    files = sorted((suite / "submissions").glob("*.json"))
    names = _column(driver, 1)
    assert len(names) == len(files) >= 3 and all(names)  # every submission has a row
    headers = driver.find_elements(By.CSS_SELECTOR, "#ranking thead th")
    titles = [h.text for h in headers]
    col = titles.index("mean\nrank") if "mean\nrank" in titles else titles.index("mean rank")
    headers[col].click()  # ascending on the first click, descending on the second
    asc = [float(x) for x in _column(driver, col)]
    assert asc == sorted(asc) and headers[col].get_attribute("aria-sort") == "ascending"
    headers[col].click()
    desc = [float(x) for x in _column(driver, col)]
    assert desc == sorted(desc, reverse=True)
    headers[1].click()  # the agent column sorts by name
    assert _column(driver, 1) == sorted(names)
    score = titles.index("score")
    headers[score].click()
    headers[score].click()
    vals = [float(x) for x in _column(driver, score)]
    assert vals == sorted(vals, reverse=True)
    # the probability-of-improvement table sorts too
    poi = driver.find_elements(By.CSS_SELECTOR, "#poi thead th")
    poi[1].click()
    p = [float(x) for x in _column(driver, 1, "#poi")]
    assert p == sorted(p)
    assert not _errors(driver)


def test_no_env_is_hidden_at_1280_and_the_agent_column_sticks_on_a_phone(driver: Any) -> None:
    suites = _suites_with_entries()
    assert suites
    for suite in suites:
        _viewport(driver, 1280)
        driver.get((suite / "index.html").as_uri())
        w = driver.execute_script(
            "var s = document.querySelector('#ranking').parentElement;"
            "return [s.scrollWidth, s.clientWidth, window.innerWidth,"
            " document.documentElement.scrollWidth];"
        )
        assert w[0] <= w[1] + 1, f"{suite.name}: the table scrolls at 1280 px: {w}"
        assert w[3] <= w[2], f"{suite.name}: the page scrolls sideways at 1280 px: {w}"
        _viewport(driver, 390, 844)
        driver.get((suite / "index.html").as_uri())
        lefts = driver.execute_script(
            "var s = document.querySelector('#ranking').parentElement;"
            "var cell = document.querySelector('#ranking tbody td.c1');"
            "var before = cell.getBoundingClientRect().left;"
            "s.scrollLeft = s.scrollWidth;"
            "return [before, cell.getBoundingClientRect().left, s.scrollLeft,"
            " s.getBoundingClientRect().left, document.documentElement.scrollWidth,"
            " window.innerWidth];"
        )
        before, after, scrolled, box_left, page_w, inner = lefts
        assert scrolled > 100, f"{suite.name}: expected a sideways-scrolling table on a phone"
        assert after == pytest.approx(before, abs=1) and after >= box_left
        assert page_w <= inner + 1, f"{suite.name}: the page itself scrolls sideways at 390 px"
    _viewport(driver, 1280)


def test_every_page_fits_a_phone(driver: Any) -> None:
    _viewport(driver, 390, 844)
    for page in _pages():
        driver.get(page.as_uri())
        page_w, inner, narrow = driver.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth,"
            " Array.from(document.querySelectorAll('dl.kv dd'))"
            ".filter(d => d.getBoundingClientRect().width < 150).map(d => d.textContent)];"
        )
        rel = page.relative_to(BOARDS)
        assert page_w <= inner + 1, f"{rel} scrolls sideways at 390 px ({page_w} px)"
        assert not narrow, f"{rel}: values squeezed below 150 px at 390 px: {narrow[:3]}"
    _viewport(driver, 1280)


def test_screenshots_at_1280_and_390(driver: Any) -> None:
    # One page of each kind (every suite's pages come from the same templates, and every
    # page of every suite is loaded and measured at both widths by the tests above): the
    # site's index and submit pages, and the index, first env and first entry page of the
    # suite with the most entries. Full-page screenshots are most of this module's time.
    suite = max(_suites_with_entries(), key=lambda s: len(list(s.glob("entries/*.html"))))
    pages = [BOARDS / "index.html", BOARDS / "submit.html", suite / "index.html"]
    pages += sorted(suite.glob("envs/*.html"))[:1] + sorted(suite.glob("entries/*.html"))[:1]
    SHOTS.mkdir(parents=True, exist_ok=True)
    written = []
    for page in pages:
        for width in (1280, 390):
            _viewport(driver, width)
            driver.get(page.as_uri())
            height = driver.execute_script("return document.documentElement.scrollHeight")
            _viewport(driver, width, min(int(height), 8000))  # the whole page, in one image
            rel = page.relative_to(BOARDS).with_suffix("")
            out = SHOTS / f"{'__'.join(rel.parts)}@{width}.png"
            assert driver.save_screenshot(str(out)), out
            assert out.stat().st_size > 5000  # an image with content, not a blank page
            written.append(out)
    _viewport(driver, 1280)
    print(f"{len(written)} screenshots in {SHOTS}")


def test_a_phone_shows_one_figure_per_env_at_its_own_size_linked_to_its_svg(driver: Any) -> None:
    from selenium.webdriver.common.by import By

    suites = _suites_with_entries()
    assert suites
    for suite in suites:
        n_envs = len(list(suite.glob("envs/*.html")))
        _viewport(driver, 390, 844)
        driver.get((suite / "index.html").as_uri())
        wide = driver.find_element(By.CSS_SELECTOR, ".wide-fig")
        assert not wide.is_displayed(), f"{suite.name}: the many-panel figure shows on a phone"
        figs = driver.execute_script(
            "return Array.from(document.querySelectorAll('.phone-figs figure')).map(f => {"
            " var a = f.querySelector('a.fig'), i = a.querySelector('img');"
            " var r = i.getBoundingClientRect();"
            " return [a.getAttribute('href'), i.getAttribute('src'), r.width, i.naturalWidth,"
            "  r.right, window.innerWidth]; })"
        )
        assert len(figs) == n_envs, (suite.name, len(figs))
        for href, src, shown, natural, right, inner in figs:
            assert href == src and href.startswith("envs/") and href.endswith(".phone.svg")
            assert (suite / href).is_file()
            # shown at >= 90% of its own size: 9 pt text stays >= 10.8 px; and on screen
            assert shown >= 0.9 * natural, (suite.name, href, shown, natural)
            assert right <= inner, (suite.name, href)
        env_page = sorted(suite.glob("envs/*.html"))[0]
        driver.get(env_page.as_uri())
        src = driver.execute_script("return document.querySelector('img.fig').currentSrc")
        assert src.endswith(f"{env_page.stem}.phone.svg"), src
        _viewport(driver, 1280)
        driver.get((suite / "index.html").as_uri())
        assert driver.find_element(By.CSS_SELECTOR, ".wide-fig a[href='regret.svg'] img")
        assert driver.find_element(By.CSS_SELECTOR, ".wide-fig").is_displayed()
        assert not driver.find_element(By.CSS_SELECTOR, ".phone-figs").is_displayed()
        driver.get(env_page.as_uri())
        src = driver.execute_script("return document.querySelector('img.fig').currentSrc")
        assert src.endswith(f"{env_page.stem}.svg"), src


def test_no_figure_text_is_cut_by_the_figure_edge(driver: Any) -> None:
    svgs = sorted(
        p for s in _suites_with_entries() for p in [*s.glob("*.svg"), *s.glob("envs/*.svg")]
    )
    assert len(svgs) >= 4 * 3
    _viewport(driver, 1280)
    for svg in svgs:
        driver.get(svg.as_uri())
        out = driver.execute_script(
            "var b = document.documentElement.getBoundingClientRect();"
            "return Array.from(document.querySelectorAll('text')).map(t => {"
            " var r = t.getBoundingClientRect();"
            " return [t.textContent, r.left - b.left, b.right - r.right, r.top - b.top,"
            "  b.bottom - r.bottom]; }).filter(x => Math.min(x[1], x[2], x[3], x[4]) < -0.5)"
        )
        assert not out, f"{svg.relative_to(BOARDS)}: text outside the figure: {out[:3]}"


def test_import_paths_wrap_only_at_dots(driver: Any) -> None:
    pages = []
    for s in _suites_with_entries():
        pages += [s / "index.html", *sorted(s.glob("entries/*.html"))[:3]]
    wrapped = 0
    for width in (390, 1280):
        _viewport(driver, width, 844)
        for page in pages:
            driver.get(page.as_uri())
            res = driver.execute_script(
                "var out = [], lines = 0;"
                "document.querySelectorAll('code.ip').forEach(c => {"
                " if (c.getClientRects().length > 1) { lines += 1; }"
                " c.childNodes.forEach(n => {"
                "  if (n.nodeType === 1 && n.classList.contains('nw')) n = n.firstChild;"
                "  if (!n || n.nodeType !== 3) return;"
                "  var r = document.createRange(); r.selectNodeContents(n);"
                "  if (r.getClientRects().length > 1) out.push(c.textContent + ' / ' + n.data); });"
                "}); return [document.querySelectorAll('code.ip').length, lines, out];"
            )
            n, lines, broken = res
            assert n >= 1, page
            assert not broken, f"{page.relative_to(BOARDS)} @{width}: broken inside {broken[:3]}"
            wrapped += lines if width == 390 else 0
    assert wrapped > 0  # on a phone some paths do wrap, and only at their dots


def test_the_console_check_sees_script_errors(driver: Any, tmp_path: Path) -> None:
    # the no-console-errors assertion above is only meaningful if errors do show up
    page = tmp_path / "broken.html"
    page.write_text(
        (BOARDS / "index.html")
        .read_text()
        .replace("<script>", "<script>no_such_function();</script><script>", 1)
    )
    driver.get(page.as_uri())
    assert any(e["level"] == "SEVERE" for e in driver.get_log("browser"))
