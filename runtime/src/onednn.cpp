//===- onednn.cpp - oneDNN matmul and convolution for compiled code -------===//
//
// The functions of paddle_runtime/onednn.h. Creating a oneDNN primitive costs
// far more than running a small one (it picks and JIT-compiles a kernel), so
// primitives are cached by everything they depend on: the problem (sizes,
// strides, conv parameters), whether the output accumulates, and the thread
// count (oneDNN chooses its blocking for a thread count when the primitive is
// created).
//
// Threads: Debian's oneDNN uses OpenMP. Every call sets the calling thread's
// OpenMP thread count to paddle_get_num_threads(), so oneDNN follows
// paddle_set_num_threads. The calls are made by the function body on the
// thread of paddle_invoke, never inside our parallel loops, so our pool's
// workers are asleep while oneDNN's team runs (docs/onednn.md).
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/onednn.h"
#include "cpu_isa.h"
#include "paddle_runtime/runtime.h"
#include "winograd_weights.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using dnnl::memory;
using Dims = memory::dims;

/// Everything a cached primitive depends on, flattened.
using Key = std::vector<int64_t>;

/// A key that starts with `head`, with room for a problem's dims and
/// program (one allocation per call, not one per growth).
Key keyOf(std::initializer_list<int64_t> head) {
  Key key;
  key.reserve(128);
  key.insert(key.end(), head);
  return key;
}

enum class Kind : int64_t { Matmul = 1, Conv = 2, Reorder = 3, Pool = 4 };

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// The temporaries of one call: activations in the primitive's layout,
/// weights reordered for this call only.
enum class Scratch { Src, Dst, Weights, Middle, Pad, Count };

/// This thread's buffer for `slot`, of at least `bytes` bytes, kept
/// across calls. A fresh buffer per call (oneDNN's own allocation) is one
/// mmap and a page fault per 4 KiB on every call at these sizes: a
/// depthwise conv of MobileNetV2 took 0.99 ms that way against 0.19 ms in a
/// reused buffer.
void *scratchBuffer(Scratch slot, size_t bytes) {
  struct Buffer {
    void *data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffers[static_cast<int>(Scratch::Count)];
  Buffer &b = buffers[static_cast<int>(slot)];
  if (b.bytes < bytes) {
    std::free(b.data);
    b.bytes = 0;
    b.data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!b.data)
      throw std::bad_alloc();
    b.bytes = bytes;
  }
  return b.data;
}

/// The side of an argument that a reorder brings into (or out of) the
/// primitive's layout: the caller's buffer (`kUserSide | DNNL_ARG_SRC`), as
/// opposed to the buffer in the primitive's layout (`DNNL_ARG_SRC`).
constexpr int kUserSide = 1 << 28;

/// This thread's memory object for argument `arg` of `owner` (a cache
/// entry or primitive; both live as long as the process), pointed at
/// `data`. `descOf()` gives its layout when the object is made; it is the
/// same on every call for one (owner, arg). Made once and pointed at each
/// call's buffer: dnnl_memory_create allocates several 64-byte aligned
/// objects, which glibc serves slowly, and was a third of what a tiny conv
/// call cost over the primitive's own run.
template <typename DescOf>
const memory &boundMemory(const void *owner, int arg, void *data,
                          DescOf descOf) {
  struct Hash {
    size_t operator()(const std::pair<const void *, int> &k) const {
      return std::hash<const void *>()(k.first) ^
             (static_cast<size_t>(k.second) * 0x9e3779b97f4a7c15ull);
    }
  };
  thread_local std::unordered_map<std::pair<const void *, int>, memory, Hash>
      objects;
  auto [it, fresh] = objects.try_emplace({owner, arg});
  if (fresh)
    it->second = memory(descOf(), cpuEngine(), data);
  else if (it->second.get_data_handle() != data)
    it->second.set_data_handle(data);
  return it->second;
}

const memory &boundMemory(const void *owner, int arg, void *data,
                          const memory::desc &desc) {
  return boundMemory(owner, arg, data, [&] { return desc; });
}

/// `desc`'s memory in this thread's buffer for `slot`, as argument `arg`
/// of `owner` (boundMemory).
const memory &scratchMemory(const void *owner, int arg,
                            const memory::desc &desc, Scratch slot) {
  return boundMemory(owner, arg, scratchBuffer(slot, desc.get_size()), desc);
}

/// This thread's stream on the CPU engine (execution with OpenMP is
/// synchronous; a stream per call cost allocations).
dnnl::stream &threadStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

/// Attributes that leave a primitive's scratchpad to the caller. oneDNN's
/// own (DNNL_ENABLE_CONCURRENT_EXEC in Debian's build) belongs to the
/// primitive object, and the caches here hand one object to every thread:
/// concurrent runs of a model wrote into each other's partial results
/// (docs/onednn.md, "Concurrent calls").
dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// The arguments of one execution, without the allocations of a map.
class Args {
public:
  Args(std::initializer_list<std::pair<int, const memory *>> args) {
    for (auto [arg, m] : args)
      add(arg, *m);
  }
  void add(int arg, const memory &m) {
    if (count_ == kCapacity)
      throw std::logic_error("too many oneDNN arguments");
    items_[count_++] = {arg, m.get()};
  }
  int count() const { return count_; }
  const dnnl_exec_arg_t *data() const { return items_; }

private:
  // src, weights, dst, bias, a binary operand per post-op, scratchpad.
  static constexpr int kCapacity = 5 + PADDLE_ONEDNN_MAX_POST_OPS;
  dnnl_exec_arg_t items_[kCapacity];
  int count_ = 0;
};

/// The size of `p`'s scratchpad (made with userScratchpad), and its layout.
size_t scratchpadBytes(const dnnl::primitive &p,
                       const dnnl_memory_desc_t **desc) {
  *desc = dnnl_primitive_desc_query_md(p.get_primitive_desc(),
                                       dnnl_query_scratchpad_md, 0);
  return *desc ? dnnl_memory_desc_get_size(*desc) : 0;
}

/// Runs `p` on `args` on this thread's stream and waits for it.
void run(const dnnl::primitive &p, const Args &args) {
  dnnl::stream &stream = threadStream();
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(p.get(), stream.get(), args.count(), args.data()),
      "could not execute a primitive");
  stream.wait();
}

/// Runs `p`, a cached primitive made with userScratchpad, on `args` and
/// this thread's scratchpad.
void execute(const dnnl::primitive &p, Args args) {
  const dnnl_memory_desc_t *pad;
  if (size_t bytes = scratchpadBytes(p, &pad))
    args.add(DNNL_ARG_SCRATCHPAD,
             boundMemory(p.get(), DNNL_ARG_SCRATCHPAD,
                         scratchBuffer(Scratch::Pad, bytes),
                         [&] { return memory::desc(*pad); }));
  run(p, args);
}

/// The same for a timing run of a candidate, which may be destroyed after
/// it: its scratchpad is a memory object of this run's own, as another
/// primitive may later live at the candidate's address (boundMemory).
void execute(const dnnl::primitive &p,
             const std::unordered_map<int, memory> &map) {
  Args args{};
  for (const auto &[arg, m] : map)
    args.add(arg, m);
  const dnnl_memory_desc_t *pad;
  memory scratchpad;
  if (size_t bytes = scratchpadBytes(p, &pad)) {
    scratchpad = memory(memory::desc(*pad), cpuEngine(),
                        scratchBuffer(Scratch::Pad, bytes));
    args.add(DNNL_ARG_SCRATCHPAD, scratchpad);
  }
  run(p, args);
}

/// A reorder between two layouts, with a user scratchpad.
dnnl::reorder makeReorder(const memory::desc &from, const memory::desc &to) {
  dnnl::engine &engine = cpuEngine();
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to,
                                                     userScratchpad()));
}

/// Runs a reorder from `from` to `to` (execute()).
void runReorder(const dnnl::primitive &r, const memory &from,
                const memory &to) {
  execute(r, {{DNNL_ARG_FROM, &from}, {DNNL_ARG_TO, &to}});
}

std::atomic<int64_t> primitivesCreated{0};
std::atomic<int64_t> winogradPrimitives{0};
std::atomic<int64_t> winogradTransforms{0};
std::atomic<int64_t> depthwiseCalls{0};
std::atomic<int64_t> depthwiseStripCalls{0};
/// The most bytes of the 1x1 result one strip of a call with a depthwise
/// post-op may take: within one core's L2 (1 MiB on this Zen 4) with room
/// for the weights and the strip's input and output rows
/// (PADDLE_ONEDNN_DEPTHWISE_STRIP_BYTES at start, for A/B measurements).
std::atomic<int64_t> depthwiseStripBytes{[] {
  const char *v = std::getenv("PADDLE_ONEDNN_DEPTHWISE_STRIP_BYTES");
  return v && *v ? std::strtoll(v, nullptr, 10) : int64_t(768) << 10;
}()};
std::atomic<int64_t> timedCandidates{0};
std::atomic<int64_t> preferredStarts{0};
std::atomic<bool> timedChoice{[] {
  const char *v = std::getenv("PADDLE_ONEDNN_TIMED_CHOICE");
  return !(v && std::string(v) == "0");
}()};
std::atomic<int64_t> weightReorders{0};

/// A convolution primitive with the layouts it chose (`format_tag::any`,
/// usually blocked) and the reorders from and to the caller's plain strided
/// buffers where those differ.
struct ConvEntry {
  dnnl::primitive conv;
  memory::desc src, weights, dst;
  memory::desc userSrc, userWeights, userDst, bias;
  bool reorderSrc, reorderWeights, reorderDst;
  dnnl::reorder srcIn, weightsIn, dstIn, dstOut;
};

struct MatmulEntry {
  dnnl::primitive matmul;
  memory::desc a, b, c, userA, userB, bias;
  // a's conversion to f32 where oneDNN has no bf16 kernel (bf16Fallback).
  bool convertA = false;
  dnnl::reorder aIn, bIn;
};

/// Primitives are made (and their implementations timed) one at a time in
/// the process: oneDNN 2.6 hands threads that create the same primitive
/// one implementation object, and timing runs of it from several threads
/// at once crashed in its kernels (docs/onednn.md, "Concurrent calls").
/// A cache's `make` must not look up a cache itself.
std::mutex &creationMutex() {
  static std::mutex mutex;
  return mutex;
}

/// The cache of one primitive kind: lookups are under a lock, execution
/// is not (each call brings its own scratchpad, execute()).
template <typename Entry> class Cache {
public:
  template <typename Make>
  std::shared_ptr<const Entry> get(const Key &key, Make make) {
    if (auto found = find(key))
      return found;
    // Other threads' lookups go on while this one builds (milliseconds).
    std::lock_guard<std::mutex> creating(creationMutex());
    if (auto found = find(key))
      return found;
    auto entry = std::make_shared<const Entry>(make());
    ++primitivesCreated;
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.emplace(key, std::move(entry)).first->second;
  }

private:
  std::shared_ptr<const Entry> find(const Key &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
  }

  std::mutex mutex_;
  std::map<Key, std::shared_ptr<const Entry>> entries_;
};

Cache<MatmulEntry> &matmulCache() {
  static Cache<MatmulEntry> cache;
  return cache;
}
Cache<ConvEntry> &convCache() {
  static Cache<ConvEntry> cache;
  return cache;
}
Cache<dnnl::reorder> &reorderCache() {
  static Cache<dnnl::reorder> cache;
  return cache;
}
Cache<dnnl::pooling_forward> &poolCache() {
  static Cache<dnnl::pooling_forward> cache;
  return cache;
}

