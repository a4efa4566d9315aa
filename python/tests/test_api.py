"""`import tacos` gives what the `tacos` command's --json gives, for the same inputs."""
import json
import os
import threading
import time

import numpy as np
import pytest

import tacos
from conftest import SOURCE_DIR, cli, cli_error, cli_json, stable

# (Python keyword arguments, the same as command-line flags)
CASES = [
    (dict(topology=("torus2d:4x4", {}), collective="all-gather", size="1MiB", chunks_per_npu=2),
     ["--topology", "torus2d:4x4", "--collective", "all-gather", "--size", "1MiB",
      "--chunks-per-npu", "2"]),
    (dict(topology=("mesh2d:3x3", {"bandwidth": [50, 25], "latency": "700ns"}),
          collective="all-reduce", size=4 << 20, seed=3, trials=2),
     ["--topology", "mesh2d:3x3", "--bandwidth", "50,25", "--latency", "700ns", "--collective",
      "all-reduce", "--size", str(4 << 20), "--seed", "3", "--trials", "2"]),
    (dict(topology=("mesh2d:4x4", {}), collective="scatter", size="16MiB", root=5,
          npus=[0, 5, 10, 15]),
     ["--topology", "mesh2d:4x4", "--collective", "scatter", "--size", "16MiB", "--root", "5",
      "--npus", "0,5,10,15"]),
    (dict(topology=("ring:8", {}), collective="reduce-scatter", size="8MiB",
          algorithm="ring", link_model="astra"),
     ["--topology", "ring:8", "--collective", "reduce-scatter", "--size", "8MiB",
      "--algorithm", "ring", "--link-model", "astra"]),
    (dict(topology=("dgx-a100:2", {}), collective="all-gather", size="16MiB",
          chunks_per_npu="auto"),
     ["--topology", "dgx-a100:2", "--collective", "all-gather", "--size", "16MiB",
      "--chunks-per-npu", "auto"]),
    (dict(topology=("torus3d:2x2x2", {}), collective="broadcast", size="2MiB",
          time_only=True),
     ["--topology", "torus3d:2x2x2", "--collective", "broadcast", "--size", "2MiB",
      "--time-only"]),
]


def _run(kwargs):
    kwargs = dict(kwargs)
    spec, link = kwargs.pop("topology")
    return tacos.synthesize(tacos.Topology.from_spec(spec, **link), **kwargs)


@pytest.mark.parametrize("kwargs,flags", CASES, ids=[c[1][1] + "-" + c[1][3] for c in CASES])
def test_synthesize_equals_cli_json(kwargs, flags):
    result = _run(kwargs)
    expected = cli_json("synthesize", *flags)
    assert list(result.keys()) == list(expected.keys())  # same keys, same order
    assert stable(result.report) == stable(expected)
    assert result.collective_time_us == expected["collective_time_us"]
    assert result.bound_ratio == expected["bound_ratio"]
    assert result["transfers"] == expected["transfers"]
    if not kwargs.get("time_only"):
        assert len(result.transfers) == expected["transfers"]
        assert result.verified is True


def test_transfers_equal_the_cli_algorithm_file(tmp_path):
    flags = ["--topology", "torus2d:3x3", "--collective", "all-reduce", "--size", "3MiB",
             "--chunks-per-npu", "2"]
    cli("synthesize", *flags, "--out", tmp_path / "cli", "--format", "json")
    result = tacos.synthesize(tacos.Topology.from_spec("torus2d:3x3"), "all-reduce", "3MiB", 2)
    result.write(tmp_path / "py", formats=("json",))
    cli_text = (tmp_path / "cli" / "algorithm.json").read_text()
    assert (tmp_path / "py" / "algorithm.json").read_text() == cli_text  # byte for byte
    rows = json.loads(cli_text)["transfers"]
    t = result.transfers
    assert t.dtype.names == ("src", "dst", "start_us", "end_us", "chunks", "reduce")
    assert len(t) == len(rows) > 0
    for i, row in enumerate(rows):
        assert (t["src"][i], t["dst"][i]) == (row[0], row[1])
        assert round(t["start_us"][i] * 1e6) == row[2]
        assert round(t["end_us"][i] * 1e6) == row[3]
        assert t["chunks"][i] == tuple(row[4])
        assert bool(t["reduce"][i]) == bool(len(row) > 5 and row[5])
    assert t["reduce"].any()  # an all-reduce has reductions
    assert t["end_us"].max() == result.collective_time_us
    frame = result.to_pandas()
    assert list(frame.columns) == list(t.dtype.names) and len(frame) == len(t)


