"""Pictures of a sweep's CSV (``python3 -m tacos.sweep ... --plot DIR``), drawn with matplotlib.

- ``time_vs_size.png``: collective time against size, one line per algorithm, one panel per
  (topology, collective); where a configuration was run with several chunk counts, each point is
  the fastest of them. One file per link model when the sweep has several
  (``time_vs_size_<model>.png``).
- ``bound_ratio.png``: heat maps of collective time / lower bound, one per algorithm, rows =
  topologies, columns = collectives; each cell is the geometric mean over sizes (of each size's
  best chunk count), so 1.00 means optimal at every size.
"""

import math
import os

_ALGORITHM_ORDER = ("tacos", "ring", "direct", "rhd", "dbt", "hierarchical", "biring")


def _load(csv_path):
    import pandas as pd

    frame = pd.read_csv(csv_path, keep_default_na=True)
    frame = frame[frame["status"] == "ok"].copy()
    frame["label"] = frame["topology"].astype(str)
    return frame


def _best_over_chunks(frame):
    keys = ["label", "collective", "link_model", "algorithm", "size_bytes"]
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


def plot_results(csv_path, out_dir):
    """Draws the pictures of ``csv_path`` into ``out_dir``; returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    os.makedirs(out_dir, exist_ok=True)
    frame = _load(csv_path)
    if frame.empty:
        return []
    best = _best_over_chunks(frame)
    algorithms = _algorithms(best)
    colors = {a: plt.get_cmap("tab10")(i) for i, a in enumerate(algorithms)}
    written = []
    models = list(dict.fromkeys(best["link_model"]))
    for model in models:
        data = best[best["link_model"] == model]
        panels = list(dict.fromkeys(zip(data["label"], data["collective"])))
        cols = min(3, len(panels))
        rows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
        for ax, (label, coll) in zip(axes.flat, panels):
            panel = data[(data["label"] == label) & (data["collective"] == coll)]
            for alg in algorithms:
                line = panel[panel["algorithm"] == alg].sort_values("size_bytes")
                if line.empty:
                    continue
                ax.plot(line["size_bytes"], line["collective_time_us"], marker="o",
                        markersize=3, label=alg, color=colors[alg])
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            sizes = sorted(set(panel["size_bytes"]))
            ax.set_xticks(sizes)
            ax.set_xticklabels([_size_label(int(s)) for s in sizes], fontsize=7)
            ax.minorticks_off()
            ax.set_title(f"{coll} on {label}", fontsize=9)
            ax.set_ylabel("time (us)", fontsize=8)
            ax.grid(True, alpha=0.3)
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        handles = [plt.Line2D([], [], color=colors[a], marker="o", label=a) for a in algorithms]
        fig.legend(handles=handles, loc="lower center", ncol=len(algorithms), fontsize=8,
                   frameon=False)
        fig.suptitle(f"collective time vs size (link model {model}; best chunk count per point)",
                     fontsize=10)
        fig.tight_layout(rect=(0, 0.05, 1, 0.96))
        name = "time_vs_size.png" if len(models) == 1 else f"time_vs_size_{model}.png"
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)

    ratios = best.dropna(subset=["bound_ratio"])
    if not ratios.empty:
        labels = list(dict.fromkeys(ratios["label"]))
        collectives = list(dict.fromkeys(ratios["collective"]))
        algs = _algorithms(ratios)
        cols = min(3, len(algs))
        rows = math.ceil(len(algs) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(1.1 * len(collectives) * cols + 3.5,
                                                      0.42 * len(labels) * rows + 1.8),
                                 squeeze=False, constrained_layout=True)
        grids = {}
        for alg in algs:
            grid = [[math.nan] * len(collectives) for _ in labels]
            part = ratios[ratios["algorithm"] == alg]
            for (label, coll), group in part.groupby(["label", "collective"]):
                values = [v for v in group["bound_ratio"] if v > 0]
                if values:
                    grid[labels.index(label)][collectives.index(coll)] = math.exp(
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
            ax.set_yticks(range(len(labels)))
            ax.set_yticklabels(labels if ax in axes[:, 0] else [], fontsize=7)
            ax.set_title(alg, fontsize=9)
            for i, row in enumerate(grids[alg]):
                for j, v in enumerate(row):
                    ax.text(j, i, "-" if math.isnan(v) else f"{v:.2f}", ha="center",
                            va="center", fontsize=6,
                            color="white" if not math.isnan(v) and v > math.sqrt(top) else "black")
        for ax in list(axes.flat)[len(algs):]:
            ax.axis("off")
        if image is not None:
            fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.9,
                         label="time / lower bound (geo. mean over sizes)")
        fig.suptitle("distance to the lower bound per topology and collective ('-': not "
                     "applicable)", fontsize=10)
        path = os.path.join(out_dir, "bound_ratio.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written
