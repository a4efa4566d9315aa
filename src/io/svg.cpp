// SVG pictures: the algorithm timeline (one row per used link, a bar per transfer), the
// time-expanded network for small systems, and a bar chart. Plain text building with fixed
// number formatting ("%.2f", C locale as tacos never calls setlocale), so output is
// deterministic.
#include "tacos/io/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>

#include "tacos/common/error.h"
#include "tacos/common/units.h"
#include "tacos/topology/switch_routes.h"

namespace tacos {
namespace {

// Tableau 10 for the first ten NPUs (a categorical palette that stays readable when colours sit
// side by side), then hues stepped by the golden ratio with four saturation/lightness levels in
// turn, so colours never repeat; over NPUs 0..63 no two are closer than 26 in RGB.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kColours = static_cast<int>(sizeof(kPalette) / sizeof(kPalette[0]));
// How many legend entries the timeline shows (more NPUs: hover a bar for its origin).
constexpr int kLegendEntries = 16;

// Page geometry (pixels).
constexpr double kLabelWidth = 110;  // row labels left of the plot
constexpr double kPlotWidth = 900;
constexpr double kUtilWidth = 80;  // utilization text right of the plot
constexpr double kPageWidth = kLabelWidth + kPlotWidth + kUtilWidth;
constexpr double kRowHeight = 16;
constexpr double kBarHeight = 12;
constexpr double kTenRowHeight = 28;

// printf into a std::string.
std::string sformat(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
std::string sformat(const char* pattern, ...) {
  char buffer[512];
  va_list args;
  va_start(args, pattern);
  const int n = std::vsnprintf(buffer, sizeof(buffer), pattern, args);
  va_end(args);
  if (n < 0) return {};
  if (static_cast<std::size_t>(n) < sizeof(buffer)) return std::string(buffer, n);
  std::string result(static_cast<std::size_t>(n) + 1, '\0');
  va_start(args, pattern);
  std::vsnprintf(result.data(), result.size(), pattern, args);
  va_end(args);
  result.resize(n);
  return result;
}

std::string svg_open(double width, double height, const std::string& title) {
  std::string out = sformat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
      width, height, width, height);
  out += "<title>" + xml_escape(title) + "</title>\n";
  out += sformat(
      "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
      "fill=\"#ffffff\"/>\n",
      width, height);
  return out;
}

// The NPU a chunk is coloured by: its origin; for reductions (many contributors) the NPU that
// ends with it (reduce-scatter) or whose share it is (all-reduce: chunk / K).
NpuId colour_npu(const Collective& c, ChunkId chunk) {
  const auto sources = c.sources(chunk);
  if (sources.size() == 1) return sources[0];
  const auto destinations = c.destinations(chunk);
  if (destinations.size() == 1) return destinations[0];
  if (c.num_members() == 0) return 0;
  return c.members()[static_cast<std::size_t>(chunk / std::max(1, c.chunks_per_npu())) %
                     c.members().size()];
}

double hue_channel(double p, double q, double t) {
  t -= std::floor(t);
  if (t < 1.0 / 6) return p + (q - p) * 6 * t;
  if (t < 0.5) return q;
  if (t < 2.0 / 3) return p + (q - p) * (2.0 / 3 - t) * 6;
  return p;
}

std::string colour_of(NpuId npu) {
  if (npu >= 0 && npu < kColours) return kPalette[npu];
  const std::int64_t k = npu < 0 ? 0 : static_cast<std::int64_t>(npu) - kColours;
  struct Level {
    double saturation, lightness;
  };
  static constexpr Level kLevels[] = {{0.70, 0.45}, {0.55, 0.62}, {0.85, 0.33}, {0.45, 0.52}};
  const Level level = kLevels[k % 4];
  double hue = 0.65 + static_cast<double>(k) * 0.6180339887498949;
  hue -= std::floor(hue);
  const double l = level.lightness, s = level.saturation;
  const double q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const double p = 2 * l - q;
  auto byte = [](double v) { return static_cast<int>(std::lround(v * 255)); };
  return sformat("#%02x%02x%02x", byte(hue_channel(p, q, hue + 1.0 / 3)),
                 byte(hue_channel(p, q, hue)), byte(hue_channel(p, q, hue - 1.0 / 3)));
}

// Rows of the time-expanded network, so that devices that exchange data sit close together and
// arrows stay short (fewer crossings): Cuthill-McKee order of the devices over the links the
// transfers use (breadth first from a least-connected device, neighbours by degree, then id),
// then improved by swapping rows while that lowers the sum over transfers of the squared row
// distance (squares: one long arrow crosses more than two short ones). On a ring every arrow
// then spans at most two rows, where id order sends the wrap-around link across them all.
std::vector<DeviceId> ten_order(const std::vector<DeviceId>& devices,
                                const std::vector<Transfer>& transfers) {
  std::map<DeviceId, std::vector<DeviceId>> adjacent;
  for (DeviceId d : devices) adjacent[d];
  for (const Transfer& t : transfers) {
    if (t.src == t.dst || !adjacent.count(t.src) || !adjacent.count(t.dst)) continue;
    adjacent[t.src].push_back(t.dst);
    adjacent[t.dst].push_back(t.src);
  }
  for (auto& [d, list] : adjacent) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  auto before = [&](DeviceId a, DeviceId b) {
    const std::size_t da = adjacent[a].size(), db = adjacent[b].size();
    return da != db ? da < db : a < b;
  };
  std::vector<DeviceId> order;
  std::map<DeviceId, bool> placed;
  std::vector<DeviceId> starts = devices;
  std::sort(starts.begin(), starts.end(), before);
  for (DeviceId start : starts) {
    if (placed[start]) continue;
    placed[start] = true;
    std::size_t head = order.size();
    order.push_back(start);
    for (; head < order.size(); ++head) {
      std::vector<DeviceId> next;
      for (DeviceId n : adjacent[order[head]])
        if (!placed[n]) next.push_back(n);
      std::sort(next.begin(), next.end(), before);
      for (DeviceId n : next) {
        placed[n] = true;
        order.push_back(n);
      }
    }
  }
  // Local search: pairwise row swaps, first improvement, until none helps (bounded passes).
  std::map<std::pair<DeviceId, DeviceId>, std::int64_t> weight;
  for (const Transfer& t : transfers)
    if (t.src != t.dst && adjacent.count(t.src) && adjacent.count(t.dst))
      ++weight[{std::min(t.src, t.dst), std::max(t.src, t.dst)}];
  std::map<DeviceId, std::int64_t> row;
  for (std::size_t i = 0; i < order.size(); ++i) row[order[i]] = static_cast<std::int64_t>(i);
  auto cost = [&] {
    std::int64_t total = 0;
    for (const auto& [pair, w] : weight) {
      const std::int64_t d = row[pair.first] - row[pair.second];
      total += w * d * d;
    }
    return total;
  };
  std::int64_t best = cost();
  for (int pass = 0; pass < 100; ++pass) {
    bool improved = false;
    for (std::size_t i = 0; i < order.size(); ++i)
      for (std::size_t j = i + 1; j < order.size(); ++j) {
        std::swap(row[order[i]], row[order[j]]);
        const std::int64_t c = cost();
        if (c < best) {
          best = c;
          std::swap(order[i], order[j]);
          improved = true;
        } else {
          std::swap(row[order[i]], row[order[j]]);
        }
      }
    if (!improved) break;
  }
  return order;
}

// Ticks at 1, 2 or 5 x 10^k microseconds, about 8 over the span.
struct Ticks {
  double step_us = 1;
  int decimals = 0;
};
Ticks nice_ticks(double span_us) {
  Ticks ticks;
  if (!(span_us > 0)) return ticks;
  const double raw = span_us / 8;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    ticks.step_us = m * magnitude;
    if (ticks.step_us >= raw) break;
  }
  ticks.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(ticks.step_us) + 1e-9)));
  return ticks;
}

