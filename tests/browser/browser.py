"""Headless Chromium from Debian (chromium, chromium-driver, python3-selenium) for the viewer's
browser tests and the docs' screenshots (scripts/viewer_screenshots.py)."""
import json
import os
import re
import shutil
import sys

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests


def missing():
    """Why the browser cannot run here ("" when it can)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            return path + " is absent (Debian packages chromium, chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "python3-selenium is absent"
    return ""


def start(profile_dir, width=1400, height=1000):
    """A headless Chromium that logs the console and the network (performance log)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--hide-scrollbars", "--force-device-scale-factor=1",
                "--window-size=%d,%d" % (width, height), "--user-data-dir=" + profile_dir,
                "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def embedded_data(html_path):
    """The JSON object a `tacos view` page embeds (<script id="tacos-data">)."""
    with open(html_path, encoding="utf-8") as f:
        text = f.read()
    match = re.search(r'<script id="tacos-data" type="application/json">(.*?)</script>', text,
                      re.S)
    return json.loads(match.group(1).replace("<\\/", "</"))


def network_requests(driver, own_url):
    """URLs the page asked for besides itself, from the performance log."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if url != own_url:
                urls.append(url)
    return urls


def console_errors(driver):
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


if __name__ == "__main__":
    print(missing() or "chromium, chromedriver and selenium are present")
    sys.exit(0)
