"""Every Python example of README.md and docs/*.md prints what the page shows (docs_python.py)."""
import os

import pytest

from conftest import SOURCE_DIR
from docs_python import pages, python_blocks, run_page


def _page(name):
    with open(os.path.join(SOURCE_DIR, name)) as f:
        return f.read()


def _workdir(tmp_path):
    os.symlink(os.path.join(SOURCE_DIR, "examples"), tmp_path / "examples")
    return tmp_path


PAGES = [name for name in pages(SOURCE_DIR) if python_blocks(_page(name))]


def test_the_python_page_has_examples():
    assert "docs/python.md" in PAGES
    assert sum(len(python_blocks(_page(p))) for p in PAGES) >= 1


@pytest.mark.parametrize("name", PAGES)
def test_python_examples_print_what_the_page_shows(name, tmp_path):
    failures = run_page(name, _page(name), _workdir(tmp_path))
    assert not failures, "\n".join(
        f"{name}:{line}: {example.source.strip()}\n  shown: {example.want!r}\n  got:   {got!r}"
        for line, example, got in failures)


def test_a_changed_output_fails(tmp_path):
    # The first output line with a digit, that digit changed: the run must report that example.
    text = _page("docs/python.md")
    _, block = python_blocks(text)[0]
    shown = next(l for l in block.splitlines() if l and not l.startswith((">>> ", "... ", "$ "))
                 and any(c.isdigit() for c in l))
    digit = next(c for c in shown if c.isdigit())
    changed = shown.replace(digit, str((int(digit) + 1) % 10), 1)
    edited = text.replace(block, block.replace(shown, changed, 1), 1)
    failures = run_page("docs/python.md", edited, _workdir(tmp_path))
    assert len(failures) == 1 and changed in failures[0][1].want, failures
    assert shown in failures[0][2]  # what it printed: the page's original line
