#pragma once
// The one port engine (docs/design.md, "Three rules"): times messages hop by hop through links
// and switch ports for the simulator (simulate), the Chakra replay (simulate_chakra) and the
// MSCCL replay (read_msccl_xml), so that the three agree on what a link and a switch port do.
//
// What it models:
//  - a message follows its route (link ids, src to dst). A link leaving an NPU is a FIFO of the
//    messages queued on it: its head starts when the link is free and the head is ready. A link
//    leaving a switch serves the messages that reached the switch in SwitchQueue order.
//    Store-and-forward: a message is queued for its next link when it has fully arrived. A
//    reducing switch's own message joins its first port's switch queue when it is ready.
//  - a hop takes latency + bytes / bandwidth; the link is busy for all of it (LinkModel::kTacos)
//    or for bytes / bandwidth only (kAstra): link_busy_time.
//  - multicast (the simulator's groups): a leader crosses its entry link once for the whole
//    group, and when it reaches the switch every member queues at its own next hop.
//  - Options::congestion false (the Chakra replay of ASTRA-sim's congestion-unaware backend): a
//    message starts when sent and takes every latency plus its bytes once at the narrowest hop;
//    links never queue.
//
// What it leaves to its caller: when a message may start (chunk readiness, ET node
// dependencies, thread-block steps). The engine owns the event heap; a caller posts its own
// events (kinds from kFirstCallerKind) and hears of starts, arrivals and its events through
// Client. Each caller keeps the order of events at one instant it always had (Options):
// priorities per kind, then by id or in posting order; the replays' results depend on it.
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "switch_queue.h"
#include "tacos/common/link_model.h"
#include "tacos/common/types.h"
#include "tacos/topology/topology.h"

namespace tacos::detail {

class PortEngine {
 public:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  // Event kinds the engine handles; a caller numbers its own from kFirstCallerKind.
  enum Kind : std::uint32_t {
    kArrive,      // id: message; it reached its destination
    kHop,         // id: message; it reached a device inside its route
    kLinkFree,    // id: a link leaving an NPU became free
    kSwitchFree,  // id: a link leaving a switch became free
    kServe,       // id: a link leaving a switch serves its queue, if free
    kStart,       // id: a link leaving an NPU starts its FIFO head, if free (start_at_event)
    kFirstCallerKind
  };

  struct Options {
    LinkModel model = LinkModel::kTacos;
    std::string clock;  // names the run in check_schedule_time's error
    // Events at one instant run by priority (per kind, the engine's and the caller's; kinds past
    // the end have 0), then by id (ties_by_id) or in the order they were posted.
    std::vector<std::uint8_t> priority;
    bool ties_by_id = false;
    // send() queues the message and posts kStart (the MSCCL replay: a start reads the sender's
    // buffer, so it waits for every step that runs at the same instant); otherwise the message
    // starts at once when its link is free.
    bool start_at_event = false;
    // A freed switch link posts kServe (the Chakra replay: it serves after the messages that
    // reach the switch at that instant are queued, since its events run in posting order);
    // otherwise it serves at once.
    bool serve_after_free = false;
    bool congestion = true;
    // With LinkModel::kAstra: each hop's busy time (bytes / bandwidth) and arrival time
    // (latency + bytes / bandwidth) cut to whole ns from ASTRA-sim's own double arithmetic, as
    // its analytical congestion-aware backend does (the workload step replay, which predicts
    // what ASTRA-sim prints); otherwise picoseconds rounded up.
    bool whole_ns = false;
  };

  // A caller's side. The engine is passed back so that a caller may send, ready or post from
  // inside a callback.
  class Client {
   public:
    // `msg` (a multicast leader for its whole group) entered its first link now. The caller may
    // still set_chunk: the switch queue reads it when the message reaches the switch.
    virtual void started(PortEngine& engine, std::uint32_t msg, Time now) = 0;
    virtual void arrived(PortEngine& engine, std::uint32_t msg, Time now) = 0;
    virtual void event(PortEngine& engine, std::uint32_t kind, std::uint32_t id, Time now) = 0;

   protected:
    ~Client() = default;
  };

  // `messages` are numbered 0..messages-1 by the caller; each needs set_message before it is
  // queued or sent.
  PortEngine(const Topology& topology, Options options, std::size_t messages, Client& client);