// "chunk 3" or "chunks 3, 4, 5" (at most 8 listed).
std::string chunk_list(std::span<const ChunkId> chunks) {
  std::string text = chunks.size() == 1 ? "chunk " : "chunks ";
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (i == 8) {
      text += sformat(", ... (%zu in all)", chunks.size());
      break;
    }
    if (i > 0) text += ", ";
    text += std::to_string(chunks[i]);
  }
  return text;
}

std::string link_label(DeviceId src, DeviceId dst) {
  return std::to_string(src) + "->" + std::to_string(dst);
}

void check_algorithm(const Algorithm& algorithm, const Topology& topology) {
  const Collective& c = algorithm.collective();
  if (c.topology_npus() != topology.npus())
    throw Error("visualize: the algorithm is for " + std::to_string(c.topology_npus()) +
                " NPUs but topology '" + topology.name() + "' has " +
                std::to_string(topology.npus()));
  const auto& transfers = algorithm.transfers();
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    const std::string where =
        "visualize: transfer " + std::to_string(i) + " (" + link_label(t.src, t.dst) + ")";
    if (t.src < 0 || t.src >= topology.devices() || t.dst < 0 || t.dst >= topology.devices())
      throw Error(where + ": device id out of range for topology '" + topology.name() + "' (" +
                  std::to_string(topology.devices()) + " devices)");
    if (t.end < t.start) throw Error(where + ": ends before it starts");
    for (ChunkId chunk : algorithm.chunks(t))
      if (chunk < 0 || chunk >= c.num_chunks())
        throw Error(where + ": chunk " + std::to_string(chunk) + " out of range");
    if (topology.find_link(t.src, t.dst) >= 0) continue;
    if (topology.switches() > 0 && t.src < topology.npus() && t.dst < topology.npus()) {
      if (!topology.switch_routes().route(t.src, t.dst).empty()) continue;
    }
    throw Error(where + ": topology '" + topology.name() + "' has no link " +
                link_label(t.src, t.dst));
  }
}

