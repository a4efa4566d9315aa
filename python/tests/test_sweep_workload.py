"""A workload sweep on a LocalCluster: one row per fabric, algorithm and K, each the step that
tacos.workload predicts for the ASTRA-sim bundle; re-runs skip; the picture draws."""
import os
import textwrap

import pytest

import tacos
from conftest import SOURCE_DIR
from sweep_helpers import read_csv, run_sweep_cli, write_sweep
from tacos.sweep import WORKLOAD_COLUMNS, SweepError, load_sweep

WORKLOADS = os.path.join(SOURCE_DIR, "..", "shared", "data", "workloads")


def _workload_dir():
    path = os.path.join(WORKLOADS, "stg-gpt-dp2-tp4")
    if not os.path.exists(path + "/gpt.0.et"):
        pytest.skip(f"workload {path} not found (../shared absent)")
    return os.path.abspath(path)


def test_workload_sweep_rows_are_the_predicted_steps(tmp_path):
    workload = _workload_dir()
    sweep = write_sweep(tmp_path, textwrap.dedent(f"""\
        workload: {{et: {workload}/gpt, comm_groups: {workload}/gpt.json}}
        topologies: [switch:8, fc:8, {{spec: switch:8, bandwidth: 100}}]
        algorithms: [tacos, ring]
        chunks_per_npu: [4]
        """))
    out = tmp_path / "steps.csv"
    done = run_sweep_cli(sweep, "--out", out, "--workers", "2", "--plot", tmp_path / "plots")
    assert done.returncode == 0, done.stderr
    rows = read_csv(out)
    assert list(rows[0].keys()) == WORKLOAD_COLUMNS
    assert len(rows) == 6 and all(r["status"] == "ok" for r in rows), rows
    for row in rows:
        topology = tacos.Topology.from_spec(row["config_topology"],
                                            row["config_bandwidth_gibps"] or None)
        report = tacos.workload(topology, f"{workload}/gpt", algorithm=row["config_algorithm"],
                                chunks_per_npu=4)
        assert float(row["predicted_step_us"]) == report["predicted_step_us"]
        assert int(row["collectives"]) == len(report["collectives"])
        assert int(row["ranks"]) == 8
    by = {(r["config_topology"], r["config_bandwidth_gibps"], r["config_algorithm"]):
          float(r["predicted_step_us"]) for r in rows}
    # Twice the link bandwidth: the step's communication part shrinks, compute stays.
    assert by[("switch:8", "100", "tacos")] < by[("switch:8", "", "tacos")]
    assert {r["link_bandwidth_gibps"] for r in rows} == {"50", "100"}
    picture = tmp_path / "plots" / "workload_step.png"
    assert picture.stat().st_size > 5_000 and picture.read_bytes()[:4] == b"\x89PNG"

    again = run_sweep_cli(sweep, "--out", out, "--workers", "1")
    assert again.returncode == 0, again.stderr
    assert "6 configurations, 6 already in" in again.stderr


def test_a_workload_sweep_takes_no_collective_keys(tmp_path):
    sweep = write_sweep(tmp_path, "workload: {et: gpt}\ntopologies: [switch:8]\nsizes: [1MiB]\n")
    with pytest.raises(SweepError, match="sizes: not for a workload sweep"):
        load_sweep(sweep)
    sweep = write_sweep(tmp_path, "workload: {prefix: gpt}\ntopologies: [switch:8]\n")
    with pytest.raises(SweepError, match="workload: expected a mapping with 'et'"):
        load_sweep(sweep)
    # Relative paths are read beside the sweep file.
    sweep = write_sweep(tmp_path, "workload: {et: w/gpt}\ntopologies: [switch:8, fc:8]\n")
    configs = load_sweep(sweep)
    assert [c["config_workload"] for c in configs] == [str(tmp_path / "w" / "gpt")] * 2
    assert [c["config_chunks_per_npu"] for c in configs] == ["16", "16"]


def test_the_example_workload_sweep_is_the_one_the_docs_show():
    _workload_dir()
    example = os.path.join(SOURCE_DIR, "examples", "sweeps", "workload_gpt.yaml")
    configs = load_sweep(example)
    assert len(configs) == 6
    assert all(os.path.exists(c["config_workload"] + ".0.et") for c in configs)
    with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
        docs = f.read()
    with open(example) as f:
        body = [line for line in f.read().splitlines() if not line.startswith("#")]
    assert "\n".join(body) in docs
