"""Shared helpers: the built `tacos` command (TACOS_CLI, set by ctest) and its --json."""
import json
import os
import subprocess

import pytest

CLI = os.environ.get("TACOS_CLI", "")
SOURCE_DIR = os.environ.get("TACOS_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(
                                os.path.abspath(__file__)))))

# Measured, not computed: they differ between any two runs of the same input.
UNSTABLE_KEYS = {"synthesis_seconds", "peak_memory_mib"}


def cli(*args, check=True):
    """Runs the tacos command; returns CompletedProcess (text)."""
    if not CLI or not os.access(CLI, os.X_OK):
        pytest.fail("TACOS_CLI must name the built tacos binary (ctest sets it)")
    done = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"tacos {' '.join(map(str, args))} failed: {done.stderr}")
    return done


def cli_json(*args):
    return json.loads(cli(*args, "--json").stdout)


def cli_error(*args):
    """The message `tacos` prints for a bad input (without its "tacos: error: " prefix)."""
    done = cli(*args, check=False)
    assert done.returncode == 1, done
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("tacos: error: "), line
    return line[len("tacos: error: "):]


def stable(report):
    return {k: v for k, v in report.items() if k not in UNSTABLE_KEYS}