/// Keeps the OpenMP workers of the calling thread's team off the CPU the
/// caller runs on. A worker that slept (libgomp parks it after a short
/// spin) is woken by the caller at the next parallel region, and on the
/// 2-vCPU VM the kernel often put it on the caller's own CPU (it avoids a
/// halted vCPU): both threads then shared one CPU until the next load
/// balancing tick, and a 512^3 matmul on 2 threads called after a 0.25 s
/// pause took 4-8 ms instead of 1.3 in 7 of 15 calls (docs/onednn.md,
/// "Threads"). Each worker's affinity is set to the CPUs it had when first
/// seen but the caller's current one; that costs a sched_getcpu() per
/// call, and syscalls only when the caller has moved. The caller itself is
/// never pinned. Off where OpenMP binds its threads itself (OMP_PROC_BIND,
/// GOMP_CPU_AFFINITY) and with PADDLE_ONEDNN_WORKERS_OFF_CALLER=0.
bool workersOffCallerEnabled() {
  static const bool enabled = [] {
    const char *off = std::getenv("PADDLE_ONEDNN_WORKERS_OFF_CALLER");
    if (off && std::string(off) == "0")
      return false;
    return omp_get_proc_bind() == omp_proc_bind_false &&
           !std::getenv("GOMP_CPU_AFFINITY");
  }();
  return enabled;
}

void keepWorkersOffCaller(int32_t threads) {
  // Inside a parallel region (a nested call) the team is not the one
  // below.
  if (threads < 2 || !workersOffCallerEnabled() || omp_in_parallel())
    return;
  // libgomp keeps one team per calling thread, and its threads across
  // team sizes.
  struct Worker {
    pid_t tid;
    cpu_set_t allowed; // its CPUs when first seen, before any change here
  };
  struct Team {
    int32_t size = 0;
    std::vector<Worker> workers, seen;
    int lastCpu = -1;
  };
  thread_local Team team;
  if (team.size != threads) {
    std::vector<Worker> found(threads);
#pragma omp parallel num_threads(threads)
    {
      Worker &w = found[omp_get_thread_num()];
      w.tid = static_cast<pid_t>(syscall(SYS_gettid));
      if (sched_getaffinity(0, sizeof(w.allowed), &w.allowed) != 0)
        CPU_ZERO(&w.allowed);
    }
    for (Worker &w : found) {
      if (w.tid <= 0)
        continue;
      auto known =
          std::find_if(team.seen.begin(), team.seen.end(),
                       [&](const Worker &k) { return k.tid == w.tid; });
      if (known != team.seen.end())
        w.allowed = known->allowed;
      else
        team.seen.push_back(w);
    }
    // Slots of threads OpenMP did not start keep tid 0, which would name
    // the caller.
    team.workers.clear();
    for (size_t i = 1; i < found.size(); ++i)
      if (found[i].tid > 0)
        team.workers.push_back(found[i]);
    team.size = threads;
    team.lastCpu = -1;
  }
  int cpu = sched_getcpu();
  if (cpu < 0 || cpu == team.lastCpu)
    return;
  team.lastCpu = cpu;
  for (const Worker &w : team.workers) {
    cpu_set_t others = w.allowed;
    CPU_CLR(cpu, &others);
    if (CPU_COUNT(&others) > 0)
      sched_setaffinity(w.tid, sizeof(others), &others); // gone: ESRCH
  }
}

/// oneDNN's thread count for this call: the runtime's.
int64_t useRuntimeThreads() {
  int32_t n = paddle_get_num_threads();
  if (omp_get_max_threads() != n)
    omp_set_num_threads(n);
  keepWorkersOffCaller(n);
  return n;
}

/// The product of `dims` from index `from` on.
int64_t product(const Dims &dims, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < dims.size(); ++i)
    n *= dims[i];
  return n;
}

/// The dense row-major tag of `rank` dims.
memory::format_tag plainTag(size_t rank) {
  using tag = memory::format_tag;
  static const tag tags[] = {
      tag::a,         tag::ab,         tag::abc,         tag::abcd,
      tag::abcde,     tag::abcdef,     tag::abcdefg,     tag::abcdefgh,
      tag::abcdefghi, tag::abcdefghij, tag::abcdefghijk, tag::abcdefghijkl};
  return tags[rank - 1];
}

/// A fused epilogue as paddle-use-onednn encodes it (onednn.h): the
/// post-op kinds with their scalars, the extra operands they read, and
/// whether the weights are a constant (cacheable after a reorder).
struct PostOp {
  int64_t kind, operand;
  double alpha, beta;
};
struct Program {
  bool constantWeights = false;
  bool winograd = false;
  bool constantDepthwiseWeights = false;
  std::vector<PostOp> ops;
  /// The index of the depthwise post-op in `ops`, or -1.
  int64_t depthwise = -1;
};

double doubleOf(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

/// Reads the program: {flags, count, count x {kind, operand, alpha, beta}}
/// (alpha and beta as the bits of doubles).
Program readProgram(const paddle_unranked_memref_t &m) {
  if (m.rank != 1)
    throw std::invalid_argument("the post-op program has rank " +
                                std::to_string(m.rank));
  auto *words = static_cast<const int64_t *>(m.descriptor);
  const int64_t *data;
  std::memcpy(&data, &words[1], sizeof(data));
  data += words[2];
  int64_t size = words[3], stride = words[4];
  auto at = [&](int64_t i) {
    if (i >= size)
      throw std::invalid_argument("the post-op program is truncated");
    return data[i * stride];
  };
  Program p;
  p.constantWeights = at(0) & PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS;
  p.winograd = at(0) & PADDLE_ONEDNN_FLAG_WINOGRAD;
  p.constantDepthwiseWeights =
      at(0) & PADDLE_ONEDNN_FLAG_CONSTANT_DEPTHWISE_WEIGHTS;
  int64_t count = at(1);
  if (count < 0 || count > PADDLE_ONEDNN_MAX_POST_OPS)
    throw std::invalid_argument("the post-op program has " +
                                std::to_string(count) + " post-ops");
  for (int64_t i = 0; i < count; ++i) {
    PostOp op{at(2 + 4 * i), at(3 + 4 * i), doubleOf(at(4 + 4 * i)),
              doubleOf(at(5 + 4 * i))};
    if (op.kind < PADDLE_ONEDNN_POST_LINEAR ||
        op.kind > PADDLE_ONEDNN_POST_DEPTHWISE)
      throw std::invalid_argument("unknown post-op kind " +
                                  std::to_string(op.kind));
    bool reads = op.kind == PADDLE_ONEDNN_POST_BIAS ||
                 op.kind == PADDLE_ONEDNN_POST_ADD ||
                 op.kind == PADDLE_ONEDNN_POST_MUL ||
                 op.kind == PADDLE_ONEDNN_POST_SUB ||
                 op.kind == PADDLE_ONEDNN_POST_DEPTHWISE;
    if (reads && (op.operand < 0 || op.operand >= PADDLE_ONEDNN_MAX_OPERANDS))
      throw std::invalid_argument("post-op operand " +
                                  std::to_string(op.operand) + " out of range");
    if (op.kind == PADDLE_ONEDNN_POST_BIAS && i != 0 &&
        (p.depthwise < 0 || i != p.depthwise + 1))
      throw std::invalid_argument(
          "a bias must be the first post-op or follow the depthwise one");
    if (op.kind == PADDLE_ONEDNN_POST_DEPTHWISE) {
      if (p.depthwise >= 0)
        throw std::invalid_argument("a program has two depthwise post-ops");
      if (op.alpha != 1.0 && op.alpha != 2.0)
        throw std::invalid_argument("the depthwise post-op has stride " +
                                    std::to_string(op.alpha) +
                                    " (1 or 2 needed)");
      p.depthwise = i;
    }
    p.ops.push_back(op);
  }
  if (p.depthwise >= 0)
    for (const PostOp &op : p.ops)
      if (op.kind >= PADDLE_ONEDNN_POST_ADD &&
          op.kind <= PADDLE_ONEDNN_POST_SUM)
        throw std::invalid_argument("a program with a depthwise post-op may "
                                    "hold only biases and eltwise post-ops");
  return p;
}

/// The data of a per-channel operand of `channels` elements: any rank,
/// one dim of size `channels` (or all ones) with stride 1.
float *channelData(const paddle_unranked_memref_t &m, int64_t channels) {
  auto *words = static_cast<const int64_t *>(m.descriptor);
  float *aligned;
  std::memcpy(&aligned, &words[1], sizeof(aligned));
  const int64_t *sizes = words + 3, *strides = words + 3 + m.rank;
  int64_t count = 1;
  for (int64_t i = 0; i < m.rank; ++i) {
    count *= sizes[i];
    if (sizes[i] != 1 && strides[i] != 1)
      throw std::invalid_argument("a per-channel operand has stride " +
                                  std::to_string(strides[i]));
  }
  if (count != channels)
    throw std::invalid_argument("a per-channel operand has " +
                                std::to_string(count) + " elements for " +
                                std::to_string(channels) + " channels");
  return aligned + words[2];
}

/// The data of an operand of `count` elements stored densely in row-major
/// order (a depthwise filter, [C, 1, 1, 3, 3]).
float *denseData(const paddle_unranked_memref_t &m, int64_t count,
                 const char *what) {
  auto *words = static_cast<const int64_t *>(m.descriptor);
  float *aligned;
  std::memcpy(&aligned, &words[1], sizeof(aligned));
  const int64_t *sizes = words + 3, *strides = words + 3 + m.rank;
  int64_t expected = 1;
  for (int64_t i = m.rank - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expected)
      throw std::invalid_argument(std::string(what) + " is not dense (dim " +
                                  std::to_string(i) + " has stride " +
                                  std::to_string(strides[i]) + ")");
    expected *= sizes[i];
  }
  if (expected != count)
    throw std::invalid_argument(std::string(what) + " has " +
                                std::to_string(expected) + " elements, " +
                                std::to_string(count) + " needed");
  return aligned + words[2];
}

/// The key part of a program (kinds and scalars; operands are data).
void appendProgram(Key &key, const Program &p) {
  key.push_back(p.winograd);
  key.push_back(static_cast<int64_t>(p.ops.size()));
  for (const PostOp &op : p.ops) {
    int64_t a, b;
    std::memcpy(&a, &op.alpha, sizeof(a));
    std::memcpy(&b, &op.beta, sizeof(b));
    key.insert(key.end(), {op.kind, op.operand, a, b});
  }
}

/// A per-channel operand's plain layout: `channelDims`, 1 everywhere but
/// the channel dim.
memory::desc channelDesc(const Dims &channelDims) {
  return memory::desc(channelDims, memory::data_type::f32,
                      plainTag(channelDims.size()));
}

