//===- local.cpp - the in-process mesh: ranks as threads of one process ---===//
//
// A collective is two rendezvous of the group around one pass over the
// ranks' own buffers: each rank posts its request and buffer pointers and
// waits for all (1); every rank checks that all asked the same, then does
// its share of the work reading the other ranks' buffers directly (2); the
// ranks wait for each other again (3), so that no buffer is released while
// another rank still reads it. Work is split by rank: in an all_reduce
// rank r reduces elements [r*count/N, (r+1)*count/N) over the ranks, in
// rank order (the same order for every element, so every rank gets the
// same bits), and writes them to every rank's output; one read of each
// input, one write of each output, no staging buffer beyond one block.
//
// Waits are bounded by the group's timeout. A timeout names the ranks that
// did not arrive; paddle_comm_abort wakes every waiter with the failing
// rank's reason. Both break the group: later calls fail at once.
//
//===----------------------------------------------------------------------===//

#include "collectives/communicator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using paddle::collectives::Kind;
using paddle::collectives::Request;

namespace {

using Clock = std::chrono::steady_clock;

struct Group;

class LocalComm final : public paddle_comm_s {
public:
  LocalComm(std::shared_ptr<Group> group, int rank, bool owned)
      : groupRef(std::move(group)), group(*groupRef), myRank(rank),
        owned(owned) {}
  int rank() const override { return myRank; }
  int size() const override;
  const char *backend() const override { return "local"; }
  paddle_status_t collective(const Request &request, const void *send,
                             void *recv) override;
  paddle_status_t send(const void *buf, size_t bytes, int dest,
                       int tag) override;
  paddle_status_t recv(void *buf, size_t bytes, int source, int tag) override;
  paddle_status_t split(int color, int key, paddle_comm_t *out) override;
  void abort(const char *reason) override;
  bool ownedByCaller() const override { return owned; }

private:
  std::shared_ptr<Group> groupRef;
  Group &group;
  int myRank;
  bool owned;
  uint64_t splits = 0; // splits this rank made; every rank makes them in order
};

struct Slot {
  Request request;
  const void *send = nullptr;
  void *recv = nullptr;
};

/// How long a rank spins for the others before it sleeps.
constexpr std::chrono::microseconds kSpin(50);

struct Group {
  Group(int size, Clock::duration timeout)
      : size(size), timeout(timeout), arrivedMask(size, false), slots(size) {}

  int size;
  Clock::duration timeout;

  std::mutex mu;
  std::condition_variable cv;
  // Rendezvous completed so far. Written under `mu`; read without it by a
  // rank spinning before it sleeps (arrive()).
  std::atomic<uint64_t> generation{0};
  std::atomic<bool> brokenFlag{false}; // `broken`, for the same readers
  int arrived = 0;
  std::vector<bool> arrivedMask;
  std::vector<Slot> slots;
  bool broken = false;
  paddle_status_code_t brokenCode = PADDLE_OK;
  std::string brokenReason;
  // Point-to-point messages not yet received: (source, dest, tag) -> FIFO.
  std::map<std::tuple<int, int, int>, std::deque<std::vector<char>>> mail;
  // Groups of a split being made: (split number, color) -> the group and
  // how many of its ranks have taken it.
  std::map<std::pair<uint64_t, int>, std::pair<std::shared_ptr<Group>, int>>
      splitting;

  paddle_status_t brokenStatus(int rank) const {
    return paddle_status_create(brokenCode, "rank %d of %d: %s", rank, size,
                                brokenReason.c_str());
  }

  void breakGroup(paddle_status_code_t code, std::string reason) {
    if (broken)
      return;
    broken = true;
    brokenFlag = true;
    brokenCode = code;
    brokenReason = std::move(reason);
    cv.notify_all();
  }

  /// Rendezvous of all ranks in a collective of `kind`; `finishing` for the
  /// one after the work. Both only name the step in a timeout message, which
  /// is the only place a string is built.
  paddle_status_t arrive(int rank, Kind kind, bool finishing) {
    std::unique_lock<std::mutex> lock(mu);
    if (broken)
      return brokenStatus(rank);
    uint64_t gen = generation;
    arrivedMask[rank] = true;
    if (++arrived == size) {
      arrived = 0;
      std::fill(arrivedMask.begin(), arrivedMask.end(), false);
      ++generation;
      cv.notify_all();
      return nullptr;
    }
    Clock::time_point deadline = Clock::now() + timeout;
    // The last rank usually arrives within microseconds, and waking from a
    // condition variable costs tens of them: spin briefly first, yielding
    // the core (more ranks than cores is common).
    lock.unlock();
    Clock::time_point spinUntil = Clock::now() + kSpin;
    while (generation.load(std::memory_order_acquire) == gen &&
           !brokenFlag.load(std::memory_order_acquire) &&
           Clock::now() < spinUntil)
      std::this_thread::yield();
    lock.lock();
    while (generation == gen && !broken) {
      if (cv.wait_until(lock, deadline) == std::cv_status::timeout &&
          generation == gen && !broken) {
        std::string missing;
        for (int r = 0; r < size; ++r)
          if (!arrivedMask[r])
            missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        std::string what = paddle::collectives::kindName(kind);
        if (finishing)
          what += " (waiting for the other ranks to finish)";
        breakGroup(PADDLE_DEADLINE_EXCEEDED,
                   what + " timed out after " + secondsText() + ": rank" +
                       (missing.find(',') == std::string::npos ? " " : "s ") +
                       missing + " did not arrive");
      }
    }
    return generation != gen ? nullptr : brokenStatus(rank);
  }

