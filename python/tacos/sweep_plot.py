"""Pictures of a sweep's CSV (``python3 -m tacos.sweep ... --plot DIR``), drawn with matplotlib.

A *system* is what a row was simulated on: the topology, its link bandwidths and latencies as
resolved (``link_bandwidth_gibps``, ``link_latency_us``: a generator's defaults included), the
switch model and the link model. Two systems never share a line: each figure is one link model,
each panel one topology and collective, each line one algorithm on one system, labelled with
the algorithm and every property that differs between the sweep's systems (``tacos, 10 GiB/s,
link astra``). Where a configuration ran with several chunk counts, each point is the fastest.

- ``time_vs_size[_MODEL].png/.svg``: collective time against size.
- ``busbw_vs_size[_MODEL].png/.svg``: bus bandwidth (GB/s of 10^9 B/s, as nccl-tests prints
  it) against size.
- ``bound_ratio[_MODEL].png/.svg``: heat maps of time / lower bound, one per algorithm, rows =
  systems, columns = collectives; each cell is the geometric mean over sizes, so 1.00 means
  optimal at every size.

A workload sweep (``workload`` in the sweep file) draws ``workload_step.png/.svg``: per
configuration (system, algorithm, K) the step tacos predicts, split into the compute and the
communication it does not hide, the largest over the ranks.

``_MODEL`` is added when the sweep has several link models. Every figure is saved with its
legend and labels inside the picture (``bbox_inches="tight"``), as PNG and as SVG.
"""

import math
import os

_ALGORITHM_ORDER = ("tacos", "ring", "direct", "rhd", "dbt", "hierarchical", "biring", "bucket",
                    "node-direct", "relay", "torus-trees")
_LINE_STYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")

# The columns that make a system, and how a label names each when it varies.
_SYSTEM_COLUMNS = ("config_topology", "link_bandwidth_gibps", "link_latency_us",
                   "config_switch_model", "link_model")
_LABEL_OF = {
    "config_topology": lambda v: v,
    "link_bandwidth_gibps": lambda v: f"{v} GiB/s",
    "link_latency_us": lambda v: f"{v} us",
    "config_switch_model": lambda v: f"switch {v}",
    "link_model": lambda v: f"link {v}",
}


def load_results(csv_path):
    """The ``ok`` rows of a sweep CSV as a DataFrame, the system's columns as text."""
    import pandas as pd

    frame = pd.read_csv(csv_path, keep_default_na=True, float_precision="round_trip",
                        dtype={c: str for c in _SYSTEM_COLUMNS})
    frame = frame[frame["status"] == "ok"].copy()
    for column in _SYSTEM_COLUMNS:
        frame[column] = frame[column].fillna("")
    return frame


def _best_over_chunks(frame):
    keys = list(_SYSTEM_COLUMNS) + ["collective", "algorithm", "size_bytes"]
    idx = frame.groupby(keys)["collective_time_us"].idxmin()
    return frame.loc[idx]


def _size_label(size):
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def _algorithms(frame):
    present = list(dict.fromkeys(frame["algorithm"]))
    return [a for a in _ALGORITHM_ORDER if a in present] + [
        a for a in present if a not in _ALGORITHM_ORDER]


def _varying(frame, columns):
    """The columns among ``columns`` that tell apart two systems on one topology (a torus at two
    bandwidths): what a label must name. Values that differ only between topologies (a DGX's
    link bandwidths against a torus's) are told by the topology's name already."""
    by_topology = frame.groupby("config_topology")
    return [c for c in columns if (by_topology[c].nunique() > 1).any()]


def _system_label(row, varying):
    return ", ".join(_LABEL_OF[c](row[c]) for c in varying)


