#pragma once
// Pictures of algorithms and numbers as standalone SVG (no scripts, no external resources).
// Output is deterministic: equal inputs give byte-identical text.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tacos/algorithm/algorithm.h"
#include "tacos/common/xml_escape.h"
#include "tacos/topology/topology.h"

namespace tacos {

// At most this many transfers are drawn (bars, and arrows); the title says when more were left
// out. Utilization figures always count every transfer.
inline constexpr int kSvgMaxTransfers = 20000;
// At most this many link rows are drawn in the timeline.
inline constexpr int kSvgMaxLinkRows = 2000;
// The time-expanded network (NPUs x time, an arrow per transfer) is drawn up to this many NPUs.
inline constexpr int kSvgMaxTenNpus = 16;

// A timeline with one row per link that carries traffic ("src->dst"), a bar per transfer
// (<rect class="transfer">) coloured by its first chunk's origin NPU (reductions, whose chunks
// start everywhere: the NPU the chunk belongs to), each row's utilization (busy time over the
// collective time) and a title with the collective, NPU count and collective time. Up to 16
// NPUs it adds the time-expanded network: an arrow (<line class="arrow">) per transfer from
// (src, start) to (dst, end).
// Every transfer must use a link of `topology` or a path through its switches, and the NPU
// counts must agree; otherwise throws Error.
std::string algorithm_svg(const Algorithm& algorithm, const Topology& topology);

// A reference value drawn across a bar chart (e.g. the lower bound), as a dashed line.
struct BarChartMark {
  std::string label;  // e.g. "lower bound"
  double value = 0;
};

// Horizontal bars (<rect class="bar">), one per (label, value), scaled to the largest value
// (or the mark, when larger); each value is printed with `unit`. A NaN (or infinite) value is
// drawn as "n/a" without a bar. Below the bars an x axis (<g class="x-axis">) with ticks at 1,
// 2 or 5 x 10^k and `axis_label` under it; a finite positive `mark` is a dashed line
// (<line class="mark">) labelled "LABEL VALUE UNIT".
std::string bar_chart_svg(const std::string& title,
                          const std::vector<std::pair<std::string, double>>& bars,
                          const std::string& unit, const std::string& axis_label = "",
                          const std::optional<BarChartMark>& mark = std::nullopt);

// A minimal standalone HTML page holding `svg` (as returned above) under `title`.
std::string wrap_html(const std::string& svg, const std::string& title);

}  // namespace tacos
