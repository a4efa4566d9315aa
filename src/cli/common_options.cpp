#include "common_options.h"

#include <charconv>
#include <cmath>

#include "tacos/common/error.h"
#include "tacos/topology/generators.h"
#include "tacos/topology/loader.h"

namespace tacos::cli {

void TopologyOptions::add_optional_to(CLI::App& command, bool& given,
                                      const std::string& description) {
  add_to(command);
  command.get_option("--topology")
      ->default_str("")
      ->description(description)
      ->each([&given](const std::string&) { given = true; });
}

void TopologyOptions::add_to(CLI::App& command) {
  command
      .add_option("--topology", topology,
                  "Generator spec (e.g. torus2d:8x8, ring:4,fc:8,switch:4) or a YAML file (tacos "
                  "format or ASTRA-sim network config)")
      ->capture_default_str();
  command.add_option("--bandwidth", bandwidth,
                     "Link bandwidth in GB/s (2^30 B/s); one value or a comma list, one per axis "
                     "(x,y,z) or dimension. Default 50 (dgx kinds: datasheet numbers). Ignored for "
                     "topology files");
  command.add_option(
      "--latency", latency,
      "Link latency with unit ns, us or ms (bare number = us); one value or a comma "
      "list like --bandwidth. Default 0.5us (dgx kinds: datasheet numbers). Ignored for "
      "topology files");
  command
      .add_option("--switch-model", switch_model,
                  "How switches are timed: 'device' (a message goes up the sender's port and "
                  "down the receiver's, store-and-forward, as ASTRA-sim times it) or 'unwind' "
                  "(the TACOS paper: a direct link of B/(P-1) per NPU pair)")
      ->capture_default_str();
}

Topology TopologyOptions::network(const Topology& full) const {
  if (switch_model != "device" && switch_model != "unwind")
    throw Error("--switch-model: expected 'device' or 'unwind', got '" + switch_model + "'");
  return switch_model == "unwind" ? full.unwind_switches() : full;
}

Topology TopologyOptions::load() const {
  return load_topology(topology, parse_link_params(bandwidth, latency));
}

int SynthesisFlags::chunks() const {
  if (auto_chunks()) return 1;
  int k = 0;
  const auto [end, error] =
      std::from_chars(chunks_per_npu.data(), chunks_per_npu.data() + chunks_per_npu.size(), k);
  if (chunks_per_npu.empty() || error != std::errc() ||
      end != chunks_per_npu.data() + chunks_per_npu.size() || k < 1)
    throw Error("--chunks-per-npu: expected a whole number >= 1 or 'auto', got '" + chunks_per_npu +
                "'");
  return k;
}

void SynthesisFlags::add_to(CLI::App& command) {
  command
      .add_option(
          "--chunks-per-npu", chunks_per_npu,
          "Chunks each NPU's share is split into (K); chunk = size / (N*K) bytes "
          "(Broadcast, Reduce: size / K). 'auto' tries K = 1, 2, 4, ... and keeps the "
          "fastest (stops after two doublings without a 0.5% gain or past about 2M transfers)")
      ->capture_default_str();
  command.add_option("--seed", seed, "Random seed of the synthesizer")
      ->capture_default_str()
      // A 64-bit unsigned conversion would take "-1" as 2^64 - 1.
      ->check(CLI::Validator(
          [](const std::string& text) {
            return !text.empty() && text.front() == '-'
                       ? "expected a non-negative integer, got '" + text + "'"
                       : std::string();
          },
          ""));
  command
      .add_option("--link-model", link_model,
                  "Link timing: 'tacos' (link busy for latency + size/bandwidth) or 'astra' "
                  "(busy for size/bandwidth, arrival latency later)")
      ->capture_default_str();
}

bool SynthesisFlags::portfolio_on() const {
  if (portfolio != "on" && portfolio != "off")
    throw Error("--portfolio: expected 'on' or 'off', got '" + portfolio + "'");
  return portfolio == "on";
}

void SynthesisFlags::add_auto_budget_to(CLI::App& command) {
  command
      .add_option("--auto-budget", auto_budget,
                  "With --chunks-per-npu auto: start no larger K once the search has spent this "
                  "many seconds (the K being tried is finished; each portfolio baseline's search "
                  "has the same budget); the report's auto_stopped says when it cut the search "
                  "short. 0: no limit")
      ->capture_default_str();
}

double SynthesisFlags::auto_budget_seconds() const {
  double seconds = -1;
  const auto [end, error] =
      std::from_chars(auto_budget.data(), auto_budget.data() + auto_budget.size(), seconds);
  if (auto_budget.empty() || error != std::errc() ||
      end != auto_budget.data() + auto_budget.size() || !(seconds >= 0) || !std::isfinite(seconds))
    throw Error("--auto-budget: expected seconds as a number >= 0 (0: no limit), got '" +
                auto_budget + "'");
  return seconds;
}

void SynthesisFlags::add_portfolio_to(CLI::App& command) {
  command
      .add_option("--portfolio", portfolio,
                  "With --algorithm tacos: 'on' also builds every applicable baseline for the "
                  "same collective and K (timed by the same simulator and link model) and keeps "
                  "the fastest schedule (ties: the greedy), and on direct links under the "
                  "tacos link model merges a link's back-to-back messages where that delays "
                  "nothing (message coalescing) or sends several chunks per message where "
                  "faster (batched messages; with --time-only too); 'off' is the pure TACOS "
                  "greedy. Baselines are skipped with --time-only and beyond 262144 estimated "
                  "baseline transfers (N x "
                  "N x K x mean hops between NPUs; N x K x hops for broadcast and reduce)")
      ->capture_default_str();
}

}  // namespace tacos::cli
