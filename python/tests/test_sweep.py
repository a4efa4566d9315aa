"""python3 -m tacos.sweep on a LocalCluster: rows equal the CLI's, re-runs skip, plots draw."""
import os
import textwrap

import pytest

from sweep_helpers import (SMALL_SWEEP, assert_row_equals_cli, read_csv, run_sweep_cli,
                           stable_row, write_sweep)
from tacos.sweep import COLUMNS, SweepError, _csv_value, load_sweep, run_configuration


def test_sweep_of_24_configurations_equals_the_cli_one_by_one(tmp_path):
    sweep = write_sweep(tmp_path, SMALL_SWEEP)
    out = tmp_path / "results.csv"
    done = run_sweep_cli(sweep, "--out", out, "--workers", "2", "--plot", tmp_path / "plots")
    assert done.returncode == 0, done.stderr
    assert "24 configurations, 0 already in" in done.stderr
    rows = read_csv(out)
    assert list(rows[0].keys()) == COLUMNS
    assert len(rows) == 24
    assert len({r["config_id"] for r in rows}) == 24
    assert {r["config_id"] for r in rows} == {c["config_id"] for c in load_sweep(sweep)}
    errors = [r for r in rows if r["status"] == "error"]
    # rhd needs a power-of-two NPU count: the 3x3 torus's 4 rhd rows fail, the sweep goes on.
    assert len(errors) == 4 and all(r["config_algorithm"] == "rhd" for r in errors)
    assert all(r["config_topology"] == "torus2d:3x3" for r in errors)
    for row in rows:
        assert_row_equals_cli(row)
    auto = [r for r in rows if r["config_chunks_per_npu"] == "auto" and r["status"] == "ok"]
    assert auto and all(int(r["chunks_per_npu"]) >= 1 for r in auto)
    for name in ("time_vs_size.png", "bound_ratio.png"):
        path = tmp_path / "plots" / name
        assert path.stat().st_size > 10_000 and path.read_bytes()[:4] == b"\x89PNG"

    # Same --out again: everything is done, nothing runs, the file is unchanged.
    before = out.read_bytes()
    again = run_sweep_cli(sweep, "--out", out, "--workers", "2")
    assert again.returncode == 0, again.stderr
    assert "24 configurations, 24 already in" in again.stderr and "running 0" in again.stderr
    assert out.read_bytes() == before


def test_rows_carry_the_link_values_simulated_and_numeric_sizes(tmp_path):
    # Defaults resolved (torus 50 GB/s and 0.5 us; DGX A100: NVLink 300 and NIC 25 GB/s, ports
    # 0.25 and 1 us), overrides as given; an error row (rhd on 12 NPUs) has them too.
    sweep = write_sweep(tmp_path, textwrap.dedent("""\
        topologies:
          - torus2d:4x4
          - {spec: torus2d:4x4, bandwidth: 10}
          - {spec: mesh2d:3x4, bandwidth: [50, 25], latency: 700ns}
          - dgx-a100:2
        sizes: [1MiB, 2097152]
        algorithms: [rhd]
        """))
    configs = load_sweep(sweep)
    assert [c["config_size_bytes"] for c in configs[:2]] == ["1048576", "2097152"]
    rows = {(r["config_topology"], r["config_bandwidth_gibps"], r["config_size_bytes"]): r
            for r in map(run_configuration, configs)}
    expected = {("torus2d:4x4", ""): ("50", "0.5", "ok"),
                ("torus2d:4x4", "10"): ("10", "0.5", "ok"),
                ("mesh2d:3x4", "50,25"): ("50,25", "0.7", "error"),
                ("dgx-a100:2", ""): ("300,25", "0.25,1", "ok")}
    assert len(rows) == 8
    for (spec, bandwidth, size), row in rows.items():
        assert (row["link_bandwidth_gibps"], row["link_latency_us"],
                row["status"]) == expected[(spec, bandwidth)], row
        if row["status"] == "ok":
            assert row["size_bytes"] == int(size)
    # algbw (GB/s of 1e9 B/s) = size / time, not the 2^30 convention of the inputs.
    row = rows[("torus2d:4x4", "10", "2097152")]
    assert row["algbw_gbps"] == pytest.approx(2097152 / (row["collective_time_us"] * 1e3))


