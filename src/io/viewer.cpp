// The viewer page (include/tacos/io/viewer.h): the schedule data as JSON, embedded with the
// page's script and style (src/io/viewer/, compiled in as viewer_assets.h) into one HTML file.
//
// The data object (all times in picoseconds, integers):
//   version, title
//   topology: name, npus, devices, family ("ring", "grid", "switch" or "force": how the page
//     lays it out), dims (grid: [x, y] or [x, y, z]), links ([src, dst] per link id)
//   schedules[]: label, collective, size_bytes, chunk_bytes, time_ps (simulated), transfers,
//     link_model, detail (whether every message is embedded) and
//     pairs: [src, dst, [link ids of its route]] per sender/receiver pair some message uses
//     (a Gantt lane each), and
//     - detail: tx {pair, start, end, step, reduce (0/1), chunks (list per transfer)} indexed
//       by transfer, completions (per NPU, ascending: when each chunk it must end with is
//       complete, as in the trace's "completed share");
//     - aggregated: bins, bin_ps, util (base64 bytes, pair-major: busy share of each pair's
//       bin x 255), progress (base64 bytes, NPU-major: completed share at each bin's end x 255).
#include "tacos/io/viewer.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "../algorithm/transfer_check.h"
#include "schedule_timeline.h"
#include "tacos/common/error.h"
#include "viewer_assets.h"

namespace tacos {
namespace {

using Json = nlohmann::ordered_json;

std::string base64(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{bytes[i]} << 16) |
                            (i + 1 < bytes.size() ? std::uint32_t{bytes[i + 1]} << 8 : 0) |
                            (i + 2 < bytes.size() ? std::uint32_t{bytes[i + 2]} : 0);
    out += kDigits[(n >> 18) & 63];
    out += kDigits[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[n & 63] : '=';
  }
  return out;
}

std::uint8_t to_byte(double share) {
  return static_cast<std::uint8_t>(std::clamp(share, 0.0, 1.0) * 255 + 0.5);
}

Json topology_json(const Topology& topology) {
  Json out;
  out["name"] = topology.name();
  out["npus"] = topology.npus();
  out["devices"] = topology.devices();
  const TopologyShape& shape = topology.shape();
  std::vector<int> dims;
  for (const ShapeDimension& d : shape.dimensions) dims.push_back(d.size);
  std::string family = "force";
  if (topology.switches() > 0) {
    family = "switch";
  } else if (shape.kind == TopologyKind::kMesh2d || shape.kind == TopologyKind::kTorus2d ||
             shape.kind == TopologyKind::kMesh3d || shape.kind == TopologyKind::kTorus3d) {
    family = "grid";
  } else if (shape.kind == TopologyKind::kDimensions && dims.size() == 1 &&
             shape.dimensions[0].wiring != DimensionWiring::kFullyConnected) {
    family = "ring";
  } else if (shape.kind == TopologyKind::kDimensions && dims.size() >= 2) {
    // Dimension 0 across, the others folded down.
    int rest = 1;
    for (std::size_t d = 1; d < dims.size(); ++d) rest *= dims[d];
    dims = {dims[0], rest};
    family = "grid";
  }
  out["family"] = family;
  out["dims"] = family == "grid" ? dims : std::vector<int>{};
  Json links = Json::array();
  for (const Link& l : topology.links()) links.push_back({l.src, l.dst});
  out["links"] = std::move(links);
  return out;
}

Json schedule_json(const Topology& topology, const ViewedSchedule& schedule) {
  const Algorithm& algorithm = *schedule.algorithm;
  const SimulationResult& simulated = schedule.simulated;
  const auto& transfers = algorithm.transfers();
  if (simulated.start.size() != transfers.size() || simulated.end.size() != transfers.size())
    throw Error("view: the simulation result does not belong to " + schedule.label);
  const Collective& c = algorithm.collective();
  Json out;
  out["label"] = schedule.label;
  out["collective"] = to_string(c.kind());
  out["size_bytes"] = c.size();
  out["chunk_bytes"] = c.chunk_bytes();
  out["time_ps"] = simulated.collective_time;
  out["transfers"] = transfers.size();
  out["link_model"] = to_string(algorithm.link_model);
  const bool detail = transfers.size() <= kViewerDetailLimit;
  out["detail"] = detail;

  // Lanes: sender/receiver pairs in (src, dst) order, each with its route (its first
  // message's: the messages between two devices all take one route; simulate() checked them).
  std::map<std::pair<DeviceId, DeviceId>, std::size_t> first_of;
  for (std::size_t x = transfers.size(); x-- > 0;)
    first_of[{transfers[x].src, transfers[x].dst}] = x;
  std::map<std::pair<DeviceId, DeviceId>, int> lane_of;
  Json pairs = Json::array();
  for (const auto& [pair, x] : first_of) {
    lane_of.emplace(pair, static_cast<int>(lane_of.size()));
    const detail::TransferCheck check = detail::check_transfer(algorithm, topology, x);
    if (!check.ok()) throw Error("view: " + schedule.label + ": " + check.error);
    pairs.push_back(
        {pair.first, pair.second, std::vector<LinkId>(check.route.begin(), check.route.end())});
  }
  out["pairs"] = std::move(pairs);
  std::vector<int> lanes(transfers.size());
  for (std::size_t x = 0; x < transfers.size(); ++x)
    lanes[x] = lane_of[{transfers[x].src, transfers[x].dst}];

  const detail::ScheduleTimeline timeline = detail::schedule_timeline(algorithm, simulated);
  if (detail) {
    Json tx;
    tx["pair"] = lanes;
    tx["start"] = simulated.start;
    tx["end"] = simulated.end;
    tx["step"] = timeline.step;
    std::vector<int> reduce;
    Json chunks = Json::array();
    for (const Transfer& t : transfers) {
      reduce.push_back(t.reduce ? 1 : 0);
      const auto list = algorithm.chunks(t);
      chunks.push_back(std::vector<ChunkId>(list.begin(), list.end()));
    }
    tx["reduce"] = reduce;
    tx["chunks"] = std::move(chunks);
    out["tx"] = std::move(tx);
    out["completions"] = timeline.completions;
    return out;
  }

  const Time total = std::max<Time>(simulated.collective_time, 1);
  const Time bin_ps = (total + kViewerBins - 1) / kViewerBins;
  out["bins"] = kViewerBins;
  out["bin_ps"] = bin_ps;
  std::vector<double> busy(lane_of.size() * kViewerBins, 0.0);
  for (std::size_t x = 0; x < transfers.size(); ++x) {
    const Time s = simulated.start[x], e = simulated.end[x];
    for (Time b = s / bin_ps; b < kViewerBins && b * bin_ps < e; ++b) {
      const Time overlap = std::min(e, (b + 1) * bin_ps) - std::max(s, b * bin_ps);
      busy[static_cast<std::size_t>(lanes[x]) * kViewerBins + static_cast<std::size_t>(b)] +=
          static_cast<double>(overlap) / static_cast<double>(bin_ps);
    }
  }
  std::vector<std::uint8_t> util(busy.size());
  for (std::size_t k = 0; k < busy.size(); ++k) util[k] = to_byte(busy[k]);
  out["util"] = base64(util);
  std::vector<std::uint8_t> progress;
  progress.reserve(static_cast<std::size_t>(topology.npus()) * kViewerBins);
  for (const auto& done : timeline.completions) {
    std::size_t k = 0;
    for (int b = 0; b < kViewerBins; ++b) {
      while (k < done.size() && done[k] <= (b + 1) * bin_ps) ++k;
      progress.push_back(
          done.empty() ? 255 : to_byte(static_cast<double>(k) / static_cast<double>(done.size())));
    }
  }
  out["progress"] = base64(progress);
  return out;
}

// JSON inside <script>: "</" would end the element, so it is written "<\/" (the same string).
std::string script_safe(std::string text) {
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3))
    text.replace(at, 2, "<\\/");
  return text;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '<')
      out += "&lt;";
    else if (ch == '>')
      out += "&gt;";
    else if (ch == '&')
      out += "&amp;";
    else
      out += ch;
  }
  return out;
}