/// The oneDNN attributes of a program after the bias; per-channel binary
/// operands are `channelDims` (1 everywhere but the channel dim). An
/// accumulating call starts with a sum of the output's contents.
dnnl::primitive_attr postOpsAttr(const Program &p, bool accumulate,
                                 const Dims &channelDims) {
  dnnl::post_ops ops;
  if (accumulate)
    ops.append_sum(1.0f);
  for (const PostOp &op : p.ops) {
    float a = static_cast<float>(op.alpha), b = static_cast<float>(op.beta);
    auto eltwise = [&](dnnl::algorithm alg, float alpha, float beta) {
      ops.append_eltwise(1.0f, alg, alpha, beta);
    };
    auto binary = [&](dnnl::algorithm alg) {
      ops.append_binary(alg, channelDesc(channelDims));
    };
    switch (op.kind) {
    case PADDLE_ONEDNN_POST_BIAS:
      break;
    case PADDLE_ONEDNN_POST_LINEAR:
      eltwise(dnnl::algorithm::eltwise_linear, a, b);
      break;
    case PADDLE_ONEDNN_POST_RELU:
      eltwise(dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      break;
    case PADDLE_ONEDNN_POST_CLIP:
      eltwise(dnnl::algorithm::eltwise_clip_v2, a, b);
      break;
    case PADDLE_ONEDNN_POST_TANH:
      eltwise(dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
      break;
    case PADDLE_ONEDNN_POST_SIGMOID:
      eltwise(dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
      break;
    case PADDLE_ONEDNN_POST_GELU_ERF:
      eltwise(dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
      break;
    case PADDLE_ONEDNN_POST_GELU_TANH:
      eltwise(dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
      break;
    case PADDLE_ONEDNN_POST_ADD:
      binary(dnnl::algorithm::binary_add);
      break;
    case PADDLE_ONEDNN_POST_MUL:
      binary(dnnl::algorithm::binary_mul);
      break;
    case PADDLE_ONEDNN_POST_SUB:
      binary(dnnl::algorithm::binary_sub);
      break;
    case PADDLE_ONEDNN_POST_SUM:
      ops.append_sum(1.0f);
      break;
    }
  }
  dnnl::primitive_attr attr = userScratchpad();
  attr.set_post_ops(ops);
  return attr;
}

/// The binary post-ops of a program with the execution argument each
/// reads: the post-op at oneDNN index i (counting the leading sum of an
/// accumulating call) reads DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | SRC_1.
std::vector<std::pair<int, const PostOp *>> binaryPostOpArgs(const Program &p,
                                                             bool accumulate) {
  std::vector<std::pair<int, const PostOp *>> found;
  int index = accumulate ? 1 : 0;
  for (const PostOp &op : p.ops) {
    if (op.kind == PADDLE_ONEDNN_POST_BIAS)
      continue;
    if (op.kind == PADDLE_ONEDNN_POST_ADD ||
        op.kind == PADDLE_ONEDNN_POST_MUL || op.kind == PADDLE_ONEDNN_POST_SUB)
      found.push_back(
          {DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, &op});
    ++index;
  }
  return found;
}

/// Calls `add(arg, data)` for each of a program's per-channel operands:
/// its execution argument and the call's data.
template <typename Add>
void forEachPostOpOperand(const Program &p, bool accumulate,
                          const paddle_unranked_memref_t *const *ops,
                          int64_t channels, Add add) {
  for (auto [arg, op] : binaryPostOpArgs(p, accumulate))
    add(arg, channelData(*ops[op->operand], channels));
}

/// Adds a program's per-channel operands to `args`, as this thread's memory
/// objects for arguments of `owner` (boundMemory).
void addPostOpArgs(Args &args, const void *owner, const Program &p,
                   bool accumulate, const paddle_unranked_memref_t *const *ops,
                   int64_t channels, const Dims &channelDims) {
  forEachPostOpOperand(p, accumulate, ops, channels, [&](int arg, float *data) {
    args.add(arg, boundMemory(owner, arg, data,
                              [&] { return channelDesc(channelDims); }));
  });
}

/// Whether a call reads its output's contents: it accumulates, or a sum
/// post-op (a residual) adds them.
bool readsDst(const Program &p, bool accumulate) {
  bool reads = accumulate;
  for (const PostOp &op : p.ops)
    reads |= op.kind == PADDLE_ONEDNN_POST_SUM;
  return reads;
}

/// The layouts of a primitive's operands beyond src, weights and dst.
using ExtraLayouts = std::vector<std::pair<int, memory::desc>>;

/// The layouts of the bias (`biasDesc`, where the program has one) and of
/// the program's per-channel operands, for runs on zeros.
ExtraLayouts extraLayouts(const Program &p, bool accumulate,
                          const memory::desc &biasDesc,
                          const Dims &channelDims) {
  ExtraLayouts extra;
  if (!p.ops.empty() && p.ops[0].kind == PADDLE_ONEDNN_POST_BIAS)
    extra.push_back({DNNL_ARG_BIAS, biasDesc});
  for (auto [arg, op] : binaryPostOpArgs(p, accumulate))
    extra.push_back({arg, channelDesc(channelDims)});
  return extra;
}

template <typename Desc, int Rank> Dims sizesOf(const Desc &d) {
  return Dims(d.sizes, d.sizes + Rank);
}
template <typename Desc, int Rank> Dims stridesOf(const Desc &d) {
  return Dims(d.strides, d.strides + Rank);
}
template <typename Desc> auto *dataOf(const Desc &d) {
  return d.aligned + d.offset;
}

/// Sets every element of a strided view to zero (a product over an empty
/// contraction, which oneDNN does not compute).
template <typename Desc, int Rank> void zeroFill(const Desc &d) {
  int64_t count = 1;
  for (int i = 0; i < Rank; ++i)
    count *= d.sizes[i];
  float *base = dataOf(d);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t rest = linear, at = 0;
    for (int i = Rank - 1; i >= 0; --i) {
      at += (rest % d.sizes[i]) * d.strides[i];
      rest /= d.sizes[i];
    }
    base[at] = 0.0f;
  }
}

constexpr int64_t kMaxDims = 12;

/// An operand of paddle_onednn_matmul in its logical dims.
struct Logical {
  Dims sizes, strides;
  void *data;
};

/// Reads the ranked descriptor behind `m` (of `type` elements) and orders
/// its dims by `map` (onednn.h); absent dims are broadcasts of size 1.
Logical logical(const paddle_unranked_memref_t &m, int64_t map, int64_t rank,
                memory::data_type type = memory::data_type::f32) {
  if (m.rank < 1 || m.rank > kMaxDims)
    throw std::invalid_argument("an operand has rank " +
                                std::to_string(m.rank));
  // {allocated, aligned, offset, sizes[rank], strides[rank]}
  auto *words = static_cast<const int64_t *>(m.descriptor);
  char *aligned;
  std::memcpy(&aligned, &words[1], sizeof(aligned));
  const int64_t *sizes = words + 3, *strides = words + 3 + m.rank;
  Logical l{Dims(rank), Dims(rank),
            aligned +
                words[2] * static_cast<int64_t>(memory::data_type_size(type))};
  for (int64_t i = 0; i < rank; ++i) {
    int64_t at = ((map >> (4 * i)) & 15) - 1;
    if (at >= m.rank)
      throw std::invalid_argument("a dim map names dim " + std::to_string(at) +
                                  " of a rank-" + std::to_string(m.rank) +
                                  " operand");
    l.sizes[i] = at < 0 ? 1 : sizes[at];
    l.strides[i] = at < 0 ? 0 : strides[at];
  }
  return l;
}

bool anyZero(const Dims &dims) {
  return std::find(dims.begin(), dims.end(), 0) != dims.end();
}

/// Sets every element of a logical view to zero.
void zeroFill(const Logical &l) {
  int64_t count = 1;
  for (int64_t s : l.sizes)
    count *= s;
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t rest = linear, at = 0;
    for (int64_t i = static_cast<int64_t>(l.sizes.size()) - 1; i >= 0; --i) {
      at += (rest % l.sizes[i]) * l.strides[i];
      rest /= l.sizes[i];
    }
    static_cast<float *>(l.data)[at] = 0.0f;
  }
}

/// The caller's buffers as memory descriptors with their strides.
memory::desc plain(const Dims &sizes, const Dims &strides,
                   memory::data_type type = memory::data_type::f32) {
  return memory::desc(sizes, type, strides);
}

/// A dense row-major descriptor of `sizes`.
memory::desc dense(const Dims &sizes, memory::data_type type) {
  return memory::desc(sizes, type, plainTag(sizes.size()));
}

/// `make(type)` (a primitive descriptor) for the inputs' type `in`, or,
/// where oneDNN has no bf16 kernel for this CPU (oneDNN 2.6 has none
/// below AVX-512), `make(f32)`: the caller then converts its bf16 inputs
/// to f32 with reorders, which are exact, so the f32 primitive computes
/// the same products and sums. `compute` is set to the type used.
template <typename Make>
auto withBF16Fallback(memory::data_type in, memory::data_type &compute,
                      Make make) {
  compute = in;
  if (in != memory::data_type::bf16)
    return make(in);
  try {
    return make(in);
  } catch (const dnnl::error &e) {
    if (e.status != dnnl_unimplemented)
      throw;
  }
  compute = memory::data_type::f32;
  return make(compute);
}

/// Runs `body`, turning a oneDNN error into a message. Returns false on
/// error (and fills `error`).
template <typename Body>
bool guarded(const char *what, char *error, size_t size, Body body) {
  try {
    body();
    return true;
  } catch (const dnnl::error &e) {
    std::snprintf(error, size, "oneDNN %s failed: %s (dnnl status %d)", what,
                  e.what(), static_cast<int>(e.status));
  } catch (const std::exception &e) {
    std::snprintf(error, size, "oneDNN %s failed: %s", what, e.what());
  }
  return false;
}

/// Ends the call with `error`. Called from the extern "C" functions after
/// every C++ object of the failed call is destroyed: paddle_runtime_fail
/// longjmps, which would skip their destructors.
[[noreturn]] void fail(const char *error) {
  paddle_runtime_fail(PADDLE_INTERNAL, error);
  // paddle_runtime_fail does not return (it unwinds or aborts).
  std::abort();
}

constexpr size_t kErrorSize = 512;

/// Reordered constant weights, by primitive (its cache entry, which lives
/// as long as the process and stands for its key) and the weights' address.
/// A constant's contents never change while its module is loaded; a new
/// module may reuse the address for other contents, so each call site owns
/// a state word in its module's memory (zero when loaded). The first call
/// that finds it zero sets it to a token of the process's own, and an entry
/// serves only calls whose state holds the token it was made under: what an
/// unloaded module left under the key is reordered afresh (docs/onednn.md,
/// "Constant weights"). One call site may use several keys (a depthwise
/// post-op's filter and strips): tokens make that safe too.
class WeightsCache {
public:
  template <typename Make>
  std::shared_ptr<const memory> get(const void *primitive, const void *address,
                                    int64_t *state, Make make) {
    std::pair<const void *, const void *> key{primitive, address};
    int64_t token = __atomic_load_n(state, __ATOMIC_ACQUIRE);
    if (token != 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second.token == token)
        return it->second.weights;
    } else {
      // Two threads may race here: the loser's entry is reordered once
      // more on a later call, nothing worse.
      token = ++nextToken_;
    }
    auto weights = std::make_shared<const memory>(make());
    ++weightReorders;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      entries_[key] = Entry{weights, token};
    }
    __atomic_store_n(state, token, __ATOMIC_RELEASE);
    return weights;
  }

private:
  struct Entry {
    std::shared_ptr<const memory> weights;
    int64_t token;
  };
  std::mutex mutex_;
  std::atomic<int64_t> nextToken_{0};
  std::map<std::pair<const void *, const void *>, Entry> entries_;
};

WeightsCache &weightsCache() {
  static WeightsCache cache;
  return cache;
}

/// The state word of a call site (an i64 memref of one element).
int64_t *stateWord(const paddle_unranked_memref_t &m) {
  auto *words = static_cast<const int64_t *>(m.descriptor);
  int64_t *aligned;
  std::memcpy(&aligned, &words[1], sizeof(aligned));
  return aligned + words[2];
}

/// The extra operands of a call.
struct Operands {
  const paddle_unranked_memref_t *ops[PADDLE_ONEDNN_MAX_OPERANDS];
};

/// One of oneDNN's implementations of a primitive: the primitive and the
/// layouts it takes.
struct Candidate {
  dnnl::primitive primitive;
  memory::desc src, weights, dst;
  std::string name;
};

/// The primitive of `pd`'s current implementation, with its layouts.
template <typename Primitive, typename PrimitiveDesc>
Candidate candidateOf(const PrimitiveDesc &pd) {
  return Candidate{Primitive(pd), pd.src_desc(), pd.weights_desc(),
                   pd.dst_desc(), pd.impl_info_str()};
}

/// The operands of timing runs: each (src, weights, dst and the bias and
/// per-channel post-op operands) is the buffer `given` has for it where its
/// layout is the candidate's, else zeros in a buffer of its own, shared by
/// the candidates with that layout.
class TimingOperands {
public:
  explicit TimingOperands(const std::unordered_map<int, memory> &given)
      : given(given) {}

  /// The arguments of a run of `c`, whose other operands are `extra`.
  std::unordered_map<int, memory> argsOf(const Candidate &c,
                                         const ExtraLayouts &extra) {
    std::unordered_map<int, memory> args;
    args.insert({DNNL_ARG_SRC, bufferOf(DNNL_ARG_SRC, c.src)});
    args.insert({DNNL_ARG_WEIGHTS, bufferOf(DNNL_ARG_WEIGHTS, c.weights)});
    args.insert({DNNL_ARG_DST, bufferOf(DNNL_ARG_DST, c.dst)});
    for (const auto &[arg, desc] : extra)
      args.insert({arg, bufferOf(arg, desc)});
    return args;
  }

private:
  memory bufferOf(int arg, const memory::desc &d) {
    auto it = given.find(arg);
    if (it != given.end() && it->second.get_desc() == d)
      return it->second;
    for (const auto &[key, m] : zeros)
      if (key == arg && m.get_desc() == d)
        return m;
    storage.emplace_back(d.get_size() + 64, 0);
    auto *data = reinterpret_cast<void *>(
        (reinterpret_cast<uintptr_t>(storage.back().data()) + 63) &
        ~uintptr_t(63));
    zeros.emplace_back(arg, memory(d, cpuEngine(), data));
    return zeros.back().second;
  }

  const std::unordered_map<int, memory> &given;
  std::vector<std::pair<int, memory>> zeros;
  std::deque<std::vector<char>> storage;
};

/// One run of `p` on `args`, in ms.
double timedRun(const dnnl::primitive &p,
                const std::unordered_map<int, memory> &args) {
  auto start = std::chrono::steady_clock::now();
  execute(p, args);
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Which of oneDNN's implementations a timed choice compares.
struct ChoiceRules {
  /// Problems whose first pick takes longer than twice this in its warm-up
  /// run keep it untimed: the timing would cost the first call more than
  /// it could save.
  double maxFirstMs;
  /// Whether implementations named "...gemm..." are left out.
  bool skipGemm;
  /// The problem's floating-point operations and the threads it runs on,
  /// for the bound below (0: not known).
  double flops = 0;
  int64_t threads = 1;
  /// An implementation (a prefix of its name) that takes the place of
  /// oneDNN's first pick where oneDNN offers it: what the timing starts
  /// from, and what a problem too big to time keeps. Null: oneDNN's.
  const char *preferred = nullptr;
};

/// Floating-point operations per ms that one thread of this machine does at
/// most in oneDNN's kernels, as far as a timed choice needs to know: the
/// best of four 256^3 sgemm runs on one thread (85-90% of the FMA peak on
/// the Zen 4 VM; a conv or matmul rarely does better), measured once, on
/// the first timed choice, in about 2 ms.
double gemmFlopsPerMs() {
  static const double rate = [] {
    constexpr int64_t n = 256;
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    // The calling thread's own setting (an ICV), put back below.
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    double best = 1e300;
    for (int i = 0; i < 4; ++i) {
      auto start = std::chrono::steady_clock::now();
      dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                 c.data(), n);
      best = std::min(best, std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count());
    }
    omp_set_num_threads(threads);
    return 2.0 * n * n * n / best;
  }();
  return rate;
}

/// Whether a problem of `rules.flops` would take longer than twice
/// `rules.maxFirstMs` (the warm-up's bound) even at gemmFlopsPerMs() on
/// every thread. Such a problem keeps oneDNN's pick without the warm-up
/// run that would say so; ResNet-50's convs at batch 8 (2-15 ms each) paid
/// one run each for it, 0.2 s of the first call. Only a kernel twice as
/// fast as sgemm, or a rate measured at half speed on a busy machine,
/// could make this skip a problem the timing would have changed (those
/// that run within maxFirstMs); either way oneDNN's pick stays, which is
/// slower at worst, never wrong.
bool surelyTooBig(const ChoiceRules &rules) {
  if (rules.flops <= 0)
    return false;
  double fastestMs =
      rules.flops /
      (gemmFlopsPerMs() * double(std::max<int64_t>(1, rules.threads)));
  return fastestMs > 2 * rules.maxFirstMs;
}

/// oneDNN's implementation to use for `pd`: its first (its own pick), or
/// with timed choice (the default) the fastest on this machine of up to
/// four that `alternatives(first)` offers (a primitive descriptor to
/// iterate, with the first pick's activation layouts), reference ones
/// aside, timed when the primitive is created (a warm-up run each, a
/// round over all of them, two more for oneDNN's pick and those that beat
/// it in the first; TimingOperands says on what). oneDNN ranks
/// implementations by ISA and a static order, and its first pick is often
/// not the fastest here (docs/onednn.md, "Timed choice"):
/// - convolutions: `jit_dw` ran MobileNetV2's depthwise convs 10-35%
///   faster than the `brdgmm_dw` it lists first, `jit_1x1` its 32 -> 16
///   conv at 112x112 1.5x faster than `brgconv_1x1`;
/// - matmuls: with B a run-time operand whose rows are a multiple of 4 KiB
///   apart, `gemm:jit` ran 128x768x3072 1.25x faster than `brg:avx512_core`.
/// Another pick must win by 10%.
template <typename Primitive, typename PrimitiveDesc>
Candidate chooseImplementation(
    const PrimitiveDesc &pd,
    const std::function<PrimitiveDesc(const Candidate &)> &alternatives,
    const ExtraLayouts &extra, const std::unordered_map<int, memory> &given,
    const ChoiceRules &rules) {
  Candidate first = candidateOf<Primitive>(pd);
  if (!timedChoice.load(std::memory_order_relaxed))
    return first;
  if (rules.preferred && first.name.rfind(rules.preferred, 0) != 0) {
    PrimitiveDesc other = alternatives(first);
    do {
      if (std::string(other.impl_info_str()).rfind(rules.preferred, 0) == 0 &&
          other.src_desc() == first.src && other.dst_desc() == first.dst) {
        first = candidateOf<Primitive>(other);
        ++preferredStarts;
        break;
      }
    } while (other.next_impl());
  }
  if (surelyTooBig(rules))
    return first;
  constexpr size_t kMaxCandidates = 4;
  constexpr int kRounds = 3;
  // Another pick must beat oneDNN's by a margin: on a shared machine two
  // kernels within a few percent swap places from run to run.
  constexpr double kMargin = 0.9;
  PrimitiveDesc other = alternatives(first);
  std::vector<Candidate> all{first};
  TimingOperands operands(given);
  std::vector<std::unordered_map<int, memory>> args;
  do {
    std::string name = other.impl_info_str();
    if (name == first.name || name.rfind("ref", 0) == 0 ||
        (rules.skipGemm && name.find("gemm") != std::string::npos) ||
        other.src_desc() != first.src || other.dst_desc() != first.dst)
      continue;
    if (args.empty()) {
      // Timed only where there is something to compare it with; the
      // warm-up (caches, pages, lazy setup) says whether it is too big.
      args.push_back(operands.argsOf(first, extra));
      if (timedRun(first.primitive, args[0]) > 2 * rules.maxFirstMs) {
        ++timedCandidates;
        return first;
      }
    }
    all.push_back(candidateOf<Primitive>(other));
    args.push_back(operands.argsOf(all.back(), extra));
    // Its warm-up pays one-time costs (gemm:jit's packing buffer: 1.8x a
    // later run) and does not count.
    timedRun(all.back().primitive, args.back());
  } while (all.size() < kMaxCandidates && other.next_impl());
  if (all.size() == 1)
    return first;
  // Rounds over the candidates, each keeping its best run: a disturbance
  // of the machine (another process's threads spinning for a while) that
  // would slow down every run of one candidate timed after the other
  // falls on all of them alike. After the first round only those that
  // ran faster than oneDNN's pick go on: a slower one would have to gain
  // more than the margin in two runs. Most problems have none (ResNet-50's
  // 1x1 convs: four kernels within 5%), and their timing costs half.
  std::vector<double> best(all.size(), 1e300);
  auto timeOnce = [&](size_t i) {
    best[i] = std::min(best[i], timedRun(all[i].primitive, args[i]));
  };
  for (size_t i = 0; i < all.size(); ++i)
    timeOnce(i);
  std::vector<size_t> contenders;
  for (size_t i = 1; i < all.size(); ++i)
    if (best[i] < best[0])
      contenders.push_back(i);
  for (int round = 1; round < kRounds && !contenders.empty(); ++round) {
    timeOnce(0);
    for (size_t i : contenders)
      timeOnce(i);
  }
  timedCandidates += static_cast<int64_t>(all.size());
  // Timed, the fastest is known: a first pick slower than maxFirstMs after
  // its warm-up (within twice that) is replaced too. Keeping it threw the
  // timing away where it mattered most: 128x768x3072 with a run-time B on
  // the Xeon VM, `brg` 11-14 ms against `gemm:jit`'s 4.1.
  size_t chosen = 0;
  double bar = best[0] * kMargin;
  for (size_t i = 1; i < all.size(); ++i)
    if (best[i] < bar) {
      bar = best[i];
      chosen = i;
    }
  return all[chosen];
}

/// The layout constant 2-D matmul weights [K, N] are reordered into once:
/// oneDNN's preferred one, except that a row of a multiple of 4 KiB gets
/// padding. The gemm streams rows of B one 4 KiB multiple apart otherwise,
/// and they collide in the same L1 sets (4K aliasing): a 128x768x3072
/// matmul (BERT's FFN) took 14 ms that way and 7 ms with rows of 3056 or
/// 3088 floats (docs/onednn.md, "Constant weights").
memory::desc cachedWeightsDesc(const Dims &sizes, memory::data_type type) {
  int64_t n = sizes[1];
  constexpr int64_t kAliasBytes = 4096, kPadBytes = 64;
  int64_t bytes = static_cast<int64_t>(memory::data_type_size(type));
  // bf16 weights take oneDNN's layout (AMX tiles or VNNI pairs, blocked).
  if (type == memory::data_type::f32 && (n * bytes) % kAliasBytes == 0)
    return memory::desc(sizes, type, Dims{n + kPadBytes / bytes, 1});
  return memory::desc(sizes, type, memory::format_tag::any);
}

/// c[j] (+)= sum over k < K of a[k] * b[k * ldb + j], for j < len: eight
/// rows of b at a time are added into c, which stays in L1, so eight
/// streams from memory are in flight (the product is memory-bound: each
/// element of b is used once).
static inline __attribute__((always_inline)) void
gemvRowsBody(const float *__restrict a, const float *__restrict b,
             float *__restrict c, int64_t K, int64_t len, int64_t ldb,
             bool accumulate) {
  if (!accumulate)
    for (int64_t j = 0; j < len; ++j)
      c[j] = 0.0f;
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    const float *__restrict r = b + k * ldb;
    const float
        *__restrict r0 = r,
                    *__restrict r1 = r + ldb, *__restrict r2 = r + 2 * ldb,
                    *__restrict r3 = r + 3 * ldb, *__restrict r4 = r + 4 * ldb,
                    *__restrict r5 = r + 5 * ldb, *__restrict r6 = r + 6 * ldb,
                    *__restrict r7 = r + 7 * ldb;
    float a0 = a[k], a1 = a[k + 1], a2 = a[k + 2], a3 = a[k + 3], a4 = a[k + 4],
          a5 = a[k + 5], a6 = a[k + 6], a7 = a[k + 7];
    for (int64_t j = 0; j < len; ++j)
      c[j] += (a0 * r0[j] + a1 * r1[j] + a2 * r2[j] + a3 * r3[j]) +
              (a4 * r4[j] + a5 * r5[j] + a6 * r6[j] + a7 * r7[j]);
  }
  for (; k < K; ++k) {
    const float *__restrict r = b + k * ldb;
    for (int64_t j = 0; j < len; ++j)
      c[j] += a[k] * r[j];
  }
}

