"""Helpers for the sweep tests: sweep files, reading result CSVs, the CLI's answer per row."""
import csv
import json
import os
import re
import subprocess
import sys
import textwrap

from conftest import CLI, UNSTABLE_KEYS
from tacos.sweep import REPORT_COLUMNS, _csv_value

PYTHON = "/usr/bin/python3"

# 2 x 2 x 1 x 2 x 3 = 24 configurations, tens of ms each; rhd refuses 9 NPUs (an error row).
SMALL_SWEEP = textwrap.dedent("""\
    topologies:
      - torus2d:3x3
      - {spec: mesh2d:2x4, bandwidth: [50, 25], latency: 1us}
    collectives: [all-gather, all-reduce]
    sizes: [1MiB]
    chunks_per_npu: [1, auto]
    algorithms: [tacos, ring, rhd]
    """)

# 8 slower tasks (a few hundred ms each) so that a sweep is still running when we interfere.
SLOW_SWEEP = textwrap.dedent("""\
    topologies: [torus2d:8x8, mesh2d:8x8]
    collectives: [all-reduce]
    sizes: [32MiB, 96MiB]
    chunks_per_npu: [4, 8]
    algorithms: [tacos]
    """)


def write_sweep(tmp_path, text, name="sweep.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def stable_row(row):
    return {k: v for k, v in row.items() if k not in UNSTABLE_KEYS}


def cli_flags(row):
    flags = ["--topology", row["config_topology"], "--collective", row["config_collective"],
             "--size", row["config_size_bytes"], "--chunks-per-npu", row["config_chunks_per_npu"],
             "--algorithm", row["config_algorithm"], "--link-model", row["config_link_model"],
             "--seed", row["config_seed"], "--trials", row["config_trials"],
             "--switch-model", row["config_switch_model"],
             "--auto-budget", row["config_auto_budget"]]
    if row["config_bandwidth_gibps"]:
        flags += ["--bandwidth", row["config_bandwidth_gibps"]]
    if row["config_latency"]:
        flags += ["--latency", row["config_latency"]]
    return flags


def assert_row_equals_cli(row):
    """The row's report columns are the CLI's --json for its configuration, value for value
    (as the CSV writes them), or its error is the CLI's error message."""
    done = subprocess.run([CLI, "synthesize", *cli_flags(row), "--json"], capture_output=True,
                          text=True, timeout=300)
    if row["status"] == "error":
        assert done.returncode == 1
        # The same message, naming the Python parameter where the command names its flag.
        message = re.sub(r"--([a-z][a-z-]*)", lambda m: m.group(1).replace("-", "_"),
                         done.stderr.strip())
        assert message == "tacos: error: " + row["error"]
        return
    assert row["status"] == "ok", row
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)
    assert set(expected) <= set(REPORT_COLUMNS), set(expected) - set(REPORT_COLUMNS)
    for key in REPORT_COLUMNS:
        if key in UNSTABLE_KEYS:
            continue
        want = _csv_value(expected.get(key))
        assert row[key] == str(want), (key, row[key], want, row["config_id"])


def run_sweep_cli(*args, timeout=300, env=None):
    return subprocess.run([PYTHON, "-m", "tacos.sweep", *map(str, args), "--no-progress"],
                          capture_output=True, text=True, timeout=timeout,
                          env=env or os.environ.copy())


def sorted_stable(rows):
    return sorted((stable_row(r) for r in rows), key=lambda r: r["config_id"])


__all__ = ["PYTHON", "SMALL_SWEEP", "SLOW_SWEEP", "write_sweep", "read_csv", "stable_row",
           "cli_flags", "assert_row_equals_cli", "run_sweep_cli",
           "sorted_stable", "sys"]
