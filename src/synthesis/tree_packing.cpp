#include "tree_packing.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <tuple>

#include "../common/mix64.h"
#include "link_events.h"
#include "reduction.h"
#include "tacos/common/units.h"

namespace tacos::detail {
namespace {

// Each tree is rebuilt this many times against the others' loads, which evens the busiest
// edges out (docs/quality.md, "Measured choices").
constexpr int kRebuildRounds = 3;
// A tree edge's key: its load per unit of bandwidth (in trees) plus this much per level of the
// depth it hangs from. Shallow trees fill and drain their pipeline sooner; 0.5 was the best
// penalty measured (docs/quality.md, "Measured choices").
constexpr double kDepthPenalty = 0.5;

struct Edge {
  NpuId a, b;
  double bandwidth;  // the slower of the two directions
};

std::vector<Edge> two_way_edges(const Topology& topology) {
  std::vector<Edge> edges;
  for (const Link& link : topology.links()) {
    if (link.src >= link.dst) continue;
    const LinkId back = topology.find_link(link.dst, link.src);
    if (back < 0) continue;
    edges.push_back(
        {link.src, link.dst, std::min(link.bandwidth_gbps, topology.link(back).bandwidth_gbps)});
  }
  return edges;
}

NpuId other_end(const Edge& edge, NpuId v) { return edge.a == v ? edge.b : edge.a; }

// NPUs of least eccentricity (hops) over the two-way edges.
std::vector<NpuId> central_npus(int n, const std::vector<Edge>& edges,
                                const std::vector<std::vector<std::size_t>>& incident) {
  std::vector<int> eccentricity(n, 0), dist(n);
  std::vector<NpuId> bfs;
  for (NpuId r = 0; r < n; ++r) {
    std::fill(dist.begin(), dist.end(), -1);
    bfs.assign(1, r);
    dist[r] = 0;
    for (std::size_t i = 0; i < bfs.size(); ++i)
      for (std::size_t e : incident[bfs[i]]) {
        const NpuId w = other_end(edges[e], bfs[i]);
        if (dist[w] >= 0) continue;
        dist[w] = dist[bfs[i]] + 1;
        eccentricity[r] = dist[w];
        bfs.push_back(w);
      }
  }
  const int least = *std::min_element(eccentricity.begin(), eccentricity.end());
  std::vector<NpuId> central;
  for (NpuId r = 0; r < n; ++r)
    if (eccentricity[r] == least) central.push_back(r);
  return central;
}

// Roots the tree given by its edges at its centre (the last NPU left when leaves are stripped
// layer by layer), which minimises its height.
SpanningTree root_at_centre(int n, const std::vector<std::pair<NpuId, NpuId>>& tree_edges) {
  std::vector<std::vector<NpuId>> adjacent(n);
  for (const auto& [a, b] : tree_edges) {
    adjacent[a].push_back(b);
    adjacent[b].push_back(a);
  }
  std::vector<int> degree(n);
  std::vector<NpuId> layer;
  for (NpuId v = 0; v < n; ++v) {
    degree[v] = static_cast<int>(adjacent[v].size());
    if (degree[v] <= 1) layer.push_back(v);
  }
  int left = n;
  while (left > 2) {
    std::vector<NpuId> next;
    left -= static_cast<int>(layer.size());
    for (NpuId leaf : layer)
      for (NpuId w : adjacent[leaf])
        if (--degree[w] == 1) next.push_back(w);
    layer = std::move(next);
  }
  SpanningTree tree;
  tree.parent.assign(n, -1);
  std::vector<int> depth(n, -1);
  const NpuId root = layer.front();
  depth[root] = 0;
  tree.order.push_back(root);
  for (std::size_t i = 0; i < tree.order.size(); ++i) {
    const NpuId v = tree.order[i];
    for (NpuId w : adjacent[v])
      if (depth[w] < 0) {
        depth[w] = depth[v] + 1;
        tree.parent[w] = v;
        tree.height = std::max(tree.height, depth[w]);
        tree.order.push_back(w);
      }
  }
  return tree;
}

// One message of a tree: up (a partial sum towards the root) or down (the result, away from it).
struct TreeMessage {
  NpuId src, dst;
  LinkId link;
  ChunkId chunk;
  std::int32_t rank;     // the chunk's position on its tree: earlier chunks go first
  std::int32_t pending;  // messages it waits for
  bool up;
};

// The reduce-then-broadcast messages of every chunk on its tree, with their dependencies.
struct TreeSchedulePlan {
  std::vector<TreeMessage> messages;
  std::vector<std::vector<std::int32_t>> next;  // messages that wait for this one
};

TreeSchedulePlan plan_messages(const Topology& topology, const std::vector<SpanningTree>& trees,
                               int num_chunks) {
  const int n = topology.npus();
  const int num_trees = static_cast<int>(trees.size());
  TreeSchedulePlan plan;
  auto& messages = plan.messages;
  auto& next = plan.next;
  messages.reserve(static_cast<std::size_t>(num_chunks) * 2 * (n - 1));
  next.reserve(messages.capacity());
  // up[v]: v's message to its parent; down[v]: the parent's message to v.
  std::vector<std::int32_t> up(n), down(n);
  std::vector<int> children(n);
  for (ChunkId chunk = 0; chunk < num_chunks; ++chunk) {
    const SpanningTree& tree = trees[chunk % num_trees];
    const int rank = chunk / num_trees;
    std::fill(children.begin(), children.end(), 0);
    for (NpuId v : tree.order)
      if (tree.parent[v] >= 0) ++children[tree.parent[v]];
    for (NpuId v : tree.order) {
      const NpuId p = tree.parent[v];
      if (p < 0) continue;
      up[v] = static_cast<std::int32_t>(messages.size());
      messages.push_back({v, p, topology.find_link(v, p), chunk, rank, children[v], true});
      next.emplace_back();
      down[v] = static_cast<std::int32_t>(messages.size());
      // Below the root a result comes from the parent; at the root it is complete once every
      // child's partial is in.
      const int waits = tree.parent[p] < 0 ? children[p] : 1;
      messages.push_back({p, v, topology.find_link(p, v), chunk, rank, waits, false});
      next.emplace_back();
    }
    const NpuId root = tree.order.front();
    for (NpuId v : tree.order) {
      const NpuId p = tree.parent[v];
      if (p < 0) continue;
      if (p != root) {
        next[up[v]].push_back(up[p]);
        next[down[p]].push_back(down[v]);
      } else {
        for (NpuId w : tree.order)
          if (tree.parent[w] == root) next[up[v]].push_back(down[w]);
      }
    }
  }
  return plan;
}

// A list schedule of a plan's messages: the batches (messages sent as one), their times, and
// when each message arrives.
struct ListSchedule {
  std::vector<std::vector<std::int32_t>> batches;  // in the order they start
  std::vector<Time> batch_start, batch_end;
  std::vector<Time> arrival;  // per message
  Time makespan = 0;
};

// List scheduling: a free link sends its ready message of the lowest priority value (then the
// first planned), as soon as the link and the data allow; further ready messages of the same
// direction next in line join it, up to `max_batch` chunks in one message, which pays the
// latency once (small messages where the pipeline fills and drains, larger ones where the links
// are busy). `waits_for` empty: the plan's dependencies; otherwise each message's predecessors,
// which schedules the plan backwards in time (a message waits for those that waited for it).
ListSchedule list_schedule(const Topology& topology, Bytes chunk_bytes,
                           const TreeSchedulePlan& plan,
                           const std::vector<std::vector<std::int32_t>>& waits_for,
                           const std::vector<Time>& priority, int max_batch, LinkModel model) {
  const auto& messages = plan.messages;
  const bool backwards = !waits_for.empty();
  const auto& released = backwards ? waits_for : plan.next;
  const auto count = static_cast<std::int32_t>(messages.size());
  std::vector<std::int32_t> pending(count);
  for (std::int32_t m = 0; m < count; ++m)
    pending[m] = backwards ? static_cast<std::int32_t>(plan.next[m].size()) : messages[m].pending;
  using Ready = std::pair<Time, std::int32_t>;  // (priority, message)
  std::vector<std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>>> queue(
      topology.num_links());
  std::vector<Time> link_free(topology.num_links(), 0);
  ListSchedule out;
  out.arrival.assign(count, 0);
  LinkEventQueue events;  // batches arriving (batch id) and links freed
  auto make_ready = [&](std::int32_t m) { queue[messages[m].link].push({priority[m], m}); };
  auto try_send = [&](LinkId l, Time now) {
    if (link_free[l] > now || queue[l].empty()) return;
    std::vector<std::int32_t> batch{queue[l].top().second};
    queue[l].pop();
    const bool up = messages[batch.front()].up;
    while (static_cast<int>(batch.size()) < max_batch && !queue[l].empty() &&
           messages[queue[l].top().second].up == up) {
      batch.push_back(queue[l].top().second);
      queue[l].pop();
    }
    const Link& link = topology.link(l);
    const Time ser =
        serialization_time(chunk_bytes * static_cast<Bytes>(batch.size()), link.bandwidth_gbps);
    const Time arrival = now + link.latency_ps + ser;
    for (std::int32_t m : batch) out.arrival[m] = arrival;
    const auto id = static_cast<std::int32_t>(out.batches.size());
    out.batches.push_back(std::move(batch));
    out.batch_start.push_back(now);
    out.batch_end.push_back(arrival);
    out.makespan = std::max(out.makespan, arrival);
    link_free[l] = now + link_busy_time(model, link.latency_ps, ser);
    events.push({arrival, id});
    events.push(link_free_event(link_free[l], l));
  };
  for (std::int32_t m = 0; m < count; ++m)
    if (pending[m] == 0) make_ready(m);
  for (LinkId l = 0; l < topology.num_links(); ++l) try_send(l, 0);
  run_link_events(
      events,
      [&](std::int32_t arrived, Time, std::vector<LinkId>& touched) {
        for (std::int32_t done : out.batches[arrived])
          for (std::int32_t m : released[done])
            if (--pending[m] == 0) {
              make_ready(m);
              touched.push_back(messages[m].link);
            }
      },
      try_send);
  return out;
}

// The tree order: earlier chunks of a tree first, then partial sums before results.
std::vector<Time> rank_priority(const TreeSchedulePlan& plan) {
  std::vector<Time> priority(plan.messages.size());
  for (std::size_t m = 0; m < priority.size(); ++m)
    priority[m] = plan.messages[m].rank * 2 + (plan.messages[m].up ? 0 : 1);
  return priority;
}

// Forward-backward improvement (the "justification" of resource-constrained project scheduling):
// the plan is scheduled backwards with the messages that arrived last going first, which tells how
// late each message can start, and then forwards again by that latest start. The rank order lets a
// link serve a message that nothing waits for soon while a chain of dependencies stalls behind it;
// ordering by latest start serves the critical chains first. Each round starts from the last
// forward schedule; the fastest is kept (gains: docs/quality.md, "Measured choices").
constexpr int kJustificationRounds = 8;
// Messages scheduled (over all rounds and candidates) beyond which fewer candidates are
// justified, to bound the time it takes (docs/performance.md, "Measured costs").
constexpr double kJustificationBudget = 8e6;

ListSchedule justify(const Topology& topology, Bytes chunk_bytes, const TreeSchedulePlan& plan,
                     ListSchedule schedule, int max_batch, LinkModel model) {
  const std::size_t count = plan.messages.size();
  std::vector<std::vector<std::int32_t>> waits_for(count);
  for (std::size_t m = 0; m < count; ++m)
    for (std::int32_t later : plan.next[m])
      waits_for[later].push_back(static_cast<std::int32_t>(m));
  const std::vector<std::vector<std::int32_t>> forwards;
  std::vector<Time> priority(count);
  ListSchedule best = schedule;
  for (int round = 0; round < kJustificationRounds; ++round) {
    for (std::size_t m = 0; m < count; ++m) priority[m] = -schedule.arrival[m];
    const ListSchedule backward =
        list_schedule(topology, chunk_bytes, plan, waits_for, priority, max_batch, model);
    for (std::size_t m = 0; m < count; ++m) priority[m] = -backward.arrival[m];
    schedule = list_schedule(topology, chunk_bytes, plan, forwards, priority, max_batch, model);
    if (schedule.makespan < best.makespan) best = schedule;
  }
  return best;
}

Algorithm to_algorithm(const TreeSchedulePlan& plan, const ListSchedule& schedule,
                       const Collective& all_reduce, LinkModel model) {
  Algorithm algorithm(all_reduce);
  algorithm.reserve(schedule.batches.size());
  std::vector<ChunkId> chunks;
  for (std::size_t id = 0; id < schedule.batches.size(); ++id) {
    const TreeMessage& first = plan.messages[schedule.batches[id].front()];
    chunks.clear();
    for (std::int32_t m : schedule.batches[id]) chunks.push_back(plan.messages[m].chunk);
    algorithm.add_transfer(first.src, first.dst, schedule.batch_start[id], schedule.batch_end[id],
                           chunks, first.up);
    algorithm.collective_time = std::max(algorithm.collective_time, schedule.batch_end[id]);
  }
  algorithm.synthesizer = "tacos";
  algorithm.link_model = model;
  return algorithm;
}

}  // namespace

std::vector<SpanningTree> pack_spanning_trees(const Topology& topology, int count,
                                              std::uint64_t seed) {
  const int n = topology.npus();
  const std::vector<Edge> edges = two_way_edges(topology);
  std::vector<std::vector<std::size_t>> incident(n);
  for (std::size_t e = 0; e < edges.size(); ++e) {
    incident[edges[e].a].push_back(e);
    incident[edges[e].b].push_back(e);
  }
  double max_bandwidth = 0;
  for (const Edge& e : edges) max_bandwidth = std::max(max_bandwidth, e.bandwidth);
  const std::vector<NpuId> central = central_npus(n, edges, incident);
  std::vector<double> load(edges.size(), 0);  // trees per edge
  std::vector<std::vector<std::size_t>> tree_edges(count);
  std::vector<int> depth(n);
  std::vector<char> in_tree(n);
  // Tree t (re)built by Prim's algorithm from a central NPU (the central NPUs in turn).
  auto build = [&](int t, std::uint64_t round) {
    using Key = std::tuple<double, std::uint64_t, std::size_t, NpuId>;  // key, tie, edge, from
    std::priority_queue<Key, std::vector<Key>, std::greater<Key>> frontier;
    std::fill(in_tree.begin(), in_tree.end(), 0);
    tree_edges[t].clear();
    const std::uint64_t draw = mix64(seed) ^ (round * static_cast<std::uint64_t>(count) + t);
    auto add = [&](NpuId v, int d) {
      in_tree[v] = 1;
      depth[v] = d;
      for (std::size_t e : incident[v])
        if (!in_tree[other_end(edges[e], v)])
          frontier.push({load[e] / edges[e].bandwidth * max_bandwidth + kDepthPenalty * d,
                         mix64(draw * 0x9e3779b97f4a7c15ULL + e), e, v});
    };
    add(central[(static_cast<std::size_t>(t) + seed) % central.size()], 0);
    while (!frontier.empty()) {
      const auto [key, tie, e, from] = frontier.top();
      frontier.pop();
      const NpuId w = other_end(edges[e], from);
      if (in_tree[w]) continue;
      tree_edges[t].push_back(e);
      load[e] += 1;
      add(w, depth[from] + 1);
    }
    return static_cast<int>(tree_edges[t].size()) == n - 1;
  };
  for (int t = 0; t < count; ++t)
    if (!build(t, 0)) return {};
  for (int round = 1; round <= kRebuildRounds; ++round)
    for (int t = 0; t < count; ++t) {
      for (std::size_t e : tree_edges[t]) load[e] -= 1;
      build(t, static_cast<std::uint64_t>(round));
    }
  std::vector<SpanningTree> trees;
  std::vector<std::pair<NpuId, NpuId>> pairs;
  for (int t = 0; t < count; ++t) {
    pairs.clear();
    for (std::size_t e : tree_edges[t]) pairs.emplace_back(edges[e].a, edges[e].b);
    trees.push_back(root_at_centre(n, pairs));
  }
  return trees;
}

std::optional<Algorithm> tree_packing_all_reduce(const Topology& topology,
                                                 const Collective& all_reduce, int num_trees,
                                                 int max_batch, LinkModel model,
                                                 std::uint64_t seed) {
  const int n = topology.npus();
  if (topology.switches() > 0 || all_reduce.num_members() != n || n < 2) return std::nullopt;
  num_trees = std::clamp(num_trees, 1, all_reduce.num_chunks());
  max_batch = std::max(1, max_batch);
  const std::vector<SpanningTree> trees = pack_spanning_trees(topology, num_trees, seed);
  if (trees.empty()) return std::nullopt;
  const TreeSchedulePlan plan = plan_messages(topology, trees, all_reduce.num_chunks());
  const Bytes chunk_bytes = all_reduce.chunk_bytes();
  const ListSchedule schedule =
      justify(topology, chunk_bytes, plan,
              list_schedule(topology, chunk_bytes, plan, {}, rank_priority(plan), max_batch, model),
              max_batch, model);
  Algorithm algorithm = to_algorithm(plan, schedule, all_reduce, model);
  compact(algorithm, topology, model);
  algorithm.seed = seed;
  return algorithm;
}

std::optional<Algorithm> best_tree_packing_all_reduce(const Topology& topology,
                                                      const Collective& all_reduce, LinkModel model,
                                                      std::uint64_t seed) {
  const int n = topology.npus();
  const int num_chunks = all_reduce.num_chunks();
  const double messages = 2.0 * (n - 1) * num_chunks;
  if (topology.switches() > 0 || all_reduce.num_members() != n || n < 2 ||
      n > kTreePackingMaxNpus || messages > kTreePackingMaxMessages)
    return std::nullopt;
  const Bytes chunk_bytes = all_reduce.chunk_bytes();
  // Every tree count and batch size in rank order first. More trees spread the load more
  // evenly, fewer chunks per tree fill the pipeline less well; the counts and batches tried
  // cover the best ones measured (docs/quality.md, "Measured choices").
  struct Candidate {
    Time makespan;
    int trees, batch;
  };
  std::vector<Candidate> candidates;
  for (int trees : {16, 64, 256, 1024}) {
    if (trees > num_chunks && trees > 16) break;
    const int count = std::min(trees, num_chunks);
    const std::vector<SpanningTree> packed = pack_spanning_trees(topology, count, seed);
    if (packed.empty()) return std::nullopt;
    const TreeSchedulePlan plan = plan_messages(topology, packed, num_chunks);
    const std::vector<Time> priority = rank_priority(plan);
    for (int batch : {1, 2, 4, 8})
      candidates.push_back(
          {list_schedule(topology, chunk_bytes, plan, {}, priority, batch, model).makespan, count,
           batch});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.makespan < b.makespan; });
  // Then the fastest few justified: the rank order's ranking mostly holds after justification
  // (on mesh2d:8x8 the best justified was among the three fastest at every K), and a round
  // costs two list schedules.
  const int justified = std::clamp(
      static_cast<int>(kJustificationBudget / (2.0 * kJustificationRounds * messages)), 1, 3);
  std::optional<Algorithm> best;
  for (int i = 0; i < justified && i < static_cast<int>(candidates.size()); ++i) {
    const auto& [makespan, trees, batch] = candidates[i];
    const TreeSchedulePlan plan =
        plan_messages(topology, pack_spanning_trees(topology, trees, seed), num_chunks);
    const ListSchedule schedule =
        justify(topology, chunk_bytes, plan,
                list_schedule(topology, chunk_bytes, plan, {}, rank_priority(plan), batch, model),
                batch, model);
    if (!best || schedule.makespan < best->collective_time)
      best = to_algorithm(plan, schedule, all_reduce, model);
  }
  // The simulator's times (the same rules; never later) make the result replay exactly.
  compact(*best, topology, model);
  best->seed = seed;
  return best;
}

}  // namespace tacos::detail
