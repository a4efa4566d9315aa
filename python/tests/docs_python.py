"""The Python examples of README.md and docs/*.md: every ```python block with ``>>>`` prompts is
run with doctest and its printed output compared line by line, as tests/readme_test.cpp does for
the command line's ``$ tacos`` blocks.

A page's blocks run in order in one namespace (a later block may use an earlier one's names),
in a fresh folder holding a link to examples/. A block's first line may be the shell command that
starts Python (``$ PYTHONPATH=build/python /usr/bin/python3``); it is not run. An exception is
shown as doctest shows it: ``Traceback (most recent call last):``, ``...`` and the last line.

Run ``/usr/bin/python3 python/tests/docs_python.py --update [FILE...]`` (with ``PYTHONPATH`` at the
built module) to rewrite the shown outputs after a change moves them; review ``git diff``.
"""
import doctest
import os
import re
import sys

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def pages(root):
    """README.md and docs/*.md, relative to ``root``."""
    docs = sorted("docs/" + n for n in os.listdir(os.path.join(root, "docs")) if n.endswith(".md"))
    return ["README.md"] + docs


def python_blocks(text):
    """(first line number, block text) of each ```python block with a ``>>>`` prompt."""
    blocks = []
    for match in _BLOCK.finditer(text):
        body = match.group(1)
        if not any(line.startswith(">>> ") for line in body.splitlines()):
            continue
        line = text.count("\n", 0, match.start(1)) + 1
        lines = body.splitlines(keepends=True)
        if lines and lines[0].startswith("$ "):  # how Python was started: not Python
            lines, line = lines[1:], line + 1
        blocks.append((line, "".join(lines)))
    return blocks


class _Recorder(doctest.DocTestRunner):
    """Keeps each failing example's actual output (for --update)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.got = []

    def report_failure(self, out, test, example, got):
        self.got.append((example, got))
        super().report_failure(out, test, example, got)


def run_page(name, text, workdir, verbose_out=None):
    """Runs a page's blocks in ``workdir``; returns [(line, example, got)] of the examples whose
    output differs (doctest's report goes to ``verbose_out``)."""
    globs = {"__name__": "__docs__"}
    failures = []
    here = os.getcwd()
    os.chdir(workdir)
    try:
        for line, block in python_blocks(text):
            test = doctest.DocTestParser().get_doctest(block, globs, f"{name}:{line}", name,
                                                       line - 1)
            runner = _Recorder(optionflags=0, verbose=False)
            runner.run(test, out=(verbose_out.write if verbose_out else lambda s: None),
                       clear_globs=False)
            failures += [(line + example.lineno, example, got) for example, got in runner.got]
    finally:
        os.chdir(here)
    return failures


def update(root, files):
    """Rewrites the outputs shown in ``files`` with what the examples print now."""
    import tempfile

    for name in files:
        path = os.path.join(root, name)
        text = open(path).read()
        with tempfile.TemporaryDirectory() as workdir:
            os.symlink(os.path.join(root, "examples"), os.path.join(workdir, "examples"))
            failures = run_page(name, text, workdir)
        if not failures:
            continue
        lines = text.splitlines(keepends=True)
        # From the bottom up, so earlier line numbers stay valid.
        for at, example, got in sorted(failures, key=lambda f: -f[0]):
            start = at - 1 + example.source.count("\n")  # index of the shown output's first line
            end = start + len(example.want.splitlines())
            if example.exc_msg is not None:  # keep "Traceback ... / ..." and show the new error
                exception = [g for g in got.splitlines() if g and not g.startswith(" ")][-1]
                got = example.want[:-len(example.exc_msg)] + exception + "\n"
            lines[start:end] = [got] if got else []
        open(path, "w").write("".join(lines))
        print(f"{name}: {len(failures)} output(s) rewritten", file=sys.stderr)


if __name__ == "__main__":
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = sys.argv[1:]
    if not args or args[0] != "--update":
        sys.exit(__doc__)
    update(root, args[1:] or pages(root))