def _plain_log_axis(axis):
    """Log scale with plain numbers (1, 2, 5, 10, 20, ...) instead of 6x10^0."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _save(fig, out_dir, stem):
    paths = []
    for ext in ("png", "svg"):
        path = os.path.join(out_dir, f"{stem}.{ext}")
        fig.savefig(path, dpi=90, bbox_inches="tight")
        paths.append(path)
    return paths


def _per_model(best):
    """(link model, its rows, file name suffix) per link model of the sweep."""
    models = list(dict.fromkeys(best["link_model"]))
    return [(m, best[best["link_model"] == m], "" if len(models) == 1 else f"_{m}")
            for m in models]


def size_figures(frame, value="collective_time_us"):
    """One figure per link model of ``value`` (``collective_time_us`` or ``busbw_gbps``)
    against size: panels per (topology, collective), a line per algorithm and system.
    Returns [(file stem, figure)]."""
    import matplotlib.pyplot as plt

    best = _best_over_chunks(frame)
    algorithms = _algorithms(best)
    # Properties that tell systems apart, over the whole sweep so that labels agree between
    # figures; the topology is in the panel's title.
    varying = _varying(best, _SYSTEM_COLUMNS[1:])
    systems = list(dict.fromkeys(_system_label(r, varying) for _, r in best.iterrows()))
    series = [(a, s) for a in algorithms for s in systems]
    colors = plt.get_cmap("tab10" if len(series) <= 10 else "tab20")
    style = {key: dict(color=colors(i % colors.N), linestyle=_LINE_STYLES[
        systems.index(key[1]) % len(_LINE_STYLES)], marker=_MARKERS[i % len(_MARKERS)])
             for i, key in enumerate(series)}
    what = {"collective_time_us": ("collective time", "time (us)"),
            "busbw_gbps": ("bus bandwidth", "busbw (GB/s of 1e9 B/s, as nccl-tests)")}[value]
    figures = []
    stem = "time_vs_size" if value == "collective_time_us" else "busbw_vs_size"
    for model, data, suffix in _per_model(best):
        panels = list(dict.fromkeys(zip(data["config_topology"], data["collective"])))
        cols = min(3, len(panels))
        rows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False,
                                 constrained_layout=True)
        shown = []
        for ax, (topology, coll) in zip(axes.flat, panels):
            panel = data[(data["config_topology"] == topology) & (data["collective"] == coll)]
            labels = panel.apply(lambda r: _system_label(r, varying), axis=1)
            for alg, system in series:
                line = panel[(panel["algorithm"] == alg) & (labels == system)]
                if line.empty:
                    continue
                line = line.sort_values("size_bytes")
                label = ", ".join(p for p in (alg, system) if p)
                ax.plot(line["size_bytes"], line[value], markersize=4, label=label,
                        **style[(alg, system)])
                if (alg, system) not in shown:
                    shown.append((alg, system))
            ax.set_xscale("log", base=2)
            sizes = sorted(set(panel["size_bytes"]))
            ax.set_xticks(sizes)
            ax.set_xticklabels([_size_label(int(s)) for s in sizes], fontsize=7)
            ax.xaxis.set_minor_locator(plt.NullLocator())
            if value == "collective_time_us":
                ax.set_yscale("log")
                _plain_log_axis(ax.yaxis)
            ax.tick_params(axis="y", labelsize=7)
            ax.set_title(f"{coll} on {topology}", fontsize=9)
            ax.set_xlabel("size per NPU", fontsize=8)
            ax.set_ylabel(what[1], fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        handles = [plt.Line2D([], [], label=", ".join(p for p in key if p), **style[key])
                   for key in series if key in shown]
        fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
                   frameon=False)
        fig.suptitle(f"{what[0]} vs size, link model {model} (best chunk count per point)",
                     fontsize=10)
        figures.append((stem + suffix, fig))
    return figures


def bound_ratio_figures(frame):
    """One figure per link model: a heat map per algorithm of time / lower bound, rows = systems,
    columns = collectives, geometric mean over sizes. Returns [(file stem, figure)]."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    best = _best_over_chunks(frame)
    ratios = best.dropna(subset=["bound_ratio"])
    # Rows name their topology and what tells its systems apart (the link model is the figure).
    varying = ["config_topology"] + _varying(ratios, _SYSTEM_COLUMNS[1:-1])
    figures = []
    for model, data, suffix in _per_model(ratios):
        data = data.assign(system=data.apply(lambda r: _system_label(r, varying), axis=1))
        systems = list(dict.fromkeys(data["system"]))
        collectives = list(dict.fromkeys(data["collective"]))
        algs = _algorithms(data)
        cols = min(3, len(algs))
        rows = math.ceil(len(algs) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(1.2 * len(collectives) * cols + 4.0,
                                                      0.45 * len(systems) * rows + 2.0),
                                 squeeze=False, constrained_layout=True)
        grids = {}
        for alg in algs:
            grid = [[math.nan] * len(collectives) for _ in systems]
            part = data[data["algorithm"] == alg]
            for (system, coll), group in part.groupby(["system", "collective"]):
                values = [v for v in group["bound_ratio"] if v > 0]
                if values:
                    grid[systems.index(system)][collectives.index(coll)] = math.exp(
                        sum(math.log(v) for v in values) / len(values))
            grids[alg] = grid
        top = max((v for g in grids.values() for row in g for v in row if not math.isnan(v)),
                  default=2.0)
        image = None
        for ax, alg in zip(axes.flat, algs):
            # Log colours: 1.1 vs 1.3 matters as much as 10 vs 30.
            image = ax.imshow(grids[alg], cmap="viridis_r", aspect="auto",
                              norm=LogNorm(vmin=1.0, vmax=max(top, 1.01)))
            ax.set_xticks(range(len(collectives)))
            ax.set_xticklabels(collectives, fontsize=7, rotation=30, ha="right")
            ax.set_yticks(range(len(systems)))
            ax.set_yticklabels(systems if ax in axes[:, 0] else [], fontsize=7)
            ax.set_title(alg, fontsize=9)
            for i, row in enumerate(grids[alg]):
                for j, v in enumerate(row):
                    ax.text(j, i, "-" if math.isnan(v) else f"{v:.2f}", ha="center",
                            va="center", fontsize=6,
                            color="white" if not math.isnan(v) and v > math.sqrt(top) else "black")
        for ax in list(axes.flat)[len(algs):]:
            ax.axis("off")
        if image is not None:
            bar = fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.9)
            bar.set_label("time / lower bound (geo. mean over sizes)", fontsize=8)
            _plain_log_axis(bar.ax.yaxis)
            bar.ax.tick_params(labelsize=7)
        fig.suptitle(f"time / lower bound, link model {model} ('-': not applicable)",
                     fontsize=10)
        figures.append(("bound_ratio" + suffix, fig))
    return figures


