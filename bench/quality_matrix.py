#!/usr/bin/python3
"""Condenses bench/quality.sh's table into one matrix: a row per topology, a column per
collective, each cell tacos's time / lower bound with --chunks-per-npu auto at one size, with
"(b)" where a baseline at the same settings is more than 0.1% faster and "[NAME]" where the
portfolio kept baseline NAME's schedule (tables with the "schedule kept" column).

Usage: bench/quality.sh > quality.md; bench/quality_matrix.py quality.md [SIZE] (default 64MiB)
"""
import sys

COLLECTIVES = ["all-gather", "reduce-scatter", "all-reduce", "broadcast", "reduce", "gather",
               "scatter", "all-to-all"]


def main() -> None:
    path = sys.argv[1]
    size = sys.argv[2] if len(sys.argv) > 2 else "64MiB"
    cells: dict[tuple[str, str], str] = {}
    topologies: list[str] = []
    with open(path, encoding="utf-8") as table:
        for line in table:
            row = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(row) not in (9, 10) or row[0] in ("topology", "") or row[0].startswith("---"):
                continue
            topology, collective, row_size, k, _, _, ratio, _, ok = row[:9]
            kept = row[9].split()[0] if len(row) == 10 else "tacos"
            if row_size != size or k != "auto":
                continue
            if topology not in topologies:
                topologies.append(topology)
            cells[(topology, collective)] = (ratio + ("" if ok == "yes" else " (b)") +
                                             ("" if kept == "tacos" else " [%s]" % kept))
    print("| topology | " + " | ".join(COLLECTIVES) + " |")
    print("|---|" + "---:|" * len(COLLECTIVES))
    for topology in topologies:
        print("| " + topology + " | " +
              " | ".join(cells.get((topology, c), "-") for c in COLLECTIVES) + " |")


if __name__ == "__main__":
    main()