def test_transfers_array_verifies_and_a_broken_one_does_not():
    result = tacos.synthesize(tacos.Topology.from_spec("mesh2d:3x3"), "all-gather", "9MiB", 2)
    check = tacos.verify(result)
    assert check["verified"] is True
    assert check["collective_time_us"] == result.collective_time_us
    assert check["transfers"] == result["transfers"]
    # Dropping the last transfer leaves some NPU without a chunk.
    with pytest.raises(tacos.Error, match=r"^verify: transfers: "):
        tacos.verify(result, transfers=result.transfers[:-1])
    # A transfer that starts before its chunk reached its source is not causal.
    t = result.transfers.copy()
    late = int(np.argmax(t["start_us"]))
    t["start_us"][late] = 0.0
    with pytest.raises(tacos.Error, match=r"^verify: transfers: "):
        tacos.verify(result, transfers=t)


def test_multicast_result_verifies_with_its_groups():
    # switch:8:multicast Broadcast: copies of one message share the root's port; verify() passes
    # the groups on (the array's dtype is unchanged), an edited copy of the same length too.
    result = tacos.synthesize(tacos.Topology.from_spec("switch:8:multicast"), "broadcast",
                              "8MiB", 4)
    assert tacos.verify(result)["verified"] is True
    assert tacos.verify(result, transfers=result.transfers.copy())["verified"] is True
    # Without the groups the copies would double-book the root's port.
    with pytest.raises(tacos.Error, match=r"carries two transfers at once"):
        tacos.verify(result, transfers=result.transfers[:-1])


