"""The operator console in a real headless browser (Debian's chromium through chromedriver).

Opens GET / of a running appliance, waits until the charts have data, then fails on any
browser console entry of level WARNING or SEVERE, on any resource loaded from another origin,
and on an empty chart: each chart's canvas must hold drawn pixels (read through the canvas' own
pixel data) and the same region of a PNG screenshot must hold coloured (series) pixels.

    console_test.py BASE_URL --expect full|stream-only --screenshot FILE.png
"""

import argparse
import io
import json
import sys
import threading
import time
import urllib.request

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

STREAM_CHARTS = ["shreds", "fec", "throughput", "latency", "end_to_end", "subscribers"]
ARCHIVE_CHARTS = ["archive_rate", "archive_latency"]
INSIGHTS_CHARTS = ["fees", "congestion"]
# Charts whose largest value must be above zero once data flows (the others may be 0 legitimately).
POSITIVE = ["shreds", "fec", "throughput", "latency", "end_to_end", "subscribers",
            "archive_rate", "archive_latency"]
# Bar charts hold all their values at once; a line needs some seconds of points to be visible.
BARS = ["latency", "fees"]
LINE_POINTS = 10
WAIT_SECONDS = 90


def fail(message):
    print(f"console test: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def browser(width, height):
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--hide-scrollbars", "--no-first-run", "--disable-extensions",
                 "--force-device-scale-factor=1", f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Both paths given: Selenium never looks for (or downloads) a driver or a browser.
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"),
                            options=options)


def rpc_load(base, stop):
    """A few JSON-RPC calls a second, so the archive charts have requests to show."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "getSlot"}).encode()
    while not stop.is_set():
        request = urllib.request.Request(base + "/", data=body,
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=5).read()
        except OSError as error:
            print(f"console test: rpc call failed: {error}", file=sys.stderr)
        stop.wait(0.2)


def chart_state(driver):
    """Per chart: points drawn, largest value, and the canvas' drawn pixels (own pixel data)."""
    return driver.execute_script("""
        const out = {};
        for (const figure of document.querySelectorAll('figure[data-chart]')) {
          const canvas = figure.querySelector('canvas');
          const rect = canvas.getBoundingClientRect();
          let coloured = 0;
          if (canvas.width > 0 && canvas.height > 0) {
            // Read a copy: reading the page's own contexts again and again makes chromium warn.
            const copy = document.createElement('canvas');
            copy.width = canvas.width;
            copy.height = canvas.height;
            const context = copy.getContext('2d', { willReadFrequently: true });
            context.drawImage(canvas, 0, 0);
            const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
            for (let i = 0; i < data.length; i += 4) {
              const max = Math.max(data[i], data[i + 1], data[i + 2]);
              const min = Math.min(data[i], data[i + 1], data[i + 2]);
              if (data[i + 3] > 128 && max - min > 80) coloured++;
            }
          }
          out[figure.dataset.chart] = {
            points: Number(figure.dataset.points || 0),
            max: Number(figure.dataset.max || 0),
            coloured,
            visible: figure.offsetParent !== null,
            rect: [rect.left, rect.top, rect.width, rect.height],
          };
        }
        return out;
    """)


def wait_for_charts(driver, needed):
    deadline = time.time() + WAIT_SECONDS
    while True:
        state = chart_state(driver)
        missing = [name for name in needed
                   if state[name]["points"] < (1 if name in BARS else LINE_POINTS)
                   or (name in POSITIVE and state[name]["max"] <= 0)]
        if not missing:
            return state
        if time.time() > deadline:
            fail(f"charts without data after {WAIT_SECONDS} s: {missing}: {json.dumps(state)}")
        time.sleep(1)


def check_screenshot(png, state, needed, path):
    with open(path, "wb") as file:
        file.write(png)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    for name in needed:
        left, top, width, height = (round(v) for v in state[name]["rect"])
        if width <= 0 or top + height > image.height or left + width > image.width:
            fail(f"chart {name} is not inside the screenshot ({state[name]['rect']}, image {image.size})")
        region = image.crop((left, top, left + width, top + height))
        coloured = sum(1 for r, g, b in region.getdata() if max(r, g, b) - min(r, g, b) > 80)
        if coloured < 30:
            fail(f"chart {name}: {coloured} coloured pixels in the screenshot ({path})")
        print(f"console test: chart {name}: {state[name]['points']} points, max "
              f"{state[name]['max']:.4g}, {coloured} coloured screenshot pixels")


def check_origins(driver):
    foreign = driver.execute_script("""
        const origin = location.origin + '/';
        const names = performance.getEntriesByType('navigation').map(e => e.name)
          .concat(performance.getEntriesByType('resource').map(e => e.name));
        const dom = [...document.querySelectorAll('[src],[href]')]
          .map(e => e.src || e.href).filter(u => !u.startsWith('data:'));
        return names.concat(dom).filter(u => !u.startsWith(origin));
    """)
    if foreign:
        fail(f"the page loaded or names other origins: {foreign}")
    count = driver.execute_script("return performance.getEntriesByType('resource').length")
    print(f"console test: {count} resources, all from the appliance's own origin")


def check_console(driver):
    entries = driver.get_log("browser")
    bad = [entry for entry in entries if entry.get("level") in ("WARNING", "SEVERE")]
    if bad:
        fail(f"browser console entries: {json.dumps(bad, indent=1)}")
    print(f"console test: browser console clean ({len(entries)} entries, none a warning or error)")


def check_sections(driver, expect):
    shown = driver.execute_script("""
        const out = {};
        for (const id of ['stream', 'archive', 'insights']) {
          const section = document.getElementById(id);
          out[id] = !section.querySelector('.off').classList.contains('hidden');
        }
        return out;
    """)
    off = {"full": [], "stream-only": ["archive", "insights"]}[expect]
    for section, says_off in shown.items():
        if says_off != (section in off):
            fail(f"section {section}: 'not running' shown = {says_off}, expected {section in off}")
    print(f"console test: sections not running say so: {off or 'none'}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--expect", choices=["full", "stream-only"], required=True)
    parser.add_argument("--screenshot", required=True)
    args = parser.parse_args()
    needed = STREAM_CHARTS + (ARCHIVE_CHARTS + INSIGHTS_CHARTS if args.expect == "full" else [])
    stop = threading.Event()
    if args.expect == "full":
        threading.Thread(target=rpc_load, args=(args.base, stop), daemon=True).start()
    driver = browser(1400, 1900)
    try:
        driver.get(args.base + "/")
        if driver.title != "Shred appliance console":
            fail(f"GET / has title {driver.title!r}")
        state = wait_for_charts(driver, needed)
        check_sections(driver, args.expect)
        for name in needed:
            if not state[name]["visible"] or state[name]["coloured"] < 30:
                fail(f"chart {name} drew {state[name]['coloured']} coloured canvas pixels")
        check_screenshot(driver.get_screenshot_as_png(), state, needed, args.screenshot)
        check_origins(driver)
        check_console(driver)
    finally:
        stop.set()
        driver.quit()
    print(f"console test: {args.expect}: {len(needed)} charts drawn, screenshot {args.screenshot}")


if __name__ == "__main__":
    main()