using GemvRowsKernel = void (*)(const float *, const float *, float *, int64_t,
                                int64_t, int64_t, bool);
__attribute__((target("avx512f"))) void
gemvRowsAvx512(const float *a, const float *b, float *c, int64_t K, int64_t len,
               int64_t ldb, bool accumulate) {
  gemvRowsBody(a, b, c, K, len, ldb, accumulate);
}
__attribute__((target("avx2,fma"))) void
gemvRowsAvx2(const float *a, const float *b, float *c, int64_t K, int64_t len,
             int64_t ldb, bool accumulate) {
  gemvRowsBody(a, b, c, K, len, ldb, accumulate);
}
void gemvRowsGeneric(const float *a, const float *b, float *c, int64_t K,
                     int64_t len, int64_t ldb, bool accumulate) {
  gemvRowsBody(a, b, c, K, len, ldb, accumulate);
}

/// The widest gemvRows the CPU runs.
GemvRowsKernel gemvRowsKernel() {
  static const GemvRowsKernel kernel =
      paddle::runtime::widestKernel<GemvRowsKernel>(
          &gemvRowsAvx512, &gemvRowsAvx2, &gemvRowsGeneric);
  return kernel;
}

/// A matrix-vector product c[1, N] (+)= a[1, K] b[K, N] without post-ops.
/// With b's rows contiguous (b[k, n] at k * ldb + n: constant weights, which
/// the pipeline stores pre-transposed), gemvRows on the runtime's threads,
/// each taking a slice of N: 1x4096x4096 in 1.7-2.1 ms on 2 threads of the
/// 2-core Zen 4 VM, 32-38 GB/s, where oneDNN's sgemm took 2.6-3.3 ms and
/// numpy (OpenBLAS) 2.15. With b's columns contiguous, oneDNN's sgemm,
/// whose dot-product gemv streams b at memory speed (2.0 ms there; the
/// matmul primitive read b at 10 GB/s). False where the operands' strides
/// are neither.
bool gemv(const Logical &a, const Logical &b, const Logical &c, bool accumulate,
          const Program &prog) {
  auto *aData = static_cast<const float *>(a.data);
  auto *bData = static_cast<const float *>(b.data);
  auto *cData = static_cast<float *>(c.data);
  if (c.sizes.size() != 2 || c.sizes[0] != 1 || !prog.ops.empty() ||
      a.strides[1] != 1 || c.strides[1] != 1 ||
      (b.strides[1] != 1 && b.strides[0] != 1))
    return false;
  int64_t k = a.sizes[1], n = c.sizes[1];
  bool transposed = b.strides[1] != 1;
  int64_t ldb = transposed ? b.strides[1] : b.strides[0];
  if (ldb < (transposed ? k : n))
    return false;
  int64_t threads = useRuntimeThreads();
  if (!transposed) {
    // Slices of whole 64-byte lines, and at least 32 KiB of b per thread.
    constexpr int64_t kLine = 16, kMinPerThread = 8192;
    int64_t parts =
        std::max<int64_t>(1, std::min<int64_t>(threads, k * n / kMinPerThread));
    int64_t slice = ((n + parts - 1) / parts + kLine - 1) / kLine * kLine;
    parts = (n + slice - 1) / slice;
    GemvRowsKernel kernel = gemvRowsKernel();
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int64_t part = 0; part < parts; ++part) {
      int64_t begin = part * slice, end = std::min(n, begin + slice);
      kernel(aData, bData + begin, cData + begin, k, end - begin, ldb,
             accumulate);
    }
    return true;
  }
  dnnl_status_t status = dnnl_sgemm('N', 'T', 1, n, k, 1.0f, aData, k, bData,
                                    ldb, accumulate ? 1.0f : 0.0f, cData, n);
  if (status != dnnl_success)
    throw dnnl::error(status, "sgemm");
  return true;
}