// Sum of the union of [start, end] intervals clipped to [0, limit].
Time busy_time(std::vector<std::pair<Time, Time>> intervals, Time limit) {
  std::sort(intervals.begin(), intervals.end());
  Time busy = 0;
  Time covered = 0;  // everything before this is counted
  for (auto [start, end] : intervals) {
    start = std::max(start, covered);
    end = std::min(end, limit);
    if (end > start) {
      busy += end - start;
      covered = end;
    }
  }
  return busy;
}

// The schedule picture of algorithm_svg, built in sections: the layout first (link rows, the
// transfers drawn, the time-expanded network's device rows, vertical positions), then each part
// of the page in order (defs, header and legend, time axis, link rows, bars, TEN).
class AlgorithmSvg {
 public:
  AlgorithmSvg(const Algorithm& algorithm, const Topology& topology)
      : algorithm_(algorithm),
        topology_(topology),
        c_(algorithm.collective()),
        transfers_(algorithm.transfers()) {}

  std::string draw() {
    lay_out_time();
    lay_out_link_rows();
    choose_drawn_transfers();
    write_titles();
    lay_out_page();
    std::string out = svg_open(kPageWidth, page_height_, title_);
    append_defs(out);
    append_header(out);
    append_time_axis(out);
    append_link_rows(out);
    append_bars(out);
    if (draw_ten_) append_ten(out);
    out += "</svg>\n";
    return out;
  }

 private:
  void lay_out_time() {
    Time last_end = 0;
    for (const Transfer& t : transfers_) last_end = std::max(last_end, t.end);
    collective_time_ = algorithm_.collective_time > 0 ? algorithm_.collective_time : last_end;
    span_ = std::max<Time>({collective_time_, last_end, 1});
    span_us_ = to_micros(span_);
  }
  double x_of(Time t) const {
    return kLabelWidth + kPlotWidth * static_cast<double>(t) / static_cast<double>(span_);
  }

