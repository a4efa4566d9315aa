"""One request, three entry points: `import tacos` gives the same collective time, K and
portfolio winner as `tacos synthesize --json` on the cases of tests/data/request_cases.txt
(tests/request_test.cpp checks the C++ library call on the same cases)."""
import os

import pytest

import tacos
from conftest import SOURCE_DIR, cli_json


def request_cases():
    path = os.path.join(SOURCE_DIR, "tests", "data", "request_cases.txt")
    with open(path) as f:
        return [line.split() for line in f if line.strip() and not line.startswith("#")]


def test_the_registry_is_the_one_list():
    assert tacos.ALGORITHMS == ("tacos", "ring", "direct", "rhd", "dbt", "hierarchical",
                                "biring", "bucket", "node-direct", "relay", "torus-trees", "nvls",
                                "nvls-tree", "collnet")


@pytest.mark.parametrize("topology,collective,size,chunks,model", request_cases())
def test_python_equals_the_command_line(topology, collective, size, chunks, model):
    k = chunks if chunks == "auto" else int(chunks)
    result = tacos.synthesize(topology, collective=collective, size=size, chunks_per_npu=k,
                              link_model=model)
    expected = cli_json("synthesize", "--topology", topology, "--collective", collective,
                        "--size", size, "--chunks-per-npu", chunks, "--link-model", model)
    assert result.collective_time_us == expected["collective_time_us"]
    assert result.chunks_per_npu == expected["chunks_per_npu"]
    assert result.portfolio_winner == expected["portfolio_winner"]


def test_report_keys_have_one_definition():
    # Every key the command prints, in its order, comes from the one list the sweep reads.
    keys = list(tacos._tacos.synthesize_keys())
    for args in (["--collective", "all-reduce"], ["--collective", "broadcast", "--root", "2"],
                 ["--collective", "all-gather", "--algorithm", "ring"]):
        printed = list(cli_json("synthesize", "--topology", "ring:4", "--size", "1MiB", *args))
        positions = [keys.index(k) for k in printed]
        assert positions == sorted(positions), printed
    from tacos import sweep
    needs_out = ("out", "astra_sim", "chakra_replay", "msccl_replay")
    assert sweep.REPORT_COLUMNS == [k for k in keys if k not in needs_out]
