#include "tacos/topology/topology.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>

#include "../common/group_by.h"
#include "tacos/common/error.h"
#include "tacos/common/units.h"

namespace tacos {

Topology::Topology(int npus, int switches, std::vector<Link> links, std::string name)
    : npus_(npus), switches_(switches), name_(std::move(name)), links_(std::move(links)) {
  if (npus <= 0) throw Error("topology: needs at least one NPU");
  if (switches < 0) throw Error("topology: negative switch count");
  const int devices = npus + switches;
  for (const Link& l : links_) {
    const std::string where =
        "topology: link " + std::to_string(l.src) + " -> " + std::to_string(l.dst);
    if (l.src < 0 || l.src >= devices || l.dst < 0 || l.dst >= devices)
      throw Error(where + " names a device outside 0.." + std::to_string(devices - 1));
    if (l.src == l.dst) throw Error(where + " is a self loop");
    if (!(l.bandwidth_gbps > 0)) throw Error(where + ": bandwidth must be greater than zero");
    if (l.latency_ps < 0) throw Error(where + ": latency must not be negative");
  }
  std::stable_sort(links_.begin(), links_.end(), [](const Link& a, const Link& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  for (std::size_t i = 1; i < links_.size(); ++i)
    if (links_[i].src == links_[i - 1].src && links_[i].dst == links_[i - 1].dst)
      throw Error("topology: duplicate link " + std::to_string(links_[i].src) + " -> " +
                  std::to_string(links_[i].dst));
  // Links are sorted by src, so out-links of d are the id range [out_offsets_[d], ..[d+1]).
  const std::size_t device_count = static_cast<std::size_t>(devices);
  detail::key_offsets(out_offsets_, device_count, links_.size(),
                      [&](std::size_t i) { return links_[i].src; });
  out_index_.resize(links_.size());
  std::iota(out_index_.begin(), out_index_.end(), 0);
  auto in = detail::group_indices_by<LinkId, LinkId>(device_count, links_.size(),
                                                     [&](std::size_t i) { return links_[i].dst; });
  in_offsets_ = std::move(in.offsets);
  in_index_ = std::move(in.values);
}

void Topology::set_switch_flag(std::vector<char>& flags, DeviceId d, bool on,
                               const char* capability) {
  if (!is_switch(d) || d >= devices())
    throw Error("topology: device " + std::to_string(d) + " is not a switch; only switches can " +
                capability);
  if (flags.empty()) {
    if (!on) return;
    flags.assign(switches_, 0);
  }
  flags[d - npus_] = on ? 1 : 0;
}

void Topology::set_multicast(DeviceId d, bool multicast) {
  set_switch_flag(multicast_, d, multicast, "be multicast");
}

void Topology::set_reducing(DeviceId d, bool reducing) {
  set_switch_flag(reducing_, d, reducing, "reduce");
}

int Topology::multicast_switches() const {
  return static_cast<int>(std::count(multicast_.begin(), multicast_.end(), 1));
}

int Topology::reducing_switches() const {
  return static_cast<int>(std::count(reducing_.begin(), reducing_.end(), 1));
}

std::span<const LinkId> Topology::out_links(DeviceId d) const {
  return {out_index_.data() + out_offsets_[d],
          static_cast<std::size_t>(out_offsets_[d + 1] - out_offsets_[d])};
}

std::span<const LinkId> Topology::in_links(DeviceId d) const {
  return {in_index_.data() + in_offsets_[d],
          static_cast<std::size_t>(in_offsets_[d + 1] - in_offsets_[d])};
}

LinkId Topology::find_link(DeviceId src, DeviceId dst) const {
  if (src < 0 || src >= devices()) return -1;
  auto begin = links_.begin() + out_offsets_[src];
  auto end = links_.begin() + out_offsets_[src + 1];
  auto it = std::lower_bound(begin, end, dst, [](const Link& l, DeviceId d) { return l.dst < d; });
  if (it == end || it->dst != dst) return -1;
  return static_cast<LinkId>(it - links_.begin());
}

Time Topology::transfer_time(LinkId id, Bytes bytes) const {
  const Link& l = links_[id];
  return l.latency_ps + serialization_time(bytes, l.bandwidth_gbps);
}

Topology Topology::unwind_switches() const {
  if (switches_ == 0) return *this;
  for (const Link& l : links_)
    if (is_switch(l.src) && is_switch(l.dst))
      throw Error("--switch-model unwind: link " + std::to_string(l.src) + " -> " +
                  std::to_string(l.dst) +
                  " joins two switches; the TACOS paper's unwinding covers one switch tier only "
                  "(use --switch-model device)");
  std::map<std::pair<DeviceId, DeviceId>, Link> direct;
  auto keep_faster = [&](const Link& l) {
    auto [it, inserted] = direct.try_emplace({l.src, l.dst}, l);
    if (!inserted &&
        (l.bandwidth_gbps > it->second.bandwidth_gbps ||
         (l.bandwidth_gbps == it->second.bandwidth_gbps && l.latency_ps < it->second.latency_ps)))
      it->second = l;
  };
  for (const Link& l : links_)
    if (!is_switch(l.src) && !is_switch(l.dst)) keep_faster(l);
  for (DeviceId s = npus_; s < devices(); ++s) {
    std::vector<LinkId> ups;  // NPU -> switch
    for (LinkId id : in_links(s))
      if (!is_switch(links_[id].src)) ups.push_back(id);
    std::vector<LinkId> downs;  // switch -> NPU
    for (LinkId id : out_links(s))
      if (!is_switch(links_[id].dst)) downs.push_back(id);
    std::vector<DeviceId> attached;
    for (LinkId id : ups) attached.push_back(links_[id].src);
    for (LinkId id : downs) attached.push_back(links_[id].dst);
    std::sort(attached.begin(), attached.end());
    attached.erase(std::unique(attached.begin(), attached.end()), attached.end());
    const int ports = static_cast<int>(attached.size());
    if (ports < 2) continue;
    for (LinkId up : ups)
      for (LinkId down : downs) {
        const Link& a = links_[up];
        const Link& b = links_[down];
        if (a.src == b.dst) continue;
        // The slower of the two ports limits the path; it is shared by the P-1 peers.
        const double port = std::min(a.bandwidth_gbps, b.bandwidth_gbps);
        keep_faster(Link{a.src, b.dst, port / (ports - 1), a.latency_ps + b.latency_ps});
      }
  }
  std::vector<Link> links;
  links.reserve(direct.size());
  for (auto& [key, l] : direct) links.push_back(l);
  Topology unwound(npus_, 0, std::move(links), name_);
  unwound.set_shape(shape_);
  return unwound;
}

std::vector<char> Topology::reachable(DeviceId from, bool forward) const {
  std::vector<char> seen(devices(), 0);
  std::queue<DeviceId> queue;
  seen[from] = 1;
  queue.push(from);
  while (!queue.empty()) {
    const DeviceId d = queue.front();
    queue.pop();
    for (LinkId id : forward ? out_links(d) : in_links(d)) {
      const DeviceId next = forward ? links_[id].dst : links_[id].src;
      if (!seen[next]) {
        seen[next] = 1;
        queue.push(next);
      }
    }
  }
  return seen;
}

void Topology::require_strongly_connected() const {
  const auto from0 = reachable(0, true);
  for (NpuId n = 0; n < npus_; ++n)
    if (!from0[n])
      throw Error("topology is disconnected: NPU " + std::to_string(n) +
                  " cannot be reached from NPU 0");
  const auto to0 = reachable(0, false);
  for (NpuId n = 0; n < npus_; ++n)
    if (!to0[n])
      throw Error("topology is disconnected: NPU " + std::to_string(n) + " cannot reach NPU 0");
}

}  // namespace tacos