  // Rows: every link that carries traffic, by (src, dst); busy intervals per row.
  void lay_out_link_rows() {
    for (const Transfer& t : transfers_) by_link_[{t.src, t.dst}].emplace_back(t.start, t.end);
    all_rows_ = by_link_.size();
    rows_ = std::min<std::size_t>(all_rows_, kSvgMaxLinkRows);
    std::size_t r = 0;
    for (const auto& entry : by_link_) {
      if (r == rows_) break;
      row_of_.emplace(entry.first, r++);
    }
  }

  // Drawn transfers: the first kSvgMaxTransfers by (start, src, dst, file order).
  void choose_drawn_transfers() {
    order_.resize(transfers_.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
      const Transfer& x = transfers_[a];
      const Transfer& y = transfers_[b];
      if (x.start != y.start) return x.start < y.start;
      if (x.src != y.src) return x.src < y.src;
      return x.dst < y.dst;
    });
    if (order_.size() > static_cast<std::size_t>(kSvgMaxTransfers)) order_.resize(kSvgMaxTransfers);
  }

  // Header text.
  void write_titles() {
    const std::size_t total = transfers_.size();
    title_ = to_string(c_.kind()) + " on " +
             (topology_.name().empty() ? std::string("topology") : topology_.name()) + ": " +
             std::to_string(c_.num_members()) + " NPUs, " + std::to_string(total) +
             " transfers, collective time " + format_micros(collective_time_) + " us";
    std::string truncation;
    if (total > order_.size())
      truncation += "showing the first " + std::to_string(order_.size()) + " of " +
                    std::to_string(total) + " transfers";
    if (all_rows_ > rows_)
      truncation += std::string(truncation.empty() ? "showing " : ", ") + "the first " +
                    std::to_string(rows_) + " of " + std::to_string(all_rows_) + " links";
    if (!truncation.empty()) title_ += " (" + truncation + ")";
    subtitle_ = "synthesizer " + algorithm_.synthesizer + ", seed " +
                std::to_string(algorithm_.seed) + ", link model " +
                to_string(algorithm_.link_model) + ", " + format_bytes(c_.size()) +
                " per NPU, chunk " + format_bytes(c_.chunk_bytes()) + " (" +
                std::to_string(c_.chunks_per_npu()) + " per NPU)";
    if (has_root(c_.kind())) subtitle_ += ", root " + std::to_string(c_.root());
  }

  // Vertical layout; the TEN's rows are every NPU, then any switch device a transfer touches.
  void lay_out_page() {
    const double header_height = 96;
    timeline_top_ = header_height;  // tick labels
    rows_top_ = timeline_top_ + 18;
    const double rows_height = std::max<double>(static_cast<double>(rows_), 1) * kRowHeight;
    axis_bottom_ = rows_top_ + rows_height;
    draw_ten_ = topology_.npus() <= kSvgMaxTenNpus;
    if (draw_ten_) {
      for (DeviceId d = 0; d < topology_.npus(); ++d) ten_devices_.push_back(d);
      std::vector<DeviceId> switches;
      for (const Transfer& t : transfers_)
        for (DeviceId d : {t.src, t.dst})
          if (topology_.is_switch(d)) switches.push_back(d);
      std::sort(switches.begin(), switches.end());
      switches.erase(std::unique(switches.begin(), switches.end()), switches.end());
      ten_devices_.insert(ten_devices_.end(), switches.begin(), switches.end());
      ten_devices_ = ten_order(ten_devices_, transfers_);
      for (std::size_t i = 0; i < ten_devices_.size(); ++i) ten_row_[ten_devices_[i]] = i;
    }
    ten_top_ = axis_bottom_ + 56;  // section title above the first NPU line
    ten_rows_top_ = ten_top_ + 30;
    page_height_ =
        draw_ten_ ? ten_rows_top_ + static_cast<double>(ten_devices_.size()) * kTenRowHeight + 30
                  : axis_bottom_ + 40;
    ticks_ = nice_ticks(span_us_);
  }

  void append_defs(std::string& out) const {
    out += "<defs>\n";
    // Arrow heads in each origin's colour (the time-expanded network has at most 16 NPUs).
    if (draw_ten_)
      for (NpuId k = 0; k < topology_.npus(); ++k)
        out += sformat(
            "<marker id=\"arrow%d\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
            "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
            "fill=\"%s\"/></marker>\n",
            k, colour_of(k).c_str());
    // Reduce transfers: white diagonal hatching over the bar.
    out +=
        "<pattern id=\"reduce-hatch\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect x=\"0\" y=\"0\" width=\"1.6\" height=\"4\" "
        "fill=\"#ffffff\" fill-opacity=\"0.85\"/></pattern>\n";
    out += "</defs>\n";
  }

  // Title, subtitle and legend.
  void append_header(std::string& out) const {
    out += "<text class=\"title\" x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" +
           xml_escape(title_) + "</text>\n";
    out += "<text class=\"subtitle\" x=\"10\" y=\"42\" font-size=\"12\">" + xml_escape(subtitle_) +
           "</text>\n";
    const std::string legend =
        std::string("colour = chunk origin NPU") +
        (is_reduction(c_.kind()) ? " (reductions: the NPU the chunk belongs to)" : "") +
        (topology_.npus() > kLegendEntries ? ", NPUs 0-15 shown:" : ":");
    out += "<g class=\"legend\">\n<text x=\"10\" y=\"66\">" + xml_escape(legend) + "</text>\n";
    append_origin_swatches(out, legend.size());
    out +=
        "<text x=\"10\" y=\"86\">rows: links carrying traffic; right: utilization = busy time / "
        "collective time;</text>\n";
    {
      // Copies and reduce transfers side by side.
      const double x = 10 + 6.2 * 88;
      out += sformat(
          "<rect class=\"legend-copy\" x=\"%.2f\" y=\"77\" width=\"22\" height=\"12\" "
          "fill=\"#888888\"/><text x=\"%.2f\" y=\"86\">copy</text>\n"
          "<rect class=\"legend-reduce\" x=\"%.2f\" y=\"77\" width=\"22\" height=\"12\" "
          "fill=\"#888888\"/><rect x=\"%.2f\" y=\"77\" width=\"22\" height=\"12\" "
          "fill=\"url(#reduce-hatch)\"/><text x=\"%.2f\" y=\"86\">reduce (hatched bar, dashed "
          "arrow: a partial sum the receiver adds)</text>\n",
          x, x + 26, x + 64, x + 64, x + 90);
    }
    out += "</g>\n";
  }

  // A colour swatch per origin NPU, right of the legend text (`legend_chars` long).
  void append_origin_swatches(std::string& out, std::size_t legend_chars) const {
    const int entries = std::min(kLegendEntries, std::max(1, topology_.npus()));
    // About 6.2 px per character at font-size 11.
    const double legend_x = 10 + 6.2 * static_cast<double>(legend_chars) + 14;
    // Up to 44 px per entry, less when that would run past the page (at least 30: a swatch and
    // a two-digit label).
    const double spacing =
        std::clamp((kPageWidth - 10 - legend_x) / static_cast<double>(entries), 30.0, 44.0);
    for (int k = 0; k < entries; ++k) {
      const double x = legend_x + spacing * k;
      out += sformat(
          "<rect x=\"%.2f\" y=\"57\" width=\"12\" height=\"12\" fill=\"%s\"/>"
          "<text x=\"%.2f\" y=\"67\">%d</text>\n",
          x, colour_of(k).c_str(), x + 16, k);
    }
  }

  // Time axis: grid lines and labels over the link rows.
  void append_time_axis(std::string& out) const {
    std::string axis = "<g class=\"axis\">\n";
    for (int k = 0;; ++k) {
      const double t_us = ticks_.step_us * k;
      if (t_us > span_us_ * (1 + 1e-9)) break;
      const double x = kLabelWidth + kPlotWidth * t_us / span_us_;
      axis += sformat(
          "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#dddddd\"/>"
          "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%.*f</text>\n",
          x, rows_top_ - 4, x, axis_bottom_, x, timeline_top_ + 10, ticks_.decimals, t_us);
      if (k > 10000) break;  // defensive: never loops long
    }
    axis += sformat("<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">time (us)</text>\n",
                    kLabelWidth - 6, timeline_top_ + 10);
    if (collective_time_ > 0)
      axis += sformat(
          "<line class=\"collective-time\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
          "y2=\"%.2f\" stroke=\"#333333\" stroke-dasharray=\"4 3\"/>\n",
          x_of(collective_time_), rows_top_ - 4, x_of(collective_time_), axis_bottom_);
    axis += "</g>\n";
    out += axis;
  }

  // Link rows: stripe, label, utilization.
  void append_link_rows(std::string& out) const {
    out += "<g class=\"links\">\n";
    if (rows_ == 0)
      out += sformat("<text x=\"%.2f\" y=\"%.2f\">no transfers</text>\n", kLabelWidth + 6,
                     rows_top_ + 12);
    std::size_t r = 0;
    for (const auto& [key, intervals] : by_link_) {
      if (r == rows_) break;
      const double y = rows_top_ + kRowHeight * static_cast<double>(r);
      if (r % 2 == 0)
        out += sformat(
            "<rect class=\"stripe\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
            "height=\"%.2f\" fill=\"#f3f3f3\"/>\n",
            kLabelWidth, y, kPlotWidth, kRowHeight);
      out += sformat("<text class=\"link-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">",
                     kLabelWidth - 6, y + 12) +
             xml_escape(link_label(key.first, key.second)) + "</text>";
      const std::string util =
          collective_time_ > 0
              ? sformat("%.1f%%", 100.0 *
                                      static_cast<double>(busy_time(intervals, collective_time_)) /
                                      static_cast<double>(collective_time_))
              : std::string("-");
      out += sformat("<text class=\"utilization\" x=\"%.2f\" y=\"%.2f\">%s</text>\n",
                     kLabelWidth + kPlotWidth + 6, y + 12, util.c_str());
      ++r;
    }
    out += "</g>\n";
  }

  // The NPU whose colour a transfer takes.
  NpuId origin_of(const Transfer& t) const {
    const auto chunks = algorithm_.chunks(t);
    return chunks.empty() ? t.src : colour_npu(c_, chunks[0]);
  }

  // Bars.
  void append_bars(std::string& out) const {
    out += "<g class=\"transfers\">\n";
    for (std::size_t index : order_) {
      const Transfer& t = transfers_[index];
      const auto row = row_of_.find({t.src, t.dst});
      if (row == row_of_.end()) continue;
      const auto chunks = algorithm_.chunks(t);
      const NpuId origin = origin_of(t);
      const double x = x_of(t.start);
      const double width = std::max(0.5, x_of(t.end) - x);
      const double y =
          rows_top_ + kRowHeight * static_cast<double>(row->second) + (kRowHeight - kBarHeight) / 2;
      out += sformat(
          "<rect class=\"transfer\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
          "fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"0.5\"><title>",
          x, y, width, kBarHeight, colour_of(origin).c_str());
      out += xml_escape(link_label(t.src, t.dst) + " " + chunk_list(chunks) + " (origin NPU " +
                        std::to_string(origin) + (t.reduce ? ", reduce" : "") + "), " +
                        format_micros(t.start) + " - " + format_micros(t.end) + " us");
      out += "</title></rect>\n";
      if (t.reduce)
        out += sformat(
            "<rect class=\"reduce-mark\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
            "fill=\"url(#reduce-hatch)\"/>\n",
            x, y, width, kBarHeight);
    }
    out += "</g>\n";
  }

  // Time-expanded network: device lines x time, an arrow per transfer.
  void append_ten(std::string& out) const {
    out += "<g class=\"ten\">\n";
    out += sformat(
        "<text class=\"section\" x=\"10\" y=\"%.2f\" font-size=\"13\" "
        "font-weight=\"bold\">time-expanded network: an arrow per transfer from "
        "(src, start) to (dst, end)</text>\n",
        ten_top_);
    for (int k = 0;; ++k) {
      const double t_us = ticks_.step_us * k;
      if (t_us > span_us_ * (1 + 1e-9) || k > 10000) break;
      const double x = kLabelWidth + kPlotWidth * t_us / span_us_;
      out += sformat(
          "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#eeeeee\"/>"
          "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%.*f</text>\n",
          x, ten_rows_top_ - 8, x,
          ten_rows_top_ + kTenRowHeight * static_cast<double>(ten_devices_.size()), x,
          ten_rows_top_ - 12, ticks_.decimals, t_us);
    }
    for (std::size_t i = 0; i < ten_devices_.size(); ++i) {
      const DeviceId d = ten_devices_[i];
      const double y = ten_rows_top_ + kTenRowHeight * (static_cast<double>(i) + 0.5);
      out += sformat(
          "<line class=\"device\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
          "stroke=\"#999999\"/><text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s "
          "%d</text>\n",
          kLabelWidth, y, kLabelWidth + kPlotWidth, y, kLabelWidth - 6, y + 4,
          topology_.is_switch(d) ? "switch" : "NPU", d);
    }
    for (std::size_t index : order_) {
      const Transfer& t = transfers_[index];
      const NpuId origin = origin_of(t);
      const double y1 = ten_y(t.src);
      const double y2 = ten_y(t.dst);
      out += sformat(
          "<line class=\"arrow\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
          "stroke=\"%s\" stroke-width=\"1.5\"%s marker-end=\"url(#arrow%d)\"/>\n",
          x_of(t.start), y1, x_of(t.end), y2, colour_of(origin).c_str(),
          t.reduce ? " stroke-dasharray=\"4 2\"" : "", origin);
    }
    out += "</g>\n";
  }
  double ten_y(DeviceId d) const {
    return ten_rows_top_ + kTenRowHeight * (static_cast<double>(ten_row_.at(d)) + 0.5);
  }

  const Algorithm& algorithm_;
  const Topology& topology_;
  const Collective& c_;
  const std::vector<Transfer>& transfers_;

  Time collective_time_ = 0;
  Time span_ = 1;
  double span_us_ = 0;
  std::map<std::pair<DeviceId, DeviceId>, std::vector<std::pair<Time, Time>>> by_link_;
  std::size_t all_rows_ = 0, rows_ = 0;  // links with traffic; those drawn
  std::map<std::pair<DeviceId, DeviceId>, std::size_t> row_of_;
  std::vector<std::size_t> order_;  // the transfers drawn, in drawing order
  std::string title_, subtitle_;
  double timeline_top_ = 0, rows_top_ = 0, axis_bottom_ = 0;
  bool draw_ten_ = false;
  std::vector<DeviceId> ten_devices_;
  std::map<DeviceId, std::size_t> ten_row_;
  double ten_top_ = 0, ten_rows_top_ = 0, page_height_ = 0;
  Ticks ticks_;
};

}  // namespace

