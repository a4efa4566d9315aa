#!/usr/bin/env python3
"""Regenerates the viewer screenshots of docs/view.md (docs/images/view_*.png): one `tacos view`
page per topology family (ring, grid, DGX pod, fat-tree, force layout), two schedules side by
side, and an aggregated 32x32 torus, each opened in headless Chromium (tests/browser/browser.py)
with the slider at 37% of the time and, in detailed views, one chunk's path highlighted.

Usage: scripts/viewer_screenshots.py   (needs build/tacos, or $TACOS; chromium, chromium-driver,
python3-selenium). Review the pictures and `git diff --stat docs/images` afterwards."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
import browser  # noqa: E402

TACOS = os.environ.get("TACOS", os.path.join(ROOT, "build", "tacos"))
IMAGES = os.path.join(ROOT, "docs", "images")

# (picture name, topology, collective, size, algorithms: one, or two side by side)
PICTURES = [
    ("view_ring", "ring:8", "all-gather", "8MiB", ["tacos"]),
    ("view_grid", "mesh2d:4x4", "all-reduce", "16MiB", ["tacos"]),
    ("view_dgx", "dgx-h100:2", "all-gather", "64MiB", ["tacos"]),
    ("view_fattree", "fattree:4x4x2", "all-gather", "16MiB", ["tacos"]),
    ("view_force", "hypercube:16", "all-gather", "16MiB", ["tacos"]),
    ("view_side_by_side", "mesh2d:4x4", "all-reduce", "16MiB", ["tacos", "ring"]),
    ("view_torus_32x32", "torus2d:32x32", "all-gather", "64MiB", ["tacos"]),
]


def tacos(*args):
    subprocess.run([TACOS, *args], check=True, stdout=subprocess.DEVNULL)


def main():
    why = browser.missing()
    if why:
        sys.exit("viewer_screenshots: " + why)
    work = tempfile.mkdtemp(prefix="tacos-screenshots-")
    driver = browser.start(os.path.join(work, "profile"), width=1100, height=1000)
    try:
        for name, topology, collective, size, algorithms in PICTURES:
            files = []
            for algorithm in algorithms:
                out = os.path.join(work, name + "-" + algorithm)
                tacos("synthesize", "--topology", topology, "--collective", collective, "--size",
                      size, "--algorithm", algorithm, "--out", out)
                files.append(os.path.join(out, "algorithm.json"))
            page = os.path.join(work, name + ".html")
            tacos("view", *files, "--topology", topology, "--out", page)
            driver.get("file://" + page)
            driver.execute_script(
                "const s = document.getElementById('slider'); s.value = 370;"
                "s.dispatchEvent(new Event('input'));"
                "const v = window.tacosView, p = v.panels[0];"
                "if (p.s.detail) { const i = Math.floor(p.s.tx.start.length / 3);"
                "  v.selectChunk(0, p.s.tx.chunks[i][0]); }")
            target = os.path.join(IMAGES, name + ".png")
            driver.save_screenshot(target)
            print("wrote", os.path.relpath(target, ROOT), os.path.getsize(target), "bytes")
    finally:
        driver.quit()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