def plot_results(csv_path, out_dir):
    """Draws the pictures of ``csv_path`` into ``out_dir``; returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    frame = load_results(csv_path)
    if frame.empty:
        return []
    written = []
    for stem, fig in (size_figures(frame) + size_figures(frame, "busbw_gbps") +
                      bound_ratio_figures(frame)):
        written += _save(fig, out_dir, stem)
        plt.close(fig)
    return written


def workload_step_figure(frame):
    """Horizontal bars, one per configuration: predicted compute and exposed communication."""
    import matplotlib.pyplot as plt

    rows = frame[frame["status"] == "ok"]
    varying = [c for c in ("config_topology", "link_bandwidth_gibps", "link_latency_us",
                           "config_switch_model") if rows[c].nunique() > 1] or ["config_topology"]
    labels = [", ".join([_LABEL_OF[c](r[c]) for c in varying] +
                        [f"{r['config_algorithm']} K={r['config_chunks_per_npu']}"])
              for _, r in rows.iterrows()]
    compute = rows["predicted_compute_us"].astype(float).tolist()
    exposed = rows["predicted_exposed_communication_us"].astype(float).tolist()
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * len(labels)))
    ax.barh(labels, compute, label="compute")
    ax.barh(labels, exposed, left=compute, label="exposed communication")
    ax.set_xlabel("predicted step (us), largest over the ranks")
    ax.invert_yaxis()
    ax.legend(loc="lower right")
    return fig


def plot_workload_results(csv_path, out_dir):
    """Draws a workload sweep's picture of ``csv_path`` into ``out_dir``; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas

    os.makedirs(out_dir, exist_ok=True)
    frame = pandas.read_csv(csv_path, dtype=str, keep_default_na=False)
    if (frame["status"] == "ok").sum() == 0:
        return []
    fig = workload_step_figure(frame)
    written = _save(fig, out_dir, "workload_step")
    plt.close(fig)
    return written