  std::string secondsText() const {
    char buffer[32];
    snprintf(buffer, sizeof(buffer), "%g s",
             std::chrono::duration<double>(timeout).count());
    return buffer;
  }
};

int LocalComm::size() const { return group.size; }

/// Ranks that asked other than rank 0: "rank 0 asked for X, rank 2 for Y".
std::string disagreement(const std::vector<Slot> &slots) {
  std::string text = "ranks disagree on the collective: rank 0 asked for " +
                     slots[0].request.str();
  for (size_t r = 1; r < slots.size(); ++r)
    if (!(slots[r].request == slots[0].request))
      text += ", rank " + std::to_string(r) + " for " + slots[r].request.str();
  return text;
}

/// [lo, hi) of `count` that rank `r` of `n` works on.
std::pair<size_t, size_t> share(size_t count, int r, int n) {
  return {count * r / n, count * (r + 1) / n};
}

/// Rank r's part of a reducing collective over the posted slots: elements
/// [lo, hi) of the inputs at `inOffset`, reduced in rank order, written to
/// each output in `outs` at `outOffset`.
void reduceShare(const std::vector<Slot> &slots, const Request &req,
                 size_t inOffset, size_t lo, size_t hi,
                 const std::vector<char *> &outs, size_t outOffset) {
  size_t elem = paddle_dtype_size(req.dtype);
  constexpr size_t kBlockBytes = 16384; // stays in L1 between the ranks
  size_t block = std::max<size_t>(1, kBlockBytes / elem);
  std::vector<char> acc(block * elem);
  for (size_t b = lo; b < hi; b += block) {
    size_t n = std::min(block, hi - b);
    const char *first = static_cast<const char *>(slots[0].send);
    memcpy(acc.data(), first + (inOffset + b) * elem, n * elem);
    for (size_t r = 1; r < slots.size(); ++r)
      paddle::collectives::reduceInto(acc.data(),
                                      static_cast<const char *>(slots[r].send) +
                                          (inOffset + b) * elem,
                                      n, req.dtype, req.op);
    for (char *out : outs)
      memcpy(out + (outOffset + b - lo) * elem, acc.data(), n * elem);
  }
}

paddle_status_t LocalComm::collective(const Request &request, const void *send,
                                      void *recv) {
  {
    // A rank that saw the group break must not touch its slot while the
    // others may still read the slots of the failed collective.
    std::lock_guard<std::mutex> lock(group.mu);
    if (group.broken)
      return group.brokenStatus(myRank);
    group.slots[myRank] = {request, send, recv};
  }
  if (paddle_status_t s =
          group.arrive(myRank, request.kind, /*finishing=*/false))
    return s;
  const std::vector<Slot> &slots = group.slots;
  for (const Slot &slot : slots) {
    if (!(slot.request == slots[0].request)) {
      std::lock_guard<std::mutex> lock(group.mu);
      group.breakGroup(PADDLE_INVALID_ARGUMENT, disagreement(slots));
      return group.brokenStatus(myRank);
    }
  }
  int n = group.size, r = myRank;
  size_t elem = paddle_dtype_size(request.dtype);
  size_t count = request.count;
  switch (request.kind) {
  case Kind::AllReduce: {
    auto [lo, hi] = share(count, r, n);
    std::vector<char *> outs;
    for (const Slot &slot : slots)
      outs.push_back(static_cast<char *>(slot.recv) + lo * elem);
    reduceShare(slots, request, 0, lo, hi, outs, 0);
    break;
  }
  case Kind::ReduceScatter:
    // Block r of every input, reduced, is rank r's output.
    reduceShare(slots, request, r * count, 0, count,
                {static_cast<char *>(recv)}, 0);
    break;
  case Kind::AllGather:
    // (No bytes: the buffers may be null, which memcpy does not allow.)
    if (count == 0)
      break;
    for (int j = 0; j < n; ++j)
      memcpy(static_cast<char *>(recv) + j * count * elem, slots[j].send,
             count * elem);
    break;
  case Kind::AllToAll:
    if (count == 0)
      break;
    for (int j = 0; j < n; ++j)
      memcpy(static_cast<char *>(recv) + j * count * elem,
             static_cast<const char *>(slots[j].send) + r * count * elem,
             count * elem);
    break;
  case Kind::Broadcast:
    if (r != request.root)
      memcpy(recv, slots[request.root].recv, count * elem);
    break;
  case Kind::Barrier:
    break; // the second rendezvous keeps the slots still while others check
  }
  return group.arrive(myRank, request.kind, /*finishing=*/true);
}

paddle_status_t LocalComm::send(const void *buf, size_t bytes, int dest,
                                int tag) {
  std::lock_guard<std::mutex> lock(group.mu);
  if (group.broken)
    return group.brokenStatus(myRank);
  const char *p = static_cast<const char *>(buf);
  group.mail[{myRank, dest, tag}].emplace_back(p, p + bytes);
  group.cv.notify_all();
  return nullptr;
}

paddle_status_t LocalComm::recv(void *buf, size_t bytes, int source, int tag) {
  std::unique_lock<std::mutex> lock(group.mu);
  auto key = std::make_tuple(source, myRank, tag);
  Clock::time_point deadline = Clock::now() + group.timeout;
  while (!group.broken) {
    auto it = group.mail.find(key);
    if (it != group.mail.end() && !it->second.empty()) {
      std::vector<char> &message = it->second.front();
      if (message.size() != bytes) {
        size_t got = message.size();
        it->second.pop_front();
        return paddle_status_create(
            PADDLE_INVALID_ARGUMENT,
            "rank %d: recv from rank %d (tag %d) expected %zu bytes, the "
            "message has %zu",
            myRank, source, tag, bytes, got);
      }
      memcpy(buf, message.data(), bytes);
      it->second.pop_front();
      return nullptr;
    }
    if (group.cv.wait_until(lock, deadline) == std::cv_status::timeout) {
      auto again = group.mail.find(key);
      if (again == group.mail.end() || again->second.empty())
        group.breakGroup(PADDLE_DEADLINE_EXCEEDED,
                         "recv from rank " + std::to_string(source) + " (tag " +
                             std::to_string(tag) + ") on rank " +
                             std::to_string(myRank) + " timed out after " +
                             group.secondsText());
    }
  }
  return group.brokenStatus(myRank);
}

paddle_status_t LocalComm::split(int color, int key, paddle_comm_t *out) {
  uint64_t number = splits++;
  int32_t mine[2] = {color, key};
  std::vector<int32_t> all(2 * group.size);
  if (paddle_status_t s =
          collective({Kind::AllGather, 2, PADDLE_I32, PADDLE_REDUCE_SUM, 0},
                     mine, all.data()))
    return s;
  if (color < 0)
    return nullptr;
  // New rank: position among the same color by (key, old rank).
  int newRank = 0, newSize = 0;
  for (int r = 0; r < group.size; ++r) {
    if (all[2 * r] != color)
      continue;
    ++newSize;
    if (std::make_pair(all[2 * r + 1], r) < std::make_pair(key, myRank))
      ++newRank;
  }
  std::shared_ptr<Group> sub;
  {
    std::lock_guard<std::mutex> lock(group.mu);
    auto &entry = group.splitting[{number, color}];
    if (!entry.first)
      entry.first = std::make_shared<Group>(newSize, group.timeout);
    sub = entry.first;
    if (++entry.second == newSize)
      group.splitting.erase({number, color});
  }
  auto *comm = new (std::nothrow) LocalComm(std::move(sub), newRank, true);
  if (!comm)
    return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                "out of memory splitting a communicator");
  *out = comm;
  return nullptr;
}

