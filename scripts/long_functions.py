#!/usr/bin/env python3
"""Lists the functions under src/ longer than a limit (default 150 lines), longest first.

Issue 23 asks that no function in src/ be longer than ~150 lines without a comment saying why it
must be one piece. Function extents come from Universal Ctags (`ctags --fields=+ne`); lambdas are
counted inside their enclosing function, not on their own.

    scripts/long_functions.py [--limit N] [paths...]   (default: src)
"""
import argparse
import pathlib
import subprocess
import sys


def functions(paths):
    out = subprocess.run(
        ["ctags", "-R", "--languages=C++", "--c++-kinds=f", "--fields=+neK", "-o", "-", *paths],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, path, *rest = line.split("\t")
        if name.startswith("__anon"):  # a lambda: part of its enclosing function
            continue
        fields = dict(f.split(":", 1) for f in rest if ":" in f)
        if "line" not in fields or "end" not in fields:
            continue
        owner = fields.get("class") or fields.get("struct")
        qualified = f"{owner.split('::')[-1]}::{name}" if owner else name
        start, end = int(fields["line"]), int(fields["end"])
        yield path, start, end - start + 1, qualified


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=150)
    parser.add_argument("paths", nargs="*", default=["src"])
    args = parser.parse_args()
    long = sorted((f for f in functions(args.paths) if f[2] > args.limit), key=lambda f: -f[2])
    for path, start, length, name in long:
        print(f"{length:5d}  {path}:{start}  {name}")
    print(f"{len(long)} functions longer than {args.limit} lines", file=sys.stderr)


if __name__ == "__main__":
    main()