/// c[B..., M, N] (+)= a[B..., M, K] * b[B..., K, N], then the program's
/// post-ops (per-channel operands broadcast along N). a and b hold `in`
/// elements, c f32.
void matmul(const Logical &a, const Logical &b, const Logical &c,
            bool accumulate, const Program &prog, const Operands &operands,
            int64_t *state, memory::data_type in) {
  if (in == memory::data_type::f32 && gemv(a, b, c, accumulate, prog))
    return;
  int64_t threads = useRuntimeThreads();
  size_t rank = c.sizes.size();
  Key key = keyOf({static_cast<int64_t>(Kind::Matmul), threads, accumulate,
                   static_cast<int64_t>(rank),
                   timedChoice.load(std::memory_order_relaxed),
                   static_cast<int64_t>(in)});
  for (const Dims *v :
       {&a.sizes, &a.strides, &b.sizes, &b.strides, &c.sizes, &c.strides})
    key.insert(key.end(), v->begin(), v->end());
  appendProgram(key, prog);
  int64_t n = c.sizes[rank - 1];
  Dims channelDims(rank, 1);
  channelDims[rank - 1] = n;
  bool bias = !prog.ops.empty() && prog.ops[0].kind == PADDLE_ONEDNN_POST_BIAS;
  float *biasData =
      bias ? channelData(*operands.ops[prog.ops[0].operand], n) : nullptr;
  // Constant 2-D weights take the layout oneDNN prefers, reordered once.
  bool cacheWeights = prog.constantWeights && rank == 2;
  auto entry = matmulCache().get(key, [&] {
    MatmulEntry e;
    e.userA = plain(a.sizes, a.strides, in);
    e.userB = plain(b.sizes, b.strides, in);
    e.c = plain(c.sizes, c.strides);
    e.bias = memory::desc(channelDims, memory::data_type::f32, plainTag(rank));
    dnnl::primitive_attr attr = postOpsAttr(prog, accumulate, channelDims);
    using MatmulPd = dnnl::matmul::primitive_desc;
    // The iterator of the timed choice reads the op descriptor on each
    // next_impl(): it must outlive the search.
    std::optional<dnnl::matmul::desc> desc;
    memory::data_type compute;
    MatmulPd pd = withBF16Fallback(in, compute, [&](memory::data_type type) {
      bool converted = type != in;
      e.a = converted ? dense(a.sizes, type) : e.userA;
      e.b = cacheWeights ? cachedWeightsDesc(b.sizes, type)
            : converted  ? dense(b.sizes, type)
                         : e.userB;
      desc.emplace(bias ? dnnl::matmul::desc(e.a, e.b, e.bias, e.c)
                        : dnnl::matmul::desc(e.a, e.b, e.c));
      return MatmulPd(*desc, attr, cpuEngine());
    });
    e.convertA = compute != in;
    // The timing runs read this call's operands: how fast an
    // implementation streams B depends on where B's rows lie. With rows a
    // multiple of 4 KiB apart (128x768x3072, a run-time B) `brg` took
    // 5.6-8.5 ms over eight sets of buffers, `gemm:jit` (which packs B)
    // 5.8-7.1, so zeros in buffers of their own would decide by chance.
    // They write the output only where the call overwrites it anyway.
    dnnl::engine &engine = cpuEngine();
    std::unordered_map<int, memory> given{
        {DNNL_ARG_SRC, memory(e.userA, engine, a.data)},
        {DNNL_ARG_WEIGHTS, memory(e.userB, engine, b.data)}};
    if (!readsDst(prog, accumulate))
      given.insert({DNNL_ARG_DST, memory(e.c, engine, c.data)});
    if (bias)
      given.insert({DNNL_ARG_BIAS, memory(e.bias, engine, biasData)});
    forEachPostOpOperand(
        prog, accumulate, operands.ops, n, [&](int arg, float *data) {
          given.insert({arg, memory(channelDesc(channelDims), engine, data)});
        });
    // Every implementation is timed on the layouts it takes: constant
    // weights in the one it prefers (zeros for the timing), activations in
    // the caller's. On the Xeon VM `gemm:jit` ran BERT's 128x3072x768 and
    // 128x768x768 products 10-15% faster than the blocked `brg` oneDNN
    // lists first (docs/onednn.md, "Timed choice"). Runs of up to 10 ms
    // are timed (the skinny products of a transformer layer take 1-8, a
    // 1024^3 one 15-20): the first call pays about eight runs per distinct
    // problem. An f32 input converted to bf16 for the call keeps the first
    // pick (bf16 inputs are timed too).
    //
    // A 2-D product with a run-time f32 B of 2.5e8 FLOPs and up (512^3)
    // starts from `gemm:jit`: on the Xeon VM it ran them 4-45%
    // faster than `brg` on 1 thread (512^3 0.94x the time, 1024^3 0.95x,
    // 2048^3 0.91x, 64x4096x1024 0.80x, 128x768x3072 0.55x; 256^3 1.06x)
    // and 0.93-1.01x on 2, interleaved in C++ (docs/onednn.md). The 10%
    // margin kept `brg` where it wins by less, and a product too big to
    // time (2048^3) kept it untimed. Batched products were not measured.
    double flops = 2.0 * double(product(c.sizes)) * double(a.sizes[rank - 1]);
    constexpr double kGemmJitMinFlops = 2.5e8;
    bool preferGemm = rank == 2 && !cacheWeights &&
                      in == memory::data_type::f32 && flops >= kGemmJitMinFlops;
    Candidate chosen =
        e.convertA
            ? candidateOf<dnnl::matmul>(pd)
            : chooseImplementation<dnnl::matmul, MatmulPd>(
                  pd,
                  [&](const Candidate &) {
                    return MatmulPd(*desc, attr, cpuEngine());
                  },
                  extraLayouts(prog, accumulate, e.bias, channelDims), given,
                  {/*maxFirstMs=*/10.0, /*skipGemm=*/false, flops, threads,
                   preferGemm ? "gemm:jit" : nullptr});
    e.b = chosen.weights;
    if (e.b != e.userB)
      e.bIn = makeReorder(e.userB, e.b);
    if (e.convertA)
      e.aIn = makeReorder(e.userA, e.a);
    e.matmul = chosen.primitive;
    return e;
  });
  const MatmulEntry *owner = entry.get();
  const memory *aMem;
  if (owner->convertA) {
    aMem = &scratchMemory(owner, DNNL_ARG_SRC, owner->a, Scratch::Src);
    runReorder(
        owner->aIn,
        boundMemory(owner, kUserSide | DNNL_ARG_SRC, a.data, owner->userA),
        *aMem);
  } else {
    aMem = &boundMemory(owner, DNNL_ARG_SRC, a.data, owner->a);
  }
  Args args{
      {DNNL_ARG_SRC, aMem},
      {DNNL_ARG_DST, &boundMemory(owner, DNNL_ARG_DST, c.data, owner->c)}};
  if (bias)
    args.add(DNNL_ARG_BIAS,
             boundMemory(owner, DNNL_ARG_BIAS, biasData, owner->bias));
  addPostOpArgs(args, owner, prog, accumulate, operands.ops, n, channelDims);
  const memory &userB =
      boundMemory(owner, kUserSide | DNNL_ARG_WEIGHTS, b.data, owner->userB);
  std::shared_ptr<const memory> cached;
  const memory *bMem = &userB;
  if (owner->b != owner->userB) {
    if (cacheWeights) {
      cached = weightsCache().get(owner, b.data, state, [&] {
        memory m(owner->b, cpuEngine());
        runReorder(owner->bIn, userB, m);
        return m;
      });
      bMem = cached.get();
    } else {
      bMem =
          &scratchMemory(owner, DNNL_ARG_WEIGHTS, owner->b, Scratch::Weights);
      runReorder(owner->bIn, userB, *bMem);
    }
  }
  args.add(DNNL_ARG_WEIGHTS, *bMem);
  execute(owner->matmul, args);
}

