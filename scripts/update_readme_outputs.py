#!/usr/bin/env python3
"""Re-runs the blocks marked <!-- readme-test ... --> of README.md and docs/*.md and rewrites the
outputs they show.

tests/readme_test.cpp checks that every shown output is what its command prints; when a change
moves the numbers (a new matcher, a new report line) this script brings README.md, every
docs/*.md page and the pictures in docs/images/ (written by the pages' own commands) up to date.
It runs the commands as the test does: with build/tacos (or $TACOS), from a fresh folder laid
out like a clone (examples/, a copy of docs/, ../shared when it exists beside the checkout), one
folder per page. A line whose only difference is in a masked number (the marker's "mask:" names,
the same regexes as the test's) is kept as it is, so re-running does not churn timings. Blocks
whose "requires:" path is absent are left alone. Commands of `synthesize ... --out` show no
output (their summary is not shown).

Usage: scripts/update_readme_outputs.py [FILE...]   (from anywhere; FILE relative to the
checkout, default README.md and every docs/*.md; then review `git diff`)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TACOS = os.environ.get("TACOS", os.path.join(ROOT, "build", "tacos"))

# Keep in step with masks() in tests/readme_test.cpp.
MASKS = {
    "synthesis_seconds": r'("synthesis_seconds": )[-0-9.e+]+',
    "peak_memory_mib": r'("peak_memory_mib": )[-0-9.e+]+',
    "synthesis_time": r"(synthesis time +)[0-9.]+ s",
    "peak_memory": r"(peak memory +)[0-9.]+ MiB",
    "synthesis_column": r"( ) *[0-9]+\.[0-9]{3}(?=  (yes|no)$)",
}


def masked(line, names):
    for name in names:
        line = re.sub(MASKS[name], r"\1<masked>", line)
    return line


def marker_list(marker, key):
    at = marker.find(key)
    if at < 0:
        return []
    rest = marker[at + len(key):].split("-->")[0].split(";")[0]
    return [item.strip() for item in rest.split(",") if item.strip()]


def default_job():
    text = open(os.path.join(ROOT, "run.sh")).read()
    key = 'exec "$build/tacos" '
    return text[text.rindex(key) + len(key):].split("\n")[0]


def doc_files():
    pages = sorted("docs/" + name for name in os.listdir(os.path.join(ROOT, "docs"))
                   if name.endswith(".md"))
    return ["README.md"] + pages


def update(page):
    """Re-runs PAGE's marked blocks in a fresh clone-like folder; returns the failures."""
    work = tempfile.mkdtemp(prefix="tacos_readme_")
    try:
        clone = os.path.join(work, "clone")
        os.makedirs(clone)
        os.symlink(os.path.join(ROOT, "examples"), os.path.join(clone, "examples"))
        shutil.copytree(os.path.join(ROOT, "docs"), os.path.join(clone, "docs"))
        shared = os.path.join(os.path.dirname(ROOT), "shared")
        if os.path.exists(shared):
            os.symlink(shared, os.path.join(work, "shared"))
        text = open(os.path.join(ROOT, page)).read()
        if "\n<!-- readme-test" not in "\n" + text:
            return 0
        lines = text.split("\n")
        out, i, failures = [], 0, 0
        while i < len(lines):
            out.append(lines[i])
            if not lines[i].startswith("<!-- readme-test"):
                i += 1
                continue
            masks = marker_list(lines[i], "mask:")
            required = marker_list(lines[i], "requires:")
            skip = required and not os.path.exists(os.path.join(ROOT, required[0]))
            out.append(lines[i + 1])  # the opening fence
            i += 2
            commands = []
            while not lines[i].startswith("```"):
                if lines[i].startswith("$ "):
                    commands.append([lines[i][2:], []])
                elif commands:
                    commands[-1][1].append(lines[i])
                i += 1
            for n, (command, old) in enumerate(commands):
                out.append("$ " + command)
                if skip:
                    out.extend(old)
                    continue
                args = default_job() if command == "./run.sh" else command[len("tacos "):]
                run = subprocess.run(TACOS + " " + args, shell=True, cwd=clone,
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    failures += 1
                    print("%s: failed: $ %s\n%s" % (page, command, run.stderr), file=sys.stderr)
                shown = command == "./run.sh" or not (command.startswith("tacos synthesize ")
                                                       and " --out " in command)
                new = run.stdout.rstrip("\n").split("\n") if shown and run.stdout.strip() else []
                old_lines = list(old)
                while old_lines and not old_lines[-1].strip():
                    old_lines.pop()
                for k, line in enumerate(new):
                    if k < len(old_lines) and masked(old_lines[k], masks) == masked(line, masks):
                        new[k] = old_lines[k]
                out.extend(new)
                if n + 1 < len(commands) and new:
                    out.append("")
            out.append(lines[i])  # the closing fence
            i += 1
        open(os.path.join(ROOT, page), "w").write("\n".join(out))
        images = os.path.join(clone, "docs", "images")
        for name in os.listdir(images):
            shutil.copy(os.path.join(images, name), os.path.join(ROOT, "docs", "images", name))
        return failures
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    pages = sys.argv[1:] or doc_files()
    failures = sum(update(page) for page in pages)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