void replace_once(std::string& text, const std::string& marker, const std::string& value) {
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) throw Error("view: the page template has no " + marker);
  text.replace(at, marker.size(), value);
}

}  // namespace

std::string viewer_data_json(const Topology& topology,
                             const std::vector<ViewedSchedule>& schedules) {
  if (schedules.empty() || schedules.size() > 2)
    throw Error("view: expected one or two schedules, got " + std::to_string(schedules.size()));
  Json data;
  data["version"] = TACOS_VERSION;
  std::string title = to_string(schedules[0].algorithm->collective().kind()) + " on " +
                      topology.name() + ": " + schedules[0].label;
  if (schedules.size() == 2) title += " vs " + schedules[1].label;
  data["title"] = title;
  data["topology"] = topology_json(topology);
  Json list = Json::array();
  for (const ViewedSchedule& s : schedules) list.push_back(schedule_json(topology, s));
  data["schedules"] = std::move(list);
  return data.dump();
}

std::string viewer_html(const Topology& topology, const std::vector<ViewedSchedule>& schedules) {
  const std::string data = viewer_data_json(topology, schedules);
  std::string title = "tacos view: " + to_string(schedules[0].algorithm->collective().kind()) +
                      " on " + topology.name();
  // Markers filled from the template's end backwards, so no inserted text (a file name in the
  // title or data) is ever searched for a marker.
  std::string page(detail::kViewerHtml);
  replace_once(page, "/*{{JS}}*/", detail::kViewerJs);
  replace_once(page, "{{DATA}}", script_safe(data));
  replace_once(page, "/*{{CSS}}*/", detail::kViewerCss);
  replace_once(page, "{{TITLE}}", html_escape(title));
  return page;
}

}  // namespace tacos
