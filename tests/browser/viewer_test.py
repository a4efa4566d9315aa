"""`tacos view` pages in headless Chromium (issue "Look at a schedule"): they load from file://
with no console error and no network request, draw every message, show exactly the messages in
flight at the slider's time, highlight a chunk's path, show two schedules' totals and ratio, and
open and animate a torus2d:32x32 All-Gather within 5 s.

Run by ctest (ViewerBrowser): viewer_test.py --tacos BINARY --work DIR. Exits 77 (skipped)
with a message when Chromium, chromedriver or selenium is absent."""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

ARGS = None


def tacos(*args):
    run = subprocess.run([ARGS.tacos, *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError("tacos %s failed: %s" % (" ".join(args), run.stderr))
    return run.stdout


def printed_time(out):
    return re.search(r"collective time +([0-9.]+) us", out).group(1)


class ViewerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = browser.fresh_dir(ARGS.work)
        w = cls.work
        cls.out_tacos = tacos("synthesize", "--topology", "mesh2d:4x4", "--collective",
                              "all-reduce", "--size", "16MiB", "--format", "json", "--out",
                              os.path.join(w, "tacos"))
        cls.out_ring = tacos("synthesize", "--topology", "mesh2d:4x4", "--collective",
                             "all-reduce", "--size", "16MiB", "--algorithm", "ring", "--format",
                             "json", "--out", os.path.join(w, "ring"))
        cls.one = os.path.join(w, "one.html")
        cls.two = os.path.join(w, "two.html")
        tacos("view", os.path.join(w, "tacos", "algorithm.json"), "--topology", "mesh2d:4x4",
              "--out", cls.one)
        cls.view_two = tacos("view", os.path.join(w, "tacos", "algorithm.json"),
                             os.path.join(w, "ring", "algorithm.json"), "--topology",
                             "mesh2d:4x4", "--out", cls.two)
        cls.driver = browser.start(os.path.join(w, "profile"))

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        shutil.rmtree(cls.work, ignore_errors=True)

    def open(self, path):
        url = "file://" + os.path.abspath(path)
        self.driver.get_log("performance")  # drop what earlier pages logged
        self.driver.get_log("browser")
        self.driver.get(url)
        for _ in range(100):
            if self.driver.execute_script("return window.tacosView && window.tacosView.ready"):
                break
            time.sleep(0.05)
        self.assertTrue(self.driver.execute_script("return window.tacosView.ready"))
        return url

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def test_loads_from_file_without_console_errors_or_network(self):
        url = self.open(self.one)
        self.assertEqual(browser.console_errors(self.driver), [])
        self.assertEqual(browser.network_requests(self.driver, url), [])

    def test_draws_every_message(self):
        self.open(self.one)
        data = browser.embedded_data(self.one)["schedules"][0]
        self.assertTrue(data["detail"])
        self.assertGreater(data["transfers"], 50)
        drawn = self.js("return document.querySelectorAll('#panel-0 svg.gantt rect.msg').length")
        self.assertEqual(drawn, data["transfers"])
        self.assertEqual(drawn, len(data["tx"]["start"]))

    def test_slider_shows_exactly_the_messages_in_flight(self):
        self.open(self.one)
        from selenium.webdriver.common.keys import Keys

        tx = browser.embedded_data(self.one)["schedules"][0]["tx"]
        slider = self.driver.find_element("id", "slider")
        seen_some = False
        # Six times set as a script would, then three by the keyboard as a user would.
        moves = [("set", v) for v in (0, 137, 371, 500, 733, 1000)]
        moves += [("key", Keys.HOME), ("key", Keys.PAGE_UP), ("key", Keys.ARROW_RIGHT)]
        for how, value in moves:
            if how == "set":
                self.js("const s = arguments[0]; s.value = arguments[1];"
                        "s.dispatchEvent(new Event('input'));", slider, value)
            else:
                slider.send_keys(value)
            t = int(self.driver.find_element("id", "clock").get_attribute("data-ps"))
            position = int(slider.get_attribute("value"))
            self.assertEqual(t, math.floor(position / 1000 * max(tx["end"]) + 0.5))
            expected = {i for i, (s, e) in enumerate(zip(tx["start"], tx["end"])) if s <= t < e}
            shown = self.js("return Array.from(document.querySelectorAll("
                            "'#panel-0 .inflight')).map(e => Number(e.dataset.tx))")
            self.assertEqual(set(shown), expected, "at %d ps (%s %s)" % (t, how, position))
            self.assertEqual(len(shown), len(expected))
            seen_some = seen_some or bool(expected)
        self.assertTrue(seen_some)

    def test_clicking_a_message_highlights_its_chunks_path(self):
        self.open(self.one)
        data = browser.embedded_data(self.one)["schedules"][0]
        tx = data["tx"]
        # The longest message: the easiest to click.
        i = max(range(len(tx["start"])), key=lambda k: (tx["end"][k] - tx["start"][k], -k))
        chunk = tx["chunks"][i][0]
        carrying = [k for k, chunks in enumerate(tx["chunks"]) if chunk in chunks]
        expected = {l for k in carrying for l in data["pairs"][tx["pair"][k]][2]}
        self.assertGreater(len(expected), 1)
        rect = self.driver.find_element("css selector", '#panel-0 rect.msg[data-tx="%d"]' % i)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", rect)
        rect.click()
        lit = self.js("return Array.from(document.querySelectorAll('#panel-0 line.link.path'))"
                      ".map(e => Number(e.dataset.link))")
        self.assertEqual(set(lit), expected)
        marked = self.js("return Array.from(document.querySelectorAll("
                         "'#panel-0 rect.msg.chunk-sel')).map(e => Number(e.dataset.tx))")
        self.assertEqual(set(marked), set(carrying))

    def test_hovering_a_message_shows_its_details(self):
        from selenium.webdriver.common.action_chains import ActionChains

        self.open(self.one)
        data = browser.embedded_data(self.one)["schedules"][0]
        tx = data["tx"]
        i = max(range(len(tx["start"])), key=lambda k: (tx["end"][k] - tx["start"][k], -k))
        rect = self.driver.find_element("css selector", '#panel-0 rect.msg[data-tx="%d"]' % i)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", rect)
        ActionChains(self.driver).move_to_element(rect).perform()
        tip = self.driver.find_element("id", "tooltip")
        self.assertTrue(tip.is_displayed())
        src, dst = data["pairs"][tx["pair"][i]][:2]
        us = lambda ps: ("%.6f" % (ps / 1e6)).rstrip("0").rstrip(".")  # noqa: E731
        text = tip.get_attribute("textContent")
        self.assertIn("message %d: %d \u2192 %d" % (i, src, dst), text)
        self.assertIn("%s us .. %s us, step %d" % (us(tx["start"][i]), us(tx["end"][i]),
                                                   tx["step"][i]), text)

    def test_side_by_side_shows_both_totals_and_the_ratio(self):
        url = self.open(self.two)
        self.assertEqual(browser.console_errors(self.driver), [])
        self.assertEqual(browser.network_requests(self.driver, url), [])
        schedules = browser.embedded_data(self.two)["schedules"]
        self.assertEqual([s["label"] for s in schedules], ["tacos", "ring"])
        for k, out in enumerate((self.out_tacos, self.out_ring)):
            total = self.driver.find_element("css selector", "#panel-%d .total" % k)
            self.assertEqual(int(total.get_attribute("data-ps")), schedules[k]["time_ps"])
            self.assertIn("collective time %s us," % printed_time(out), total.text)
        ratio = self.driver.find_element("id", "ratio")
        expected = schedules[1]["time_ps"] / schedules[0]["time_ps"]
        self.assertAlmostEqual(float(ratio.get_attribute("data-ratio")), expected, places=9)
        self.assertIn("B / A = %.3fx" % expected, ratio.text)
        self.assertIn("B / A = %.3fx" % expected, self.view_two)
        self.assertGreater(expected, 1.0)  # tacos beats ring on a mesh

    def test_torus_32x32_all_gather_opens_and_animates_within_5_seconds(self):
        path = os.path.join(self.work, "torus.html")
        tacos("synthesize", "--topology", "torus2d:32x32", "--collective", "all-gather",
              "--size", "64MiB", "--format", "json", "--out", os.path.join(self.work, "torus"))
        tacos("view", os.path.join(self.work, "torus", "algorithm.json"), "--topology",
              "torus2d:32x32", "--out", path)
        size = os.path.getsize(path)
        self.assertLess(size, 20 << 20)
        begin = time.monotonic()
        url = self.open(path)
        self.driver.find_element("id", "play").click()
        frames = self.js("return window.tacosView.frames")
        while time.monotonic() - begin < 10:
            state = self.js("return [window.tacosView.frames, window.tacosView.now]")
            if state[0] >= frames + 10 and state[1] > 0:
                break
            time.sleep(0.02)
        elapsed = time.monotonic() - begin
        # Responsive at 1,024 NPUs: frames drawn over one more second of play.
        first = self.js("return window.tacosView.frames")
        time.sleep(1.0)
        per_second = self.js("return window.tacosView.frames") - first
        print("torus2d:32x32 all-gather: %.1f MiB page, loaded and 10 frames played in %.2f s, "
              "then %d frames in 1 s" % (size / 2**20, elapsed, per_second), file=sys.stderr)
        self.assertLess(elapsed, 5.0)
        self.assertGreaterEqual(per_second, 5)
        self.assertEqual(browser.console_errors(self.driver), [])
        self.assertEqual(browser.network_requests(self.driver, url), [])
        data = browser.embedded_data(path)["schedules"][0]
        self.assertFalse(data["detail"])
        self.assertGreater(data["transfers"], 5000)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--tacos", required=True)
    parser.add_argument("--work", required=True)
    ARGS, rest = parser.parse_known_args()
    why = browser.missing()
    if why:
        print("skipped: " + why, file=sys.stderr)
        sys.exit(browser.SKIP)
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
