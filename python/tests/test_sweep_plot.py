"""--plot: every system (topology, link values, switch and link model) keeps its own line, read
back from the matplotlib objects the pictures are drawn from."""
import textwrap

import matplotlib

matplotlib.use("Agg")

from sweep_helpers import read_csv, run_sweep_cli, write_sweep  # noqa: E402
from tacos.sweep_plot import bound_ratio_figures, load_results, size_figures  # noqa: E402

# torus2d:4x4 at its default 50 GB/s and at 10 GB/s, under both link models: four systems.
SWEEP = textwrap.dedent("""\
    topologies:
      - torus2d:4x4
      - {spec: torus2d:4x4, bandwidth: 10}
    collectives: [all-reduce]
    sizes: [1MiB, 4MiB]
    chunks_per_npu: [1, 2]
    algorithms: [tacos]
    link_models: [tacos, astra]
    """)


def _lines(figures):
    """{label: (x, y)} over every panel of every figure, and the figures' names."""
    lines = {}
    for _, fig in figures:
        for ax in fig.axes:
            for line in ax.get_lines():
                assert line.get_label() not in lines, "two lines with one label"
                lines[line.get_label()] = (list(line.get_xdata()), list(line.get_ydata()))
    return lines


def _assert_plain_ticks(figures):
    """Tick labels are plain numbers and sizes ("2", "1MiB"), never "6x10^0" mathtext."""
    for _, fig in figures:
        fig.canvas.draw()
        for ax in fig.axes:
            for tick in ax.get_xticklabels() + ax.get_yticklabels():
                text = tick.get_text()
                assert "times" not in text and "^" not in text and "$" not in text, text


def test_four_systems_draw_four_labelled_lines_per_picture(tmp_path):
    out = tmp_path / "results.csv"
    done = run_sweep_cli(write_sweep(tmp_path, SWEEP), "--out", out, "--workers", "1",
                         "--plot", tmp_path / "plots")
    assert done.returncode == 0, done.stderr
    rows = read_csv(out)
    assert len(rows) == 16 and all(r["status"] == "ok" for r in rows)
    # The bandwidth simulated is in every row, the default one included.
    assert {(r["config_bandwidth_gibps"], r["link_bandwidth_gibps"]) for r in rows} == {
        ("", "50"), ("10", "10")}

    # The best of K = 1, 2 per size, per system: what each line must show.
    best = {}
    for r in rows:
        key = (r["link_bandwidth_gibps"], r["config_link_model"], int(r["size_bytes"]))
        value = (float(r["collective_time_us"]), float(r["busbw_gbps"]))
        best[key] = min(best.get(key, value), value)
    frame = load_results(out)
    for value, column in (("collective_time_us", 0), ("busbw_gbps", 1)):
        figures = size_figures(frame, value)
        stem = "time_vs_size" if value == "collective_time_us" else "busbw_vs_size"
        # In a fixed order (rows arrive in any order from Dask): link models by name.
        assert [name for name, _ in figures] == [f"{stem}_astra", f"{stem}_tacos"]
        _assert_plain_ticks(figures)
        lines = _lines(figures)
        assert sorted(lines) == sorted(f"tacos, {bw} GiB/s, link {model}"
                                       for bw in ("50", "10") for model in ("tacos", "astra"))
        for label, (x, y) in lines.items():
            _, bw, model = label.split(", ")
            bw, model = bw.split()[0], model.split()[1]
            assert x == [1 << 20, 4 << 20]
            assert y == [best[(bw, model, size)][column] for size in x]
        # One figure per link model: its lines are that model's only.
        for name, fig in figures:
            model = name.rsplit("_", 1)[1]
            assert all(line.get_label().endswith(f"link {model}")
                       for ax in fig.axes for line in ax.get_lines())
    # 10 GB/s is slower than 50 GB/s at every size: the two lines are not one line twice.
    assert all(best[("10", m, s)][0] > best[("50", m, s)][0]
               for m in ("tacos", "astra") for s in (1 << 20, 4 << 20))

    ratio = bound_ratio_figures(frame)
    assert [name for name, _ in ratio] == ["bound_ratio_astra", "bound_ratio_tacos"]
    for _, fig in ratio:
        rows_shown = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert rows_shown == ["torus2d:4x4, 10 GiB/s", "torus2d:4x4, 50 GiB/s"]

    for stem in ("time_vs_size", "busbw_vs_size", "bound_ratio"):
        for model in ("tacos", "astra"):
            png = tmp_path / "plots" / f"{stem}_{model}.png"
            svg = tmp_path / "plots" / f"{stem}_{model}.svg"
            assert png.read_bytes()[:4] == b"\x89PNG"
            assert b"<svg" in svg.read_bytes()[:1000]


def test_labels_name_only_what_tells_systems_of_one_topology_apart():
    import pandas as pd

    from tacos.sweep_plot import _SYSTEM_COLUMNS, _varying

    def frame(systems):
        return pd.DataFrame([dict(zip(_SYSTEM_COLUMNS, s)) for s in systems])

    dgx = ("dgx-a100:2", "300,25", "0.25,1", "device", "tacos")
    torus = ("torus2d:4x4", "50", "0.5", "device", "tacos")
    # A DGX's link values differ from a torus's, but its name says so already.
    assert _varying(frame([dgx, torus]), _SYSTEM_COLUMNS[1:]) == []
    slow = ("torus2d:4x4", "10", "0.5", "device", "astra")
    assert _varying(frame([dgx, torus, slow]), _SYSTEM_COLUMNS[1:]) == [
        "link_bandwidth_gibps", "link_model"]
