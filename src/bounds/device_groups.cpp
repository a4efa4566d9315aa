#include "device_groups.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace tacos::bounds_detail {
namespace {

int find_root(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

std::vector<int> groups_joined_by(const Topology& t, double threshold) {
  const int d = t.devices();
  std::vector<int> parent(d);
  for (int i = 0; i < d; ++i) parent[i] = i;
  for (const Link& l : t.links())
    if (l.bandwidth_gbps >= threshold) parent[find_root(parent, l.src)] = find_root(parent, l.dst);
  std::vector<int> group_of(d);
  for (int i = 0; i < d; ++i) group_of[i] = find_root(parent, i);
  return group_of;
}

std::vector<double> grouping_thresholds(const Topology& t, std::size_t most) {
  std::vector<double> thresholds;
  for (const Link& l : t.links()) thresholds.push_back(l.bandwidth_gbps);
  std::sort(thresholds.begin(), thresholds.end(), std::greater<>());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  if (thresholds.size() > most) thresholds.resize(most);
  thresholds.push_back(std::numeric_limits<double>::infinity());
  return thresholds;
}

bool reductions_inside_groups(const Topology& t, const std::vector<int>& group_of) {
  if (t.reducing_switches() == 0) return true;
  std::vector<char> has_npu(group_of.size(), 0);
  for (int i = 0; i < t.npus(); ++i) has_npu[group_of[i]] = 1;
  for (DeviceId s = t.npus(); s < t.devices(); ++s)
    if (t.is_reducing(s) && !has_npu[group_of[s]]) return false;
  return true;
}

}  // namespace tacos::bounds_detail
