//===- cache.cpp - oneDNN primitive caches, engine, stream and reorders ---===//
//
// What every oneDNN kernel of the runtime (paddle_runtime/onednn.h) runs
// on: the CPU engine and this thread's stream, the per-thread scratch
// buffers and memory objects, execution with a caller-owned scratchpad, the
// reorders between layouts, the primitive caches' creation lock, the cache
// of reordered constant weights, OpenMP thread setup, and the counters and
// settings onednn.h exposes, with paddle_onednn_reorder. The matmul, the
// convolutions and the pooling are in matmul.cpp, conv.cpp and pool.cpp.
//
//===----------------------------------------------------------------------===//

#include "onednn/common.h"

#include <omp.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace paddle::onednn {
dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

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
static dnnl::stream &threadStream() {
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

/// The size of `p`'s scratchpad (made with userScratchpad), and its layout.
static size_t scratchpadBytes(const dnnl::primitive &p,
                              const dnnl_memory_desc_t **desc) {
  *desc = dnnl_primitive_desc_query_md(p.get_primitive_desc(),
                                       dnnl_query_scratchpad_md, 0);
  return *desc ? dnnl_memory_desc_get_size(*desc) : 0;
}

/// Runs `p` on `args` on this thread's stream and waits for it.
static void run(const dnnl::primitive &p, const Args &args) {
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

/// Primitives are made (and their implementations timed) one at a time in
/// the process: oneDNN 2.6 hands threads that create the same primitive
/// one implementation object, and timing runs of it from several threads
/// at once crashed in its kernels (docs/onednn.md, "Concurrent calls").
/// A cache's `make` must not look up a cache itself.
std::mutex &creationMutex() {
  static std::mutex mutex;
  return mutex;
}

static Cache<dnnl::reorder> &reorderCache() {
  static Cache<dnnl::reorder> cache;
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
static bool workersOffCallerEnabled() {
  static const bool enabled = [] {
    const char *off = std::getenv("PADDLE_ONEDNN_WORKERS_OFF_CALLER");
    if (off && std::string(off) == "0")
      return false;
    return omp_get_proc_bind() == omp_proc_bind_false &&
           !std::getenv("GOMP_CPU_AFFINITY");
  }();
  return enabled;
}

static void keepWorkersOffCaller(int32_t threads) {
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
int64_t product(const Dims &dims, size_t from) {
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

thread_local char errorBuffer[kErrorSize];

} // namespace paddle::onednn

using namespace paddle::onednn;

extern "C" {

void _mlir_ciface_paddle_onednn_reorder(const paddle_memref4d_f32_t *input,
                                        const paddle_memref4d_f32_t *output) {
  guarded("reorder", [&] {
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
