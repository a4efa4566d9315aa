// The Chrome trace event writer (include/tacos/io/trace.h). Events are dumped one at a time into
// the text, so a schedule of a million messages never holds a million JSON objects in memory.
#include "tacos/io/trace.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>
#include <vector>

#include "schedule_timeline.h"
#include "tacos/common/atomic_file.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos {
namespace {

using Json = nlohmann::ordered_json;

class EventList {
 public:
  explicit EventList(std::string& out) : out_(out) {}
  void add(const Json& event) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_ += event.dump();
  }

 private:
  std::string& out_;
  bool first_ = true;
};

Json event(const std::string& name, const char* ph, int pid, std::int64_t tid, double ts) {
  Json e;
  e["name"] = name;
  e["ph"] = ph;
  e["pid"] = pid;
  e["tid"] = tid;
  e["ts"] = ts;
  return e;
}

std::string chunk_label(std::span<const ChunkId> chunks) {
  if (chunks.size() == 1) return "chunk " + std::to_string(chunks[0]);
  return std::to_string(chunks.size()) + " chunks from " + std::to_string(chunks[0]);
}

// A message's track: its sender's process, a thread per link it sends on (tid = receiver + 1).
// Slices on one thread must nest, so a message that starts before the link's previous one has
// ended (--link-model astra, routes through switches) goes on a further thread of that link,
// the first one free: tid = receiver + 1 + k (devices + 1), named "s -> d (k + 1)".
struct Tracks {
  std::vector<std::int64_t> tid;                         // per transfer
  std::vector<std::tuple<DeviceId, DeviceId, int>> all;  // (src, dst, k), sorted
};

Tracks assign_tracks(const Algorithm& algorithm, const Topology& topology,
                     const SimulationResult& simulated, const detail::ScheduleTimeline& timeline) {
  const auto& transfers = algorithm.transfers();
  Tracks tracks;
  tracks.tid.resize(transfers.size());
  std::map<std::pair<DeviceId, DeviceId>, std::vector<Time>> free_at;  // per link, per thread
  for (std::uint32_t x : timeline.order) {
    std::vector<Time>& threads = free_at[{transfers[x].src, transfers[x].dst}];
    std::size_t k = 0;
    while (k < threads.size() && threads[k] > simulated.start[x]) ++k;
    if (k == threads.size()) {
      threads.push_back(0);
      tracks.all.emplace_back(transfers[x].src, transfers[x].dst, static_cast<int>(k));
    }
    threads[k] = simulated.end[x];
    tracks.tid[x] = transfers[x].dst + 1 + static_cast<std::int64_t>(k) * (topology.devices() + 1);
  }
  std::sort(tracks.all.begin(), tracks.all.end());
  return tracks;
}

void add_names(EventList& events, const Algorithm& algorithm, const Topology& topology,
               const Tracks& tracks) {
  std::vector<char> sends(static_cast<std::size_t>(topology.devices()), 0);
  for (const Transfer& t : algorithm.transfers()) sends[static_cast<std::size_t>(t.src)] = 1;
  for (DeviceId d = 0; d < topology.devices(); ++d) {
    // Every NPU has a process (its completed-share counter); switches only when they send.
    if (topology.is_switch(d) && !sends[static_cast<std::size_t>(d)]) continue;
    Json name = event("process_name", "M", d + 1, 0, 0);
    name["args"]["name"] = (topology.is_switch(d) ? "switch " : "NPU ") + std::to_string(d);
    events.add(name);
    Json sort = event("process_sort_index", "M", d + 1, 0, 0);
    sort["args"]["sort_index"] = d;
    events.add(sort);
  }
  for (const auto& [src, dst, k] : tracks.all) {
    const std::int64_t tid = dst + 1 + std::int64_t{k} * (topology.devices() + 1);
    Json name = event("thread_name", "M", src + 1, tid, 0);
    name["args"]["name"] = std::to_string(src) + " -> " + std::to_string(dst) +
                           (k > 0 ? " (" + std::to_string(k + 1) + ")" : "");
    events.add(name);
    Json sort = event("thread_sort_index", "M", src + 1, tid, 0);
    sort["args"]["sort_index"] = tid;
    events.add(sort);
  }
  Json name = event("process_name", "M", topology.devices() + 1, 0, 0);
  name["args"]["name"] = "collective";
  events.add(name);
  Json sort = event("process_sort_index", "M", topology.devices() + 1, 0, 0);
  sort["args"]["sort_index"] = -1;
  events.add(sort);
}