std::string algorithm_svg(const Algorithm& algorithm, const Topology& topology) {
  check_algorithm(algorithm, topology);
  return AlgorithmSvg(algorithm, topology).draw();
}

std::string bar_chart_svg(const std::string& title,
                          const std::vector<std::pair<std::string, double>>& bars,
                          const std::string& unit, const std::string& axis_label,
                          const std::optional<BarChartMark>& mark) {
  std::size_t longest = 0;
  for (const auto& bar : bars) longest = std::max(longest, bar.first.size());
  const double label_width = std::clamp(7.0 * static_cast<double>(longest) + 16, 80.0, 320.0);
  const double bar_area = 460;
  const double value_width = 140;
  const double width = label_width + bar_area + value_width;
  const bool marked = mark && std::isfinite(mark->value) && mark->value > 0;
  const double top = marked ? 62 : 44;
  const double row = 26;
  const double rows_bottom = top + row * static_cast<double>(std::max<std::size_t>(bars.size(), 1));
  const double height = rows_bottom + 52;
  double largest = 0;
  for (const auto& bar : bars)
    if (std::isfinite(bar.second)) largest = std::max(largest, bar.second);
  const double extent = std::max(largest, marked ? mark->value : 0.0);
  const double scale = extent > 0 ? bar_area / extent : 0;
  auto value_text = [&](double value) {
    return (std::fabs(value) >= 1 || value == 0 ? sformat("%.2f", value) : sformat("%.4g", value)) +
           (unit.empty() ? "" : " " + unit);
  };

  std::string out = svg_open(width, height, title);
  out += "<text class=\"title\" x=\"10\" y=\"24\" font-size=\"15\" font-weight=\"bold\">" +
         xml_escape(title) + "</text>\n";
  // x axis: ticks and grid lines under the bars, the label below.
  out += "<g class=\"x-axis\">\n";
  if (extent > 0) {
    const Ticks ticks = nice_ticks(extent);
    for (int k = 0; k <= 10000; ++k) {
      const double v = ticks.step_us * k;
      if (v > extent * (1 + 1e-9)) break;
      const double x = label_width + v * scale;
      out += sformat(
          "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e6e6e6\"/>"
          "<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
          "stroke=\"#999999\"/><text class=\"tick-label\" x=\"%.2f\" y=\"%.2f\" "
          "text-anchor=\"middle\">%.*f</text>\n",
          x, top - 4, x, rows_bottom, x, rows_bottom, x, rows_bottom + 5, x, rows_bottom + 17,
          ticks.decimals, v);
    }
  }
  out += sformat("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#999999\"/>\n",
                 label_width, rows_bottom, label_width + bar_area, rows_bottom);
  const std::string axis_text =
      axis_label.empty() ? unit : axis_label + (unit.empty() ? "" : " (" + unit + ")");
  out += sformat("<text class=\"axis-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
                 label_width + bar_area / 2, rows_bottom + 36) +
         xml_escape(axis_text) + "</text>\n</g>\n";
  out += sformat("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#999999\"/>\n",
                 label_width, top - 4, label_width, rows_bottom);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& [label, value] = bars[i];
    const double y = top + row * static_cast<double>(i);
    out += sformat("<text class=\"bar-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">",
                   label_width - 6, y + 15) +
           xml_escape(label) + "</text>";
    if (!std::isfinite(value)) {
      out += sformat("<text class=\"value\" x=\"%.2f\" y=\"%.2f\" fill=\"#888888\">n/a</text>\n",
                     label_width + 6, y + 15);
      continue;
    }
    const double w = std::max(0.0, value * scale);
    const std::string text = value_text(value);
    out += sformat(
               "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"18\" "
               "fill=\"%s\"><title>",
               label_width, y + 2, w, kPalette[i % kColours]) +
           xml_escape(label + ": " + text) + "</title></rect>";
    out += sformat("<text class=\"value\" x=\"%.2f\" y=\"%.2f\">", label_width + w + 6, y + 15) +
           xml_escape(text) + "</text>\n";
  }
  if (marked) {
    const double x = label_width + mark->value * scale;
    out += sformat(
               "<line class=\"mark\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
               "stroke=\"#222222\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>"
               "<text class=\"mark-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
               x, top - 8, x, rows_bottom, x, top - 12) +
           xml_escape(mark->label + " " + value_text(mark->value)) + "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

std::string wrap_html(const std::string& svg, const std::string& title) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      xml_escape(title) +
      "</title>\n<style>body{margin:16px;background:#ffffff;font-family:sans-serif}"
      "svg{max-width:100%;height:auto}</style>\n</head>\n<body>\n";
  out += svg;
  if (!svg.empty() && svg.back() != '\n') out += '\n';
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace tacos