/// The grouped convolution in oneDNN's dims: src [N, G*C, H, W], weights
/// [G, F, C, KH, KW] (or [F, C, KH, KW] for one group), dst [N, G*F, OH, OW].
struct ConvProblem {
  Dims src, srcStrides, weights, weightsStrides, dst, dstStrides;
  Dims strides, dilations;
  // Zero padding of src's spatial dims: {top, left} and {bottom, right}.
  Dims padBefore, padAfter;
  // The element type of src and weights (dst is f32).
  memory::data_type input = memory::data_type::f32;
};

/// Whether convolutions keep the caller's plain layouts for src and dst
/// (oneDNN's reference-free gemm or plain-layout kernels) or let oneDNN
/// choose blocked ones, reordered in and out on each call.
bool plainConvActivations() {
  static const bool plain = [] {
    const char *v = std::getenv("PADDLE_ONEDNN_CONV_LAYOUT");
    return v && std::string(v) == "plain";
  }();
  return plain;
}

/// Throws unless `p`'s output dims are those of its padded input.
void checkConvShape(const ConvProblem &p) {
  int64_t kernelDims = p.weights.size();
  for (int i = 0; i < 2; ++i) {
    if (p.padBefore[i] < 0 || p.padAfter[i] < 0)
      throw std::invalid_argument("negative padding");
    if (p.strides[i] < 1 || p.dilations[i] < 1)
      throw std::invalid_argument("strides and dilations must be >= 1");
    int64_t padded = p.src[2 + i] + p.padBefore[i] + p.padAfter[i];
    int64_t window = p.dilations[i] * (p.weights[kernelDims - 2 + i] - 1) + 1;
    int64_t out = padded < window ? 0 : (padded - window) / p.strides[i] + 1;
    if (out != p.dst[2 + i])
      throw std::invalid_argument("output spatial dim " + std::to_string(i) +
                                  " is " + std::to_string(p.dst[2 + i]) +
                                  ", the padded input gives " +
                                  std::to_string(out));
  }
}

void conv2d(const ConvProblem &p, void *src, void *weights, float *dst,
            bool accumulate, const Program &prog, const Operands &operands,
            int64_t *state);