void add_slices_and_flows(EventList& events, const Algorithm& algorithm,
                          const SimulationResult& simulated,
                          const detail::ScheduleTimeline& timeline, const Tracks& tracks) {
  const auto& transfers = algorithm.transfers();
  const std::string collective = to_string(algorithm.collective().kind());
  const auto middle = [&](std::uint32_t x) {
    return to_micros(simulated.start[x]) +
           (to_micros(simulated.end[x]) - to_micros(simulated.start[x])) / 2;
  };
  std::uint64_t flow = 0;
  for (std::uint32_t x : timeline.order) {
    const Transfer& t = transfers[x];
    const auto chunks = algorithm.chunks(t);
    Json slice =
        event(chunk_label(chunks), "X", t.src + 1, tracks.tid[x], to_micros(simulated.start[x]));
    slice["dur"] = to_micros(simulated.end[x]) - to_micros(simulated.start[x]);
    slice["cat"] = t.reduce ? "reduce" : "copy";
    Json& args = slice["args"];
    args["transfer"] = x;
    args["src"] = t.src;
    args["dst"] = t.dst;
    args["chunks"] = Json(std::vector<ChunkId>(chunks.begin(), chunks.end()));
    args["bytes"] = algorithm.transfer_bytes(t);
    args["collective"] = collective;
    args["step"] = timeline.step[x];
    args["reduce"] = t.reduce;
    if (t.multicast >= 0) args["multicast"] = t.multicast;
    args["start_ps"] = simulated.start[x];
    args["end_ps"] = simulated.end[x];
    events.add(slice);
    for (std::uint32_t k = timeline.feed_offsets[x]; k < timeline.feed_offsets[x + 1]; ++k) {
      const std::uint32_t y = timeline.feeds[k];
      const Transfer& from = transfers[y];
      Json out = event("chunk", "s", from.src + 1, tracks.tid[y], middle(y));
      out["cat"] = "flow";
      out["id"] = flow;
      out["args"]["arrival_ps"] = simulated.end[y];
      events.add(out);
      Json in = event("chunk", "f", t.src + 1, tracks.tid[x], middle(x));
      in["cat"] = "flow";
      in["id"] = flow;
      in["bp"] = "e";
      events.add(in);
      ++flow;
    }
  }
}

void add_counters(EventList& events, const Algorithm& algorithm, const Topology& topology,
                  const SimulationResult& simulated, const detail::ScheduleTimeline& timeline) {
  // Bytes in flight: +bytes at a start, -bytes at an end; one value per instant, after all of
  // that instant's changes.
  std::vector<std::pair<Time, Bytes>> changes;
  const auto& transfers = algorithm.transfers();
  changes.reserve(2 * transfers.size());
  for (std::size_t x = 0; x < transfers.size(); ++x) {
    const Bytes bytes = algorithm.transfer_bytes(transfers[x]);
    changes.emplace_back(simulated.start[x], bytes);
    changes.emplace_back(simulated.end[x], -bytes);
  }
  std::sort(changes.begin(), changes.end());
  const int collective_pid = topology.devices() + 1;
  Json zero = event("bytes in flight", "C", collective_pid, 0, 0);
  zero["args"]["bytes"] = 0;
  if (changes.empty() || changes.front().first > 0) events.add(zero);
  Bytes in_flight = 0;
  for (std::size_t k = 0; k < changes.size(); ++k) {
    in_flight += changes[k].second;
    if (k + 1 < changes.size() && changes[k + 1].first == changes[k].first) continue;
    Json counter = event("bytes in flight", "C", collective_pid, 0, to_micros(changes[k].first));
    counter["args"]["bytes"] = in_flight;
    events.add(counter);
  }
  // Each NPU's completed share: a value per instant at which some of its chunks complete.
  for (NpuId v = 0; v < topology.npus(); ++v) {
    const auto& done = timeline.completions[static_cast<std::size_t>(v)];
    if (done.empty()) continue;
    const double total = static_cast<double>(done.size());
    if (done.front() > 0) {
      Json counter = event("completed share", "C", v + 1, 0, 0);
      counter["args"]["share"] = 0.0;
      events.add(counter);
    }
    for (std::size_t k = 0; k < done.size(); ++k) {
      if (k + 1 < done.size() && done[k + 1] == done[k]) continue;
      Json counter = event("completed share", "C", v + 1, 0, to_micros(done[k]));
      counter["args"]["share"] = static_cast<double>(k + 1) / total;
      events.add(counter);
    }
  }
}

Json other_data(const Algorithm& algorithm, const Topology& topology,
                const SimulationResult& simulated, LinkModel model) {
  const Collective& c = algorithm.collective();
  Json data;
  data["producer"] = "tacos";
  data["tacos_version"] = TACOS_VERSION;
  data["topology"] = topology.name();
  data["npus"] = topology.npus();
  data["collective"] = to_string(c.kind());
  data["npus_in_collective"] = c.num_members();
  data["size_bytes"] = c.size();
  data["chunk_bytes"] = c.chunk_bytes();
  data["synthesizer"] = algorithm.synthesizer;
  data["link_model"] = to_string(model);
  data["messages"] = algorithm.transfers().size();
  data["collective_time_ps"] = simulated.collective_time;
  data["collective_time_us"] = format_micros(simulated.collective_time);
  return data;
}

}  // namespace

std::string algorithm_trace(const Algorithm& algorithm, const Topology& topology,
                            const SimulationResult& simulated, LinkModel model) {
  if (simulated.start.size() != algorithm.transfers().size() ||
      simulated.end.size() != algorithm.transfers().size())
    throw Error("trace: the simulation result does not belong to this algorithm");
  const detail::ScheduleTimeline timeline = detail::schedule_timeline(algorithm, simulated);
  std::string out = "{\"otherData\":" + other_data(algorithm, topology, simulated, model).dump() +
                    ",\n\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[";
  EventList events(out);
  const Tracks tracks = assign_tracks(algorithm, topology, simulated, timeline);
  add_names(events, algorithm, topology, tracks);
  add_slices_and_flows(events, algorithm, simulated, timeline, tracks);
  add_counters(events, algorithm, topology, simulated, timeline);
  out += "\n]}\n";
  return out;
}

void write_trace(const Algorithm& algorithm, const Topology& topology, LinkModel model,
                 const std::string& path) {
  const SimulationResult simulated = simulate(algorithm, topology, model);
  write_file_atomically(path, algorithm_trace(algorithm, topology, simulated, model));
}

}  // namespace tacos