def test_bound_compare_describe_equal_cli():
    topo = tacos.Topology.from_spec("torus2d:4x4", bandwidth=50, latency=0.5)
    flags = ["--topology", "torus2d:4x4", "--bandwidth", "50", "--latency", "0.5"]
    assert tacos.bound(topo, "all-reduce", "64MiB", 4) == cli_json(
        "bound", *flags, "--collective", "all-reduce", "--size", "64MiB", "--chunks-per-npu", "4")
    assert topo.describe() == cli_json("topology", "describe", *flags)
    assert (topo.npus, topo.links, topo.switches) == (16, 64, 0)

    frame = tacos.compare(topo, "all-gather", "16MiB")
    expected = cli_json("compare", *flags, "--collective", "all-gather", "--size", "16MiB")
    assert frame.attrs == {k: v for k, v in expected.items() if k != "results"}
    rows = frame.drop(columns=["synthesis_seconds"]).to_dict("records")
    for row, want in zip(rows, expected["results"]):
        want = {k: v for k, v in want.items() if k != "synthesis_seconds"}
        got = {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
        assert got == want
    # By default every algorithm the fabric can run: NCCL's in-switch ones need a reducing switch.
    in_switch = ("nvls", "nvls-tree", "collnet")
    assert list(frame["algorithm"]) == [a for a in tacos.ALGORITHMS if a not in in_switch]
    assert len(frame) == len(expected["results"])
    nvls = tacos.compare("switch:4:nvls", "all-reduce", "1MiB")
    assert list(nvls["algorithm"]) == list(tacos.ALGORITHMS)


def test_simulate_and_verify_files_equal_cli(tmp_path):
    result = tacos.synthesize("torus2d:4x4", "reduce-scatter", "4MiB")
    result.write(tmp_path, formats=["json", "msccl"])
    path = tmp_path / "algorithm.json"
    for command, fn in (("simulate", tacos.simulate), ("verify", tacos.verify)):
        got = fn(path, topology="torus2d:4x4", link_model="astra")
        assert got == cli_json(command, "--algorithm", path, "--topology", "torus2d:4x4",
                               "--link-model", "astra")
    assert tacos.simulate(path)["collective_time_us"] == result.collective_time_us


def test_write_all_formats_matches_cli_astra_expectation(tmp_path):
    flags = ["--topology", "ring:4", "--collective", "all-gather", "--size", "1MiB"]
    expected = cli_json("synthesize", *flags, "--out", tmp_path / "cli", "--format",
                        "json,chakra,msccl")
    result = tacos.synthesize("ring:4", "all-gather", "1MiB")
    astra = result.write(tmp_path / "py")
    assert astra == expected["astra_sim"]
    for name in ("algorithm.json", "msccl/tacos_all-gather.xml", "chakra/tacos.0.et"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


def test_write_trace_and_html_equal_cli(tmp_path):
    flags = ["--topology", "ring:4", "--collective", "all-gather", "--size", "1MiB"]
    cli_json("synthesize", *flags, "--out", tmp_path / "cli", "--format", "trace,html")
    result = tacos.synthesize("ring:4", "all-gather", "1MiB")
    result.write(tmp_path / "py", formats=["trace", "html"])
    for name in ("trace.json", "view.html"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    import json
    events = json.loads((tmp_path / "py" / "trace.json").read_text())["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == len(result.transfers)


@pytest.mark.parametrize("kwargs", [
    dict(topology="torus2d:0x4"),
    dict(size="64XB"),
    dict(size="0"),
    dict(chunks_per_npu="many"),
    dict(collective="all-shuffle"),
    dict(algorithm="rhd", topology="ring:6"),
    dict(root=3, collective="all-gather"),
    dict(link_model="fast"),
    dict(npus="0,99"),
    dict(portfolio="maybe"),
    dict(all_reduce_mode="eager"),
], ids=lambda k: "-".join(map(str, k.values())))
def test_bad_input_raises_the_cli_message_in_python_names(kwargs):
    kwargs = {"topology": "torus2d:4x4", "size": "1MiB", "collective": "all-reduce", **kwargs}
    flags = []
    for key, value in kwargs.items():
        flags += ["--" + key.replace("_", "-"), str(value)]
    message = cli_error("synthesize", *flags)
    with pytest.raises(tacos.Error) as caught:
        tacos.synthesize(**kwargs)
    assert isinstance(caught.value, ValueError)
    # The command line's words, with the Python parameters where it names its flags.
    assert "--" not in str(caught.value)
    expected = message
    for key in kwargs:
        expected = expected.replace("--" + key.replace("_", "-"), key)
    assert str(caught.value) == expected


@pytest.mark.parametrize("kwargs,message", [
    (dict(size=-5), "size: expected a positive number of bytes as an int or a string like "
                    "'64MiB', got -5"),
    (dict(size="0"), "size: size must be greater than zero, got '0'"),
    (dict(size=None), "size: expected a positive number of bytes as an int or a string like "
                      "'64MiB', got None"),
    (dict(collective=None), "collective: expected a collective such as 'all-gather', got None"),
    (dict(collective=["all-gather"]), "collective: expected a collective such as 'all-gather', "
                                      "got ['all-gather']"),
    (dict(link_model=None), "link_model: expected 'tacos' or 'astra', got None"),
    (dict(chunks_per_npu=0), "chunks_per_npu: expected a whole number >= 1 or 'auto', got 0"),
    (dict(trials="2"), "trials: expected a whole number >= 1, got '2'"),
    (dict(threads=-1), "threads: expected a whole number >= 0, got -1"),
    (dict(root="0", collective="broadcast"), "root: expected a whole number >= 0, got '0'"),
    (dict(npus=[0, None]), "npus: expected NPU ids as a list of ints or a string like "
                           "'0-7,16-23', got [0, None]"),
    (dict(time_only="yes"), "time_only: expected True or False, got 'yes'"),
    (dict(algorithm=None), "algorithm: expected one of " + ", ".join(tacos.ALGORITHMS) +
                           ", got None"),
    (dict(topology=None), "topology: expected a tacos.Topology, a spec string or a file name, "
                          "got None"),
    (dict(topology="torus2d:0x4"), "topology 'torus2d:0x4': sizes must be at least 1, got '0'"),
], ids=lambda v: str(v)[:40])
def test_errors_name_the_python_parameter_and_the_value(kwargs, message):
    kwargs = {"topology": "torus2d:4x4", "size": "1MiB", **kwargs}
    with pytest.raises(tacos.Error) as caught:  # never pybind11's TypeError signature dump
        tacos.synthesize(**kwargs)
    assert str(caught.value) == message


def test_topology_bound_compare_and_write_errors_name_their_parameters(tmp_path):
    with pytest.raises(tacos.Error, match=r"^spec 'torus2d:0x4': sizes must be at least 1"):
        tacos.Topology.from_spec("torus2d:0x4")
    with pytest.raises(tacos.Error, match=r"^bandwidth: expected a bandwidth in GB/s such as "
                                          r"50, got 'fast'$"):
        tacos.Topology.from_spec("ring:4", bandwidth="fast")
    with pytest.raises(tacos.Error, match=r"^latency: expected a number, a string or a list of "
                                          r"them, got \[1, None\]$"):
        tacos.Topology.from_spec("ring:4", latency=[1, None])
    with pytest.raises(tacos.Error, match=r"^switch_model: expected 'device' or 'unwind', "
                                          r"got 'flat'$"):
        tacos.Topology.from_spec("switch:4", switch_model="flat")
    with pytest.raises(tacos.Error, match=r"^algorithms: unknown algorithm 'fastest' "):
        tacos.compare("ring:4", algorithms=["tacos", "fastest"])
    with pytest.raises(tacos.Error, match=r"^algorithms: expected None, a list of names"):
        tacos.compare("ring:4", algorithms=[None])
    with pytest.raises(tacos.Error, match=r"^collective: expected a collective such as "
                                          r"'all-gather', got None$"):
        tacos.bound("ring:4", collective=None)
    with pytest.raises(tacos.Error, match=r"^algorithm: expected a file name"):
        tacos.simulate(None)
    result = tacos.synthesize("ring:4", size="1MiB")
    # The staging folder goes beside DIR: the message names the folder that refused it.
    with pytest.raises(tacos.Error) as caught:
        result.write("/proc/nope")
    assert str(caught.value).startswith("dir /proc/nope: cannot create a folder in /proc (")
    assert str(caught.value).endswith("); choose a writable place")
    with pytest.raises(tacos.Error, match=r"^formats: expected 'json', 'chakra', 'msccl'"):
        result.write(tmp_path, formats=None)
    assert not any(tmp_path.iterdir())  # nothing written


def test_auto_budget_stops_the_k_search_and_says_so():
    # A budget any K = 1 run exceeds: K = 2 is never started, and the report says so.
    flags = ["--topology", "mesh2d:4x4", "--collective", "all-reduce", "--size", "1MiB",
             "--chunks-per-npu", "auto", "--link-model", "astra"]
    cut = tacos.synthesize("mesh2d:4x4", "all-reduce", "1MiB", "auto", link_model="astra",
                           auto_budget=1e-9)
    assert cut.chunks_per_npu == 1
    assert cut.auto_stopped.startswith(
        "tacos: the 1e-09 s budget stopped the search after K = 1")
    assert stable(cut.report) == stable(cli_json("synthesize", *flags, "--auto-budget", "1e-9"))
    # Unlimited (the default), on a quick case: the search goes past K = 1 and reports nothing.
    free = tacos.synthesize("torus2d:4x4", "all-gather", "16MiB", "auto", link_model="astra")
    assert free.chunks_per_npu > 1 and free.auto_stopped is None
    assert stable(free.report) == stable(cli_json(
        "synthesize", "--topology", "torus2d:4x4", "--size", "16MiB", "--chunks-per-npu", "auto",
        "--link-model", "astra"))
    assert "auto_stopped" not in tacos.synthesize("ring:4", size="1MiB").report  # K given
    with pytest.raises(tacos.Error, match=r"^auto_budget: expected seconds as a number >= 0 "
                                          r"\(0: no limit\), got -1$"):
        tacos.synthesize("ring:4", size="1MiB", chunks_per_npu="auto", auto_budget=-1)


def test_defaults_are_the_command_lines():
    # tacos synthesize/bound/compare with only a topology: All-Gather of 64 MiB, K = 1.
    result = tacos.synthesize("torus2d:4x4")
    assert stable(result.report) == stable(cli_json("synthesize", "--topology", "torus2d:4x4"))
    assert (result.collective, result.size_bytes, result.chunks_per_npu) == (
        "all-gather", 64 << 20, 1)
    assert tacos.bound("torus2d:4x4") == cli_json("bound", "--topology", "torus2d:4x4")
    frame = tacos.compare("torus2d:4x4", algorithms=["ring"])
    assert frame.attrs["collective"] == "all-gather"
    assert frame.attrs["size_bytes"] == 64 << 20


def test_portfolio_keyword_keeps_the_fastest_schedule_or_the_pure_greedy(tmp_path):
    # switch:16 Broadcast, K = 128: the relay baseline (1396.125 us) and NCCL's double binary
    # tree (1447.453125 us) beat TACOS's own schedule (1467.984375 us); the portfolio keeps
    # relay's schedule, portfolio=False TACOS's.
    flags = ["--topology", "switch:16", "--collective", "broadcast", "--size", "64MiB",
             "--chunks-per-npu", "128"]
    kept = tacos.synthesize("switch:16", "broadcast", "64MiB", chunks_per_npu=128)
    greedy = tacos.synthesize("switch:16", "broadcast", "64MiB", chunks_per_npu=128,
                              portfolio=False)
    assert stable(kept.report) == stable(cli_json("synthesize", *flags))
    assert stable(greedy.report) == stable(cli_json("synthesize", *flags, "--portfolio", "off"))
    assert (kept.portfolio_winner, kept.collective_time_us) == ("relay", 1396.125)
    assert kept.greedy_time_us == greedy.collective_time_us == 1467.984375
    assert greedy.portfolio_winner is None and greedy.portfolio_skipped == "--portfolio off"
    same = tacos.synthesize("switch:16", "broadcast", "64MiB", chunks_per_npu=128, portfolio="off")
    assert same.collective_time_us == greedy.collective_time_us
    assert len(kept.transfers) == kept["transfers"]
    kept.write(tmp_path, formats="json")
    assert json.loads((tmp_path / "algorithm.json").read_text())["synthesizer"] == "tacos/relay"
    assert tacos.simulate(tmp_path / "algorithm.json",
                          topology="switch:16")["collective_time_us"] == 1396.125
    for portfolio, time in ((True, 1396.125), (False, 1467.984375)):
        frame = tacos.compare("switch:16", "broadcast", "64MiB", chunks_per_npu=128,
                              portfolio=portfolio).set_index("algorithm")
        assert frame.loc["tacos", "collective_time_us"] == time
        assert frame.loc["dbt", "collective_time_us"] == 1447.453125
        assert frame.loc["relay", "collective_time_us"] == 1396.125
        assert frame.loc["tacos", "greedy_time_us"] == 1467.984375


def test_topology_file_errors_and_loading(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("npus: [\n")
    message = cli_error("topology", "describe", "--topology", bad)
    with pytest.raises(tacos.Error) as caught:
        tacos.Topology.from_file(bad)
    assert str(caught.value) == message
    path = os.path.join(SOURCE_DIR, "examples", "hetero_mesh.yaml")
    good = tacos.Topology.from_file(path)
    assert good.describe() == cli_json("topology", "describe", "--topology", path)
    assert good.npus > 0 and good.describe()["connected"] is True


def test_sizes_accept_ints_and_strings():
    topo = tacos.Topology.from_spec("ring:4")
    a = tacos.synthesize(topo, "all-gather", 1 << 20)
    b = tacos.synthesize(topo, "all-gather", "1MiB")
    assert stable(a.report) == stable(b.report) and a.size_bytes == 1 << 20
    with pytest.raises(tacos.Error, match=r"^size: .* got 1\.5$"):
        tacos.synthesize(topo, "all-gather", 1.5)


def test_two_threads_synthesize_at_once_with_the_gil_released():
    topo = tacos.Topology.from_spec("torus2d:8x8")
    kwargs = dict(collective="all-reduce", size="64MiB", chunks_per_npu=4)
    started = time.perf_counter()
    serial = tacos.synthesize(topo, **kwargs)
    one_call = time.perf_counter() - started
    assert one_call > 0.05, "the case must take long enough to observe"

    results, gaps = [None, None], []
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(
        i, tacos.synthesize(topo, seed=1, **kwargs))) for i in range(2)]
    last = time.perf_counter()
    for t in threads:  # start() itself would wait for a thread holding the GIL: a gap too
        t.start()
    while any(t.is_alive() for t in threads):  # this thread keeps running while C++ works
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
        time.sleep(0.001)
    for t in threads:
        t.join()
    for r in results:
        assert r is not None and stable(r.report) == stable(serial.report)
    # Holding the GIL would stall this loop for both synthesize calls (2 x one_call).
    assert max(gaps) < one_call * 0.75, (max(gaps), one_call)
    assert len(gaps) > 10


def test_docstrings_everywhere():
    for name in tacos.__all__:
        obj = getattr(tacos, name)
        if callable(obj) and name != "Error":
            assert obj.__doc__ and len(obj.__doc__) > 40, name
    for name in ("from_spec", "from_file", "describe", "npus", "links"):
        assert getattr(tacos.Topology, name).__doc__, name
    for name in ("transfers", "to_pandas", "write"):
        assert getattr(tacos.Result, name).__doc__, name


def test_threads_share_one_topology_with_switches():
    # dgx-a100:2 has NVSwitches and leaves: their routes are computed lazily, once per object.
    topo = tacos.Topology.from_spec("dgx-a100:2")
    serial = [stable(tacos.synthesize(topo, c, "16MiB").report)
              for c in ("all-gather", "all-reduce", "reduce-scatter", "broadcast")]
    out = [None] * 4
    threads = [threading.Thread(target=lambda i=i, c=c: out.__setitem__(
        i, stable(tacos.synthesize(topo, c, "16MiB").report)))
        for i, c in enumerate(("all-gather", "all-reduce", "reduce-scatter", "broadcast"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == serial


def test_workload_equals_cli():
    prefix = os.path.join(SOURCE_DIR, "..", "shared", "data", "workloads", "stg-gpt-dp2-tp4", "gpt")
    if not os.path.exists(prefix + ".0.et"):
        pytest.skip(f"workload {prefix} not found (../shared absent)")
    got = tacos.workload("switch:8", prefix)
    assert got == cli_json("workload", "--et", prefix, "--topology", "switch:8")
    assert len(got["collectives"]) == 14
    # The predicted step is the last rank's, and a slower roofline slows every rank's compute.
    ranks = got["predicted_ranks"]
    assert got["predicted_step_us"] == max(r["step_time_us"] for r in ranks)
    slow = tacos.workload("switch:8", prefix, peak_tflops=450, local_mem_bw=800)
    for r, s in zip(ranks, slow["predicted_ranks"]):
        assert r["compute_us"] > 0
        assert s["compute_us"] == pytest.approx(2 * r["compute_us"], rel=1e-4)
    with pytest.raises(tacos.Error, match="relays through NPUs outside its group on ring:8"):
        tacos.workload("ring:8", prefix)