def test_auto_budget_is_per_configuration_and_reported_in_the_row(tmp_path):
    text = "topologies: [mesh2d:4x4]\nsizes: [1MiB]\nchunks_per_npu: [auto, 2]\n" \
           "link_models: [astra]\n"
    default = load_sweep(write_sweep(tmp_path, text, "default.yaml"))
    assert {c["config_auto_budget"] for c in default} == {"10"}
    configs = load_sweep(write_sweep(tmp_path, text + "auto_budget: 1e-9\n", "tiny.yaml"))
    rows = {c["config_chunks_per_npu"]: run_configuration(c) for c in configs}
    # Any K = 1 run spends more than 1e-9 s: the auto search stops there and the row says so.
    assert rows["auto"]["chunks_per_npu"] == 1
    assert rows["auto"]["auto_stopped"].startswith(
        "tacos: the 1e-09 s budget stopped the search after K = 1")
    assert rows["2"]["chunks_per_npu"] == 2 and "auto_stopped" not in rows["2"]
    for row in rows.values():  # as the CSV holds it
        assert_row_equals_cli({k: str(_csv_value(row.get(k))) for k in COLUMNS})


def test_bad_sweep_files_are_clear_errors(tmp_path):
    cases = {
        "topologies: [ring:4]\nsizes: [1MiB]\nalgoritms: [ring]\n": "unknown key(s) algoritms",
        "collectives: [all-gather]\nsizes: [1MiB]\n": "'topologies' is required",
        "topologies: [{bandwidth: 5}]\nsizes: [1MiB]\n": "topologies[0]: expected a spec",
        "topologies: [ring:4]\nsizes: [1MiB, 1MiB]\n": "listed twice",
        "topologies: [ring:4]\nsizes: [1MiB, 1048576]\n": "listed twice",
        "topologies: [ring:4]\nsizes: [1MiB, 1XB]\n": "sizes[1]: expected a positive whole number",
        "- just a list\n": "expected a mapping",
        "topologies: [ring:4]\nsizes: [1MiB]\nauto_budget: -1\n": "auto_budget: expected seconds",
    }
    for i, (text, message) in enumerate(cases.items()):
        path = write_sweep(tmp_path, text, f"bad{i}.yaml")
        with pytest.raises(SweepError, match=message.replace("(", r"\(").replace(")", r"\)")
                           .replace("[", r"\[").replace("]", r"\]")):
            load_sweep(path)
    done = run_sweep_cli(tmp_path / "bad0.yaml", "--out", tmp_path / "x.csv")
    assert done.returncode == 1 and "tacos.sweep: error:" in done.stderr
    assert not os.path.exists(tmp_path / "x.csv")


def test_a_csv_of_another_layout_is_refused(tmp_path):
    sweep = write_sweep(tmp_path, SMALL_SWEEP)
    out = tmp_path / "other.csv"
    out.write_text("a,b\n1,2\n")
    done = run_sweep_cli(sweep, "--out", out)
    assert done.returncode == 1 and "not a tacos sweep CSV" in done.stderr
    assert out.read_text() == "a,b\n1,2\n"


def test_the_example_sweep_is_the_one_the_readme_describes():
    from conftest import SOURCE_DIR

    configs = load_sweep(os.path.join(SOURCE_DIR, "examples", "sweeps", "paper.yaml"))
    assert len(configs) == 864
    assert {c["config_algorithm"] for c in configs} == {"tacos", "ring", "direct", "rhd", "dbt",
                                                         "hierarchical"}
    assert {int(c["config_size_bytes"]) for c in configs} == {1 << 20, 16 << 20, 256 << 20, 1 << 30}
    assert "dgx-a100:2" in {c["config_topology"] for c in configs}


def test_failed_rows_and_a_torn_last_line_are_run_again(tmp_path):
    sweep = write_sweep(tmp_path, "topologies: [ring:4, ring:8]\nsizes: [1MiB]\n"
                                  "algorithms: [tacos, ring]\n")
    out = tmp_path / "results.csv"
    done = run_sweep_cli(sweep, "--out", out, "--workers", "1")
    assert done.returncode == 0, done.stderr
    rows = read_csv(out)
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    # Row 0 as if its worker had been lost for good; row 3 cut mid-write by a killed run.
    lines = out.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    fields = lines[1].rstrip("\n").split(",")
    fields[header.index("status")] = "failed"
    fields[header.index("error")] = "KilledWorker: lost"
    torn = lines[4][: len(lines[4]) // 2]
    out.write_text(lines[0] + ",".join(fields) + "\n" + lines[2] + lines[3] + torn)
    again = run_sweep_cli(sweep, "--out", out, "--workers", "1")
    assert again.returncode == 0, again.stderr
    assert "4 configurations, 2 already in" in again.stderr and "running 2" in again.stderr
    final = read_csv(out)
    assert len(final) == 4 and len({r["config_id"] for r in final}) == 4
    assert all(r["status"] == "ok" for r in final)
    assert sorted(map(stable_row, final), key=lambda r: r["config_id"]) == sorted(
        map(stable_row, rows), key=lambda r: r["config_id"])