std::string dimsString(const Dims &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

/// Output rows per strip of a depthwise post-op with stride `s` on an
/// image of `h` rows of `rowBytes` each (1x1 result): as many as keep a
/// strip's s * (rows - 1) + 3 input rows within the budget, at least one;
/// all of them without a budget.
int64_t depthwiseStripRows(int64_t oh, int64_t s, int64_t rowBytes) {
  int64_t budget = depthwiseStripBytes.load(std::memory_order_relaxed);
  if (budget <= 0)
    return oh;
  int64_t fit = budget / rowBytes;
  int64_t rows = fit < 3 ? 1 : (fit - 3) / s + 1;
  return std::min(rows, oh);
}

/// A 1x1 conv followed by its depthwise post-op (onednn.h,
/// PADDLE_ONEDNN_POST_DEPTHWISE) as two convolutions per strip of output
/// rows: the 1x1 result of a strip's input rows goes to a buffer of this
/// thread's that stays in L2 (depthwiseStripBytes), and the depthwise conv
/// reads it there. The rows two strips share (3 - stride) are carried over,
/// not computed twice. Unfused, MobileNetV2's 96 x 112 x 112 expansion
/// (4.8 MB) is written out by one conv and read back by the next.
void conv2dDepthwise(const ConvProblem &p, float *src, float *weights,
                     float *dst, bool accumulate, const Program &prog,
                     const Operands &operands, int64_t *state) {
  const PostOp &dwOp = prog.ops[prog.depthwise];
  int64_t s = static_cast<int64_t>(dwOp.alpha);
  if (p.weights.size() != 4 || p.weights[2] != 1 || p.weights[3] != 1)
    throw std::invalid_argument("a depthwise post-op needs a 1x1 convolution "
                                "before it, not weights " +
                                dimsString(p.weights));
  for (int i = 0; i < 2; ++i)
    if (p.strides[i] != 1 || p.dilations[i] != 1 || p.padBefore[i] != 0 ||
        p.padAfter[i] != 0)
      throw std::invalid_argument("a depthwise post-op needs a convolution "
                                  "with unit strides and dilations and no "
                                  "padding before it");
  if (accumulate)
    throw std::invalid_argument("a depthwise post-op on an accumulating call");
  int64_t n = p.src[0], c = p.weights[0], h = p.src[2], w = p.src[3];
  Dims expected{n, c, (h - 1) / s + 1, (w - 1) / s + 1};
  if (p.dst != expected)
    throw std::invalid_argument("the output is " + dimsString(p.dst) +
                                ", the depthwise post-op makes " +
                                dimsString(expected));
  float *filter =
      denseData(*operands.ops[dwOp.operand], c * 9, "the depthwise filter");
  Program first, second;
  first.constantWeights = prog.constantWeights;
  first.ops.assign(prog.ops.begin(), prog.ops.begin() + prog.depthwise);
  second.constantWeights = prog.constantDepthwiseWeights;
  second.ops.assign(prog.ops.begin() + prog.depthwise + 1, prog.ops.end());

  int64_t oh = p.dst[2], ow = p.dst[3];
  int64_t rowBytes = w * c * int64_t(sizeof(float));
  int64_t rows = depthwiseStripRows(oh, s, rowBytes);
  ++depthwiseCalls;
  if (rows >= oh) {
    // One strip: the two convolutions over the whole batch, through a
    // buffer for the 1x1 result (batch-N primitives, as unfused).
    Dims middleDims{n, c, h, w}, middleStrides{h * w * c, 1, w * c, c};
    auto *middle = static_cast<float *>(
        scratchBuffer(Scratch::Middle, n * h * w * c * sizeof(float)));
    ConvProblem one = p;
    one.dst = middleDims;
    one.dstStrides = middleStrides;
    conv2d(one, src, weights, middle, false, first, operands, state);
    ConvProblem dw{middleDims, middleStrides, {c, 1, 1, 3, 3}, {9, 9, 9, 3, 1},
                   p.dst,      p.dstStrides,  {s, s},          {1, 1},
                   {1, 1},     {1, 1}};
    conv2d(dw, middle, filter, dst, false, second, operands, state);
    return;
  }
  ++depthwiseStripCalls;
  int64_t maxRows = std::min(h, s * (rows - 1) + 3);
  Dims middleStrides{maxRows * w * c, 1, w * c, c};
  auto *middle = static_cast<float *>(
      scratchBuffer(Scratch::Middle, maxRows * w * c * sizeof(float)));
  // The strips' problems, updated in place (their dims keep their storage).
  ConvProblem one = p;
  one.dstStrides = middleStrides;
  ConvProblem dw{{},     middleStrides, {c, 1, 1, 3, 3}, {9, 9, 9, 3, 1},
                 {},     p.dstStrides,  {s, s},          {1, 1},
                 {0, 1}, {0, 1}};
  for (int64_t image = 0; image < n; ++image) {
    float *in = src + image * p.srcStrides[0];
    float *out = dst + image * p.dstStrides[0];
    // `middle` holds the 1x1 result of input rows [from, to).
    int64_t from = 0, to = 0;
    for (int64_t o0 = 0; o0 < oh; o0 += rows) {
      int64_t o1 = std::min(oh, o0 + rows);
      // Output row o reads input rows s * o - 1 .. s * o + 1 (padding 1).
      int64_t lo = std::max<int64_t>(0, s * o0 - 1),
              hi = std::min(h, s * (o1 - 1) + 2);
      // The rows this strip shares with the last one move to the top.
      int64_t kept = std::max<int64_t>(0, to - lo);
      if (kept > 0 && lo != from)
        std::memmove(middle, middle + (lo - from) * w * c, kept * rowBytes);
      int64_t fresh = hi - lo - kept;
      if (fresh > 0) {
        one.src = {1, p.src[1], fresh, w};
        one.dst = {1, c, fresh, w};
        conv2d(one, in + (lo + kept) * p.srcStrides[2], weights,
               middle + kept * w * c, false, first, operands, state);
      }
      from = lo;
      to = hi;
      dw.src = {1, c, hi - lo, w};
      dw.dst = {1, c, o1 - o0, ow};
      dw.padBefore[0] = s * o0 - 1 < 0 ? 1 : 0;
      dw.padAfter[0] = std::max<int64_t>(0, s * (o1 - 1) + 2 - h);
      conv2d(dw, middle, filter, out + o0 * p.dstStrides[2], false, second,
             operands, state);
    }
  }
}

void conv2d(const ConvProblem &p, void *src, void *weights, float *dst,
            bool accumulate, const Program &prog, const Operands &operands,
            int64_t *state) {
  bool f32 = p.input == memory::data_type::f32;
  if (prog.depthwise >= 0) {
    if (!f32)
      throw std::invalid_argument("a depthwise post-op needs f32 operands");
    return conv2dDepthwise(p, static_cast<float *>(src),
                           static_cast<float *>(weights), dst, accumulate, prog,
                           operands, state);
  }
  checkConvShape(p);
  int64_t threads = useRuntimeThreads();
  Key key = keyOf({static_cast<int64_t>(Kind::Conv), threads, accumulate,
                   static_cast<int64_t>(p.weights.size()),
                   timedChoice.load(std::memory_order_relaxed),
                   static_cast<int64_t>(p.input)});
  for (const Dims *v :
       {&p.src, &p.srcStrides, &p.weights, &p.weightsStrides, &p.dst,
        &p.dstStrides, &p.strides, &p.dilations, &p.padBefore, &p.padAfter})
    key.insert(key.end(), v->begin(), v->end());
  appendProgram(key, prog);
  int64_t channels = p.dst[1];
  Dims channelDims{1, channels, 1, 1};
  bool bias = !prog.ops.empty() && prog.ops[0].kind == PADDLE_ONEDNN_POST_BIAS;
  bool plainActivations = plainConvActivations();
  auto entry = convCache().get(key, [&] {
    ConvEntry e;
    e.userSrc = plain(p.src, p.srcStrides, p.input);
    e.userWeights = plain(p.weights, p.weightsStrides, p.input);
    e.userDst = plain(p.dst, p.dstStrides);
    auto any = [](const Dims &sizes, memory::data_type type) {
      return memory::desc(sizes, type, memory::format_tag::any);
    };
    // oneDNN counts dilation from 0 (no dilation).
    Dims dilations{p.dilations[0] - 1, p.dilations[1] - 1};
    // The type the primitive computes in: the inputs', or f32 where oneDNN
    // has no bf16 kernel (withBF16Fallback; the reorders in convert).
    memory::data_type compute = p.input;
    memory::desc srcDesc = plainActivations ? e.userSrc : any(p.src, compute);
    memory::desc dstDesc =
        plainActivations ? e.userDst : any(p.dst, memory::data_type::f32);
    // Weights always take oneDNN's layout: constant ones are reordered once
    // (WeightsCache), others on each call.
    e.bias =
        memory::desc({channels}, memory::data_type::f32, memory::format_tag::a);
    const memory::desc &biasDesc = e.bias;
    auto descOf = [&](dnnl::algorithm algorithm) {
      return bias ? dnnl::convolution_forward::desc(
                        dnnl::prop_kind::forward_inference, algorithm, srcDesc,
                        any(p.weights, compute), biasDesc, dstDesc, p.strides,
                        dilations, p.padBefore, p.padAfter)
                  : dnnl::convolution_forward::desc(
                        dnnl::prop_kind::forward_inference, algorithm, srcDesc,
                        any(p.weights, compute), dstDesc, p.strides, dilations,
                        p.padBefore, p.padAfter);
    };
    dnnl::primitive_attr attr = postOpsAttr(prog, accumulate, channelDims);
    // Winograd where the compiler allows it and oneDNN has a kernel for
    // the problem (its layouts, post-ops and CPU): unimplemented is an
    // error from the primitive descriptor, which falls back to direct.
    std::optional<dnnl::convolution_forward::primitive_desc> winograd;
    if (prog.winograd && f32) {
      try {
        winograd.emplace(descOf(dnnl::algorithm::convolution_winograd), attr,
                         cpuEngine());
      } catch (const dnnl::error &) {
      }
    }
    if (winograd)
      ++winogradPrimitives;
    dnnl::convolution_forward::primitive_desc pd =
        winograd
            ? *winograd
            : withBF16Fallback(p.input, compute, [&](memory::data_type type) {
                if (type != p.input)
                  srcDesc = any(p.src, type);
                return dnnl::convolution_forward::primitive_desc(
                    descOf(dnnl::algorithm::convolution_direct), attr,
                    cpuEngine());
              });
    // The operands beyond src, weights and dst, for timing.
    ExtraLayouts extra = extraLayouts(prog, accumulate, biasDesc, channelDims);
    using ConvPd = dnnl::convolution_forward::primitive_desc;
    // Winograd is its own algorithm, with one kernel.
    std::optional<dnnl::convolution_forward::desc> fixedDesc;
    Candidate chosen =
        winograd ? candidateOf<dnnl::convolution_forward>(pd)
                 : chooseImplementation<dnnl::convolution_forward, ConvPd>(
                       pd,
                       [&](const Candidate &first) {
                         srcDesc = first.src;
                         dstDesc = first.dst;
                         // The iterator reads the op descriptor on each
                         // next_impl(): it must outlive the search.
                         fixedDesc.emplace(
                             descOf(dnnl::algorithm::convolution_direct));
                         return ConvPd(*fixedDesc, attr, cpuEngine());
                       },
                       extra, /*given=*/{},
                       {/*maxFirstMs=*/1.0, /*skipGemm=*/true,
                        2.0 * double(product(p.dst)) *
                            double(product(p.weights, p.weights.size() - 3)),
                        threads});
    e.conv = chosen.primitive;
    e.src = chosen.src;
    e.weights = chosen.weights;
    e.dst = chosen.dst;
    e.reorderSrc = e.src != e.userSrc;
    e.reorderWeights = e.weights != e.userWeights;
    e.reorderDst = e.dst != e.userDst;
    if (e.reorderSrc)
      e.srcIn = makeReorder(e.userSrc, e.src);
    if (e.reorderWeights)
      e.weightsIn = makeReorder(e.userWeights, e.weights);
    if (e.reorderDst) {
      e.dstOut = makeReorder(e.dst, e.userDst);
      // The sum post-ops (accumulate, residual) read the output's contents.
      e.dstIn = makeReorder(e.userDst, e.dst);
    }
    return e;
  });

  const ConvEntry *owner = entry.get();
  const memory &userSrc =
      boundMemory(owner, kUserSide | DNNL_ARG_SRC, src, owner->userSrc);
  const memory &userWeights = boundMemory(owner, kUserSide | DNNL_ARG_WEIGHTS,
                                          weights, owner->userWeights);
  const memory &userDst =
      boundMemory(owner, kUserSide | DNNL_ARG_DST, dst, owner->userDst);
  // Buffers in the primitive's layouts for this call (this thread's).
  const memory &srcMem =
      owner->reorderSrc
          ? scratchMemory(owner, DNNL_ARG_SRC, owner->src, Scratch::Src)
          : userSrc;
  const memory *weightsMem = &userWeights;
  std::shared_ptr<const memory> cached;
  if (owner->reorderWeights) {
    auto reorder = [&](const memory &m) {
      // Winograd layouts are filled here (winograd_weights.h: oneDNN's
      // reorder into them is slow), others by oneDNN.
      if (f32 &&
          paddle::onednn::transformWinogradWeights(
              static_cast<const float *>(weights), p.weights, p.weightsStrides,
              owner->weights, static_cast<float *>(m.get_data_handle())))
        ++winogradTransforms;
      else
        runReorder(owner->weightsIn, userWeights, m);
    };
    if (prog.constantWeights) {
      // Cached weights own their memory.
      cached = weightsCache().get(owner, weights, state, [&] {
        memory m(owner->weights, cpuEngine());
        reorder(m);
        return m;
      });
      weightsMem = cached.get();
    } else {
      weightsMem = &scratchMemory(owner, DNNL_ARG_WEIGHTS, owner->weights,
                                  Scratch::Weights);
      reorder(*weightsMem);
    }
  }
  const memory &dstMem =
      owner->reorderDst
          ? scratchMemory(owner, DNNL_ARG_DST, owner->dst, Scratch::Dst)
          : userDst;
  if (owner->reorderSrc)
    runReorder(owner->srcIn, userSrc, srcMem);
  if (owner->reorderDst && readsDst(prog, accumulate))
    runReorder(owner->dstIn, userDst, dstMem);
  Args args{{DNNL_ARG_SRC, &srcMem},
            {DNNL_ARG_WEIGHTS, weightsMem},
            {DNNL_ARG_DST, &dstMem}};
  if (bias)
    args.add(
        DNNL_ARG_BIAS,
        boundMemory(owner, DNNL_ARG_BIAS,
                    channelData(*operands.ops[prog.ops[0].operand], channels),
                    owner->bias));
  addPostOpArgs(args, owner, prog, accumulate, operands.ops, channels,
                channelDims);
  execute(owner->conv, args);
  if (owner->reorderDst)
    runReorder(owner->dstOut, dstMem, userDst);
}

/// A max pooling in oneDNN's dims: src [N, C, H, W], dst [N, C, OH, OW],
/// spatial kernel, strides and padding.
struct PoolProblem {
  Dims src, srcStrides, dst, dstStrides;
  Dims kernel, strides, padBefore, padAfter;
};

/// Throws unless `p`'s output dims are those of its padded input and every
/// window holds an input element.
void checkPoolShape(const PoolProblem &p) {
  for (int i = 0; i < 2; ++i)
    if (p.src[i] != p.dst[i])
      throw std::invalid_argument(std::string(i ? "channels" : "batch") +
                                  " differ: input " + std::to_string(p.src[i]) +
                                  ", output " + std::to_string(p.dst[i]));
  for (int i = 0; i < 2; ++i) {
    if (p.kernel[i] < 1 || p.strides[i] < 1)
      throw std::invalid_argument("kernel sizes and strides must be >= 1");
    if (p.padBefore[i] < 0 || p.padAfter[i] < 0 ||
        p.padBefore[i] >= p.kernel[i] || p.padAfter[i] >= p.kernel[i])
      throw std::invalid_argument(
          "padding of spatial dim " + std::to_string(i) +
          " must be from 0 to the kernel size - 1 (a window would lie in "
          "the padding alone)");
    int64_t padded = p.src[2 + i] + p.padBefore[i] + p.padAfter[i];
    int64_t out =
        padded < p.kernel[i] ? 0 : (padded - p.kernel[i]) / p.strides[i] + 1;
    if (out != p.dst[2 + i])
      throw std::invalid_argument("output spatial dim " + std::to_string(i) +
                                  " is " + std::to_string(p.dst[2 + i]) +
                                  ", the padded input gives " +
                                  std::to_string(out));
  }
}

void maxPool2d(const PoolProblem &p, float *src, float *dst) {
  checkPoolShape(p);
  if (anyZero(p.src))
    throw std::invalid_argument("the output has windows over an empty input");
  Key key = keyOf({static_cast<int64_t>(Kind::Pool), useRuntimeThreads()});
  for (const Dims *v : {&p.src, &p.srcStrides, &p.dst, &p.dstStrides, &p.kernel,
                        &p.strides, &p.padBefore, &p.padAfter})
    key.insert(key.end(), v->begin(), v->end());
  dnnl::engine &engine = cpuEngine();
  // The caller's layouts as they are: oneDNN's pooling kernels read plain
  // NCHW and channels-last (NHWC) directly.
  auto pool = poolCache().get(key, [&] {
    return dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(
        dnnl::pooling_forward::desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max,
            plain(p.src, p.srcStrides), plain(p.dst, p.dstStrides), p.strides,
            p.kernel, p.padBefore, p.padAfter),
        userScratchpad(), engine));
  });
  const dnnl::pooling_forward *owner = pool.get();
  execute(*owner, {{DNNL_ARG_SRC,
                    &boundMemory(owner, DNNL_ARG_SRC, src,
                                 [&] { return plain(p.src, p.srcStrides); })},
                   {DNNL_ARG_DST, &boundMemory(owner, DNNL_ARG_DST, dst, [&] {
                      return plain(p.dst, p.dstStrides);
                    })}});
}

/// Merges dims `d` and `d + 1` of a strided view into one when they are
/// contiguous with each other (the channel dims of the grouped form).
bool mergeable(const int64_t *sizes, const int64_t *strides, int d) {
  return strides[d] == strides[d + 1] * sizes[d + 1];
}

thread_local char errorBuffer[kErrorSize];