void LocalComm::abort(const char *reason) {
  std::lock_guard<std::mutex> lock(group.mu);
  group.breakGroup(PADDLE_ABORTED,
                   "rank " + std::to_string(myRank) +
                       " failed: " + (reason ? reason : "(no reason given)"));
}

} // namespace

struct paddle_local_group_s {
  std::shared_ptr<Group> group;
  std::vector<std::unique_ptr<LocalComm>> comms;
};

extern "C" paddle_status_t
paddle_local_group_create(int size, double timeout_s,
                          paddle_local_group_t *out) {
  if (!out)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_local_group_create: out is null");
  *out = nullptr;
  if (size < 1 || size > 1024)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "a local group has 1 to 1024 ranks; %d were asked for", size);
  if (!(timeout_s > 0))
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "a local group needs a timeout above 0 s; %g was given", timeout_s);
  auto *group = new (std::nothrow) paddle_local_group_s;
  if (!group)
    return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                "out of memory creating a local group");
  group->group = std::make_shared<Group>(
      size, std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(timeout_s)));
  for (int r = 0; r < size; ++r)
    group->comms.push_back(std::make_unique<LocalComm>(group->group, r, false));
  *out = group;
  return nullptr;
}

extern "C" paddle_status_t paddle_local_group_comm(paddle_local_group_t group,
                                                   int rank,
                                                   paddle_comm_t *out) {
  if (!group || !out)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_local_group_comm: null argument");
  if (rank < 0 || rank >= group->group->size)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "rank %d is outside the local group of %d",
                                rank, group->group->size);
  *out = group->comms[rank].get();
  return nullptr;
}

extern "C" void paddle_local_group_release(paddle_local_group_t group) {
  delete group;
}
