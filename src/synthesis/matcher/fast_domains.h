#pragma once
// Fast domains: an NPU whose fastest in-links all come down from one switch (the NVSwitch of a
// DGX node) gets a chunk cheaply from any NPU on that switch. This file decides which NPUs form
// such a domain and which of their in-links are slow ways in (a NIC rail), and keeps per domain
// the chunks some member has or is getting. A slow link into a domain only offers chunks the
// domain has no copy of, so each chunk crosses the slow fabric into a domain once and spreads
// inside it over the fast switch.
#include <cstdint>
#include <span>
#include <vector>

#include "bit_matrix.h"
#include "match_link.h"
#include "switch_ports.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

class FastDomains {
 public:
  // `links` sorted by destination, NPU v's in-links [in_begin[v], in_begin[v + 1]). Stays
  // inactive unless some domain has a slower way in.
  void init(const Topology& topology, std::span<const MatchLink> links,
            std::span<const int> in_begin, const SwitchPorts& ports, int chunks);

  // `chunk` is at, or on its way to, `npu`.
  void note_coming(NpuId npu, ChunkId chunk) {
    if (!domain_of_.empty() && domain_of_[npu] >= 0) covered_.set(domain_of_[npu], chunk);
  }
  // `link` is a slow way into the domain of its receiver `dst`, which already has or is getting
  // `chunk`.
  bool covered(LinkId link, NpuId dst, ChunkId chunk) const {
    return !slow_link_.empty() && slow_link_[link] && covered_.test(domain_of_[dst], chunk);
  }

 private:
  std::vector<int> domain_of_;   // per NPU: its fast domain, or -1
  std::vector<char> slow_link_;  // per link: into a domain, slower than the domain's links
  BitMatrix covered_;            // [domain][chunk]: some member has it or is getting it
};

}  // namespace tacos::detail