/// paddle_onednn_matmul(_bf16): a and b of `in` elements.
void matmulCall(const paddle_unranked_memref_t *a,
                const paddle_unranked_memref_t *b,
                const paddle_unranked_memref_t *c, const Operands &operands,
                const paddle_unranked_memref_t *state,
                const paddle_unranked_memref_t *program, int64_t aMap,
                int64_t bMap, int64_t cMap, int64_t accumulate,
                memory::data_type in) {
  bool ok = guarded("matmul", errorBuffer, kErrorSize, [&] {
    int64_t rank = c->rank;
    if (rank < 2 || rank > kMaxDims)
      throw std::invalid_argument("the output has rank " +
                                  std::to_string(rank) + " (2 to 12 needed)");
    Program prog = readProgram(*program);
    Logical la = logical(*a, aMap, rank, in), lb = logical(*b, bMap, rank, in),
            lc = logical(*c, cMap, rank);
    int64_t k = la.sizes[rank - 1];
    if (anyZero(lc.sizes))
      return;
    if (k == 0 && prog.ops.empty()) {
      // An empty sum: zeros, or the accumulated output as it is.
      if (!accumulate)
        zeroFill(lc);
      return;
    }
    if (k == 0)
      throw std::invalid_argument("an empty contraction with post-ops");
    matmul(la, lb, lc, accumulate != 0, prog, operands, stateWord(*state), in);
  });
  if (!ok)
    fail(errorBuffer);
}

/// paddle_onednn_conv2d(_bf16): input and filter of `in` elements
/// (descriptors `In`), output f32.
template <typename In>
void conv2dCall(const In *input, const In *filter,
                const paddle_memref4d_f32_t *output, const Operands &operands,
                const paddle_unranked_memref_t *state,
                const paddle_unranked_memref_t *program, const int64_t *params,
                int64_t accumulate, memory::data_type in) {
  bool ok = guarded("conv2d", errorBuffer, kErrorSize, [&] {
    Program prog = readProgram(*program);
    const int64_t *os = output->sizes;
    if (!(os[0] && os[1] && os[2] && os[3]))
      return;
    if (input->sizes[1] == 0) {
      if (!prog.ops.empty())
        throw std::invalid_argument("an empty contraction with post-ops");
      if (!accumulate)
        zeroFill<paddle_memref4d_f32_t, 4>(*output);
      return;
    }
    ConvProblem p{sizesOf<In, 4>(*input),
                  stridesOf<In, 4>(*input),
                  sizesOf<In, 4>(*filter),
                  stridesOf<In, 4>(*filter),
                  sizesOf<paddle_memref4d_f32_t, 4>(*output),
                  stridesOf<paddle_memref4d_f32_t, 4>(*output),
                  {params[0], params[1]},
                  {params[2], params[3]},
                  {params[4], params[5]},
                  {params[6], params[7]},
                  in};
    conv2d(p, dataOf(*input), dataOf(*filter), dataOf(*output), accumulate != 0,
           prog, operands, stateWord(*state));
  });
  if (!ok)
    fail(errorBuffer);
}

/// paddle_onednn_conv2d_grouped(_bf16), as conv2dCall.
template <typename In>
void conv2dGroupedCall(const In *input, const In *filter,
                       const paddle_memref5d_f32_t *output,
                       const Operands &operands,
                       const paddle_unranked_memref_t *state,
                       const paddle_unranked_memref_t *program,
                       const int64_t *params, int64_t accumulate,
                       memory::data_type in) {
  bool ok = guarded("grouped conv2d", errorBuffer, kErrorSize, [&] {
    Program prog = readProgram(*program);
    const int64_t *is = input->sizes, *os = output->sizes;
    if (!(os[0] && os[1] && os[2] && os[3] && os[4]))
      return;
    if (is[2] == 0) {
      if (!prog.ops.empty())
        throw std::invalid_argument("an empty contraction with post-ops");
      if (!accumulate)
        zeroFill<paddle_memref5d_f32_t, 5>(*output);
      return;
    }
    // The pass passes only contiguous channel dims (identity layouts).
    if (!mergeable(is, input->strides, 1) || !mergeable(os, output->strides, 1))
      throw std::invalid_argument("the group and channel dims of the input "
                                  "and output must be contiguous");
    const int64_t *ist = input->strides, *ost = output->strides;
    ConvProblem p{{is[0], is[1] * is[2], is[3], is[4]},
                  {ist[0], ist[2], ist[3], ist[4]},
                  sizesOf<In, 5>(*filter),
                  stridesOf<In, 5>(*filter),
                  {os[0], os[1] * os[2], os[3], os[4]},
                  {ost[0], ost[2], ost[3], ost[4]},
                  {params[0], params[1]},
                  {params[2], params[3]},
                  {params[4], params[5]},
                  {params[6], params[7]},
                  in};
    conv2d(p, dataOf(*input), dataOf(*filter), dataOf(*output), accumulate != 0,
           prog, operands, stateWord(*state));
  });
  if (!ok)
    fail(errorBuffer);
}

} // namespace

extern "C" {

#define PADDLE_MATMUL_ENTRY(name, type)                                        \
  void name(                                                                   \
      const paddle_unranked_memref_t *a, const paddle_unranked_memref_t *b,    \
      const paddle_unranked_memref_t *c, const paddle_unranked_memref_t *e0,   \
      const paddle_unranked_memref_t *e1, const paddle_unranked_memref_t *e2,  \
      const paddle_unranked_memref_t *e3,                                      \
      const paddle_unranked_memref_t *state,                                   \
      const paddle_unranked_memref_t *program, int64_t aMap, int64_t bMap,     \
      int64_t cMap, int64_t accumulate) {                                      \
    matmulCall(a, b, c, Operands{{e0, e1, e2, e3}}, state, program, aMap,      \
               bMap, cMap, accumulate, type);                                  \
  }
PADDLE_MATMUL_ENTRY(_mlir_ciface_paddle_onednn_matmul, memory::data_type::f32)
PADDLE_MATMUL_ENTRY(_mlir_ciface_paddle_onednn_matmul_bf16,
                    memory::data_type::bf16)
#undef PADDLE_MATMUL_ENTRY

#define PADDLE_CONV_ENTRY(name, call, in, out, type)                           \
  void name(                                                                   \
      const in *input, const in *filter, const out *output,                    \
      const paddle_unranked_memref_t *e0, const paddle_unranked_memref_t *e1,  \
      const paddle_unranked_memref_t *e2, const paddle_unranked_memref_t *e3,  \
      const paddle_unranked_memref_t *state,                                   \
      const paddle_unranked_memref_t *program, int64_t strideH,                \
      int64_t strideW, int64_t dilationH, int64_t dilationW, int64_t padTop,   \
      int64_t padLeft, int64_t padBottom, int64_t padRight,                    \
      int64_t accumulate) {                                                    \
    const int64_t params[] = {strideH, strideW, dilationH, dilationW,          \
                              padTop,  padLeft, padBottom, padRight};          \
    call(input, filter, output, Operands{{e0, e1, e2, e3}}, state, program,    \
         params, accumulate, type);                                            \
  }
PADDLE_CONV_ENTRY(_mlir_ciface_paddle_onednn_conv2d, conv2dCall,
                  paddle_memref4d_f32_t, paddle_memref4d_f32_t,
                  memory::data_type::f32)
PADDLE_CONV_ENTRY(_mlir_ciface_paddle_onednn_conv2d_bf16, conv2dCall,
                  paddle_memref4d_bf16_t, paddle_memref4d_f32_t,
                  memory::data_type::bf16)
PADDLE_CONV_ENTRY(_mlir_ciface_paddle_onednn_conv2d_grouped, conv2dGroupedCall,
                  paddle_memref5d_f32_t, paddle_memref5d_f32_t,
                  memory::data_type::f32)
PADDLE_CONV_ENTRY(_mlir_ciface_paddle_onednn_conv2d_grouped_bf16,
                  conv2dGroupedCall, paddle_memref5d_bf16_t,
                  paddle_memref5d_f32_t, memory::data_type::bf16)
#undef PADDLE_CONV_ENTRY

void _mlir_ciface_paddle_onednn_max_pool2d(
    const paddle_memref4d_f32_t *input, const paddle_memref4d_f32_t *output,
    int64_t kernelH, int64_t kernelW, int64_t strideH, int64_t strideW,
    int64_t padTop, int64_t padLeft, int64_t padBottom, int64_t padRight) {
  bool ok = guarded("max pooling", errorBuffer, kErrorSize, [&] {
    PoolProblem p{sizesOf<paddle_memref4d_f32_t, 4>(*input),
                  stridesOf<paddle_memref4d_f32_t, 4>(*input),
                  sizesOf<paddle_memref4d_f32_t, 4>(*output),
                  stridesOf<paddle_memref4d_f32_t, 4>(*output),
                  {kernelH, kernelW},
                  {strideH, strideW},
                  {padTop, padLeft},
                  {padBottom, padRight}};
    if (anyZero(p.dst))
      return;
    maxPool2d(p, dataOf(*input), dataOf(*output));
  });
  if (!ok)
    fail(errorBuffer);
}

void _mlir_ciface_paddle_onednn_reorder(const paddle_memref4d_f32_t *input,
                                        const paddle_memref4d_f32_t *output) {
  bool ok = guarded("reorder", errorBuffer, kErrorSize, [&] {
    Dims sizes = sizesOf<paddle_memref4d_f32_t, 4>(*input);
    if (sizes != sizesOf<paddle_memref4d_f32_t, 4>(*output))
      throw std::invalid_argument("the input and output shapes differ");
    if (anyZero(sizes))
      return;
    Dims from = stridesOf<paddle_memref4d_f32_t, 4>(*input);
    Dims to = stridesOf<paddle_memref4d_f32_t, 4>(*output);
    Key key = keyOf({static_cast<int64_t>(Kind::Reorder), useRuntimeThreads()});
    for (const Dims *v : {&sizes, &from, &to})
      key.insert(key.end(), v->begin(), v->end());
    auto r = reorderCache().get(
        key, [&] { return makeReorder(plain(sizes, from), plain(sizes, to)); });
    const dnnl::reorder *owner = r.get();
    runReorder(*owner,
               boundMemory(owner, DNNL_ARG_FROM, dataOf(*input),
                           [&] { return plain(sizes, from); }),
               boundMemory(owner, DNNL_ARG_TO, dataOf(*output),
                           [&] { return plain(sizes, to); }));
  });
  if (!ok)
    fail(errorBuffer);
}

int64_t paddle_onednn_primitives_created(void) { return primitivesCreated; }

int64_t paddle_onednn_winograd_primitives(void) { return winogradPrimitives; }
int64_t paddle_onednn_winograd_transforms(void) { return winogradTransforms; }

int64_t paddle_onednn_depthwise_calls(void) { return depthwiseCalls; }

int64_t paddle_onednn_depthwise_strip_calls(void) {
  return depthwiseStripCalls;
}

void paddle_onednn_set_depthwise_strip_bytes(int64_t bytes) {
  depthwiseStripBytes = bytes;
}

int64_t paddle_onednn_timed_candidates(void) { return timedCandidates; }

int64_t paddle_onednn_preferred_starts(void) { return preferredStarts; }

void paddle_onednn_set_timed_choice(int32_t enabled) {
  timedChoice = enabled != 0;
}

int64_t paddle_onednn_weight_reorders(void) { return weightReorders; }

} // extern "C"