  // `route`: non-empty, src to dst; it must outlive the engine. `chunk` is the switch queue's
  // last tie-break but one (SwitchArrival).
  void set_message(std::uint32_t msg, std::span<const LinkId> route, Bytes bytes, ChunkId chunk);
  void set_chunk(std::uint32_t msg, ChunkId chunk) { chunk_[msg] = chunk; }
  // Serialization times of `bytes` on every link, computed now (errors included) and reused for
  // every message of that size.
  void cache_serialization(Bytes bytes);
  // `member` travels with `leader` to the first switch (its route starts on the same link);
  // members keep the order they were added in.
  void add_member(std::uint32_t leader, std::uint32_t member);

  // The simulator's queues: `msg` joins its first link's FIFO now, in its final order, and
  // starts only when ready() says so (or `ready` here) and the link is free (try_start). A
  // message whose first link leaves a switch (a reducing switch's own) is not enqueued: ready()
  // puts it in that port's switch queue, as if it had just reached the switch.
  void enqueue(std::uint32_t msg, bool ready);
  void ready(std::uint32_t msg, Time now);
  // Starts the FIFO head of a link leaving an NPU, or serves a link leaving a switch, if free.
  void try_start(LinkId link, Time now);
  // The replays: `msg` is ready now and queues for its first link (or, without congestion,
  // starts).
  void send(std::uint32_t msg, Time now);

  void post(Time time, std::uint32_t kind, std::uint32_t id);
  // Runs events until none is left.
  void run();

  Time start(std::uint32_t msg) const { return start_[msg]; }  // -1: not started
  Time end(std::uint32_t msg) const { return end_[msg]; }      // -1: not arrived
  // After run(), for the caller to move out.
  std::vector<Time>& starts() { return start_; }
  std::vector<Time>& ends() { return end_; }
  std::vector<Time>& link_busy_ps() { return busy_ps_; }              // per link: time busy in all
  std::size_t started() const { return started_; }                    // messages, members included
  std::int64_t hops() const { return hops_; }                         // link crossings begun
  std::uint32_t fifo_head(LinkId link) const { return head_[link]; }  // kNone: empty

 private:
  struct Event {
    Time time;
    std::uint64_t order;  // priority, then id or posting sequence
    std::uint32_t kind;
    std::uint32_t id;
    bool operator>(const Event& o) const {
      return time != o.time ? time > o.time : order > o.order;
    }
  };

  void append(LinkId link, std::uint32_t msg);
  // A ready message joins an NPU port's FIFO, which starts now or at the instant's kStart.
  void queue_ready(std::uint32_t msg, LinkId link, Time now);
  void begin(std::uint32_t msg, Time now);
  void cross(std::uint32_t msg, Time now);
  void cross_route(std::uint32_t msg, Time now);
  void reach(std::uint32_t msg, Time now);
  void queue_next(std::uint32_t msg, Time now);
  void queue_at_switch(std::uint32_t msg, LinkId link, Time now);
  void serve(LinkId link, Time now);
  Time serialization(std::uint32_t msg, LinkId link) const;

  const Topology& topology_;
  Options options_;
  Client& client_;

  // Per message.
  std::vector<std::span<const LinkId>> route_;
  std::vector<Bytes> bytes_;
  std::vector<ChunkId> chunk_;
  std::vector<std::uint32_t> hop_;   // the link it is on or queues for
  std::vector<std::uint32_t> next_;  // next in its link's FIFO
  std::vector<char> ready_;
  std::vector<std::uint32_t> next_member_;  // empty without multicast
  std::vector<std::uint32_t> last_member_;
  std::vector<Time> start_, end_;

  // Per link.
  std::vector<char> free_;
  std::vector<char> from_switch_;
  std::vector<std::uint32_t> head_, tail_;
  std::vector<SwitchQueue> switch_queue_;
  std::vector<Time> busy_ps_;
  Bytes cached_bytes_ = 0;
  std::vector<Time> cached_ser_;

  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::uint64_t seq_ = 0;
  std::size_t started_ = 0;
  std::int64_t hops_ = 0;
};

// A Client from three lambdas (started, arrived, event), for callers written as one function.
template <class Started, class Arrived, class Other>
class LambdaClient final : public PortEngine::Client {
 public:
  LambdaClient(Started started, Arrived arrived, Other other)
      : started_(std::move(started)), arrived_(std::move(arrived)), other_(std::move(other)) {}
  void started(PortEngine& engine, std::uint32_t msg, Time now) override {
    started_(engine, msg, now);
  }
  void arrived(PortEngine& engine, std::uint32_t msg, Time now) override {
    arrived_(engine, msg, now);
  }
  void event(PortEngine& engine, std::uint32_t kind, std::uint32_t id, Time now) override {
    other_(engine, kind, id, now);
  }

 private:
  Started started_;
  Arrived arrived_;
  Other other_;
};

}  // namespace tacos::detail
