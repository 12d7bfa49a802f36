//===- common.h - What the oneDNN kernels of the runtime share --*- C++ -*-===//
//
// The internal interface of runtime/src/onednn/, the functions of
// paddle_runtime/onednn.h: the primitive caches, engine, stream, scratch
// buffers and reorders (cache.cpp), the fused post-op programs and the
// memory descriptors made from memref descriptors (program.cpp), and the
// timed choice of oneDNN's implementation (choice.cpp), which matmul.cpp,
// conv.cpp and pool.cpp use. Creating a oneDNN primitive costs far more than
// running a small one (it picks and JIT-compiles a kernel), so primitives
// are cached by everything they depend on: the problem (sizes, strides,
// conv parameters), whether the output accumulates, and the thread count
// (oneDNN chooses its blocking for a thread count when the primitive is
// created).
//
// Threads: Debian's oneDNN uses OpenMP. Every call sets the calling thread's
// OpenMP thread count to paddle_get_num_threads(), so oneDNN follows
// paddle_set_num_threads. The calls are made by the function body on the
// thread of paddle_invoke, never inside our parallel loops, so our pool's
// workers are asleep while oneDNN's team runs (docs/onednn.md).
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_SRC_ONEDNN_COMMON_H
#define PADDLE_RUNTIME_SRC_ONEDNN_COMMON_H

#include "paddle_runtime/onednn.h"
#include "paddle_runtime/runtime.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace paddle::onednn {

using dnnl::memory;
using Dims = memory::dims;

/// Everything a cached primitive depends on, flattened.
using Key = std::vector<int64_t>;

/// A key that starts with `head`, with room for a problem's dims and
/// program (one allocation per call, not one per growth).
inline Key keyOf(std::initializer_list<int64_t> head) {
  Key key;
  key.reserve(128);
  key.insert(key.end(), head);
  return key;
}

enum class Kind : int64_t { Matmul = 1, Conv = 2, Reorder = 3, Pool = 4 };

dnnl::engine &cpuEngine();

/// The temporaries of one call: activations in the primitive's layout,
/// weights reordered for this call only.
enum class Scratch { Src, Dst, Weights, Middle, Pad, Count };
void *scratchBuffer(Scratch slot, size_t bytes);

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
                          const memory::desc &desc);
const memory &scratchMemory(const void *owner, int arg,
                            const memory::desc &desc, Scratch slot);
dnnl::primitive_attr userScratchpad();

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

void execute(const dnnl::primitive &p, Args args);
void execute(const dnnl::primitive &p,
             const std::unordered_map<int, memory> &map);
dnnl::reorder makeReorder(const memory::desc &from, const memory::desc &to);
void runReorder(const dnnl::primitive &r, const memory &from, const memory &to);

// Counters of paddle_runtime/onednn.h, and its settings (cache.cpp).
extern std::atomic<int64_t> primitivesCreated;
extern std::atomic<int64_t> winogradPrimitives;
extern std::atomic<int64_t> winogradTransforms;
extern std::atomic<int64_t> depthwiseCalls;
extern std::atomic<int64_t> depthwiseStripCalls;
extern std::atomic<int64_t> depthwiseStripBytes;
extern std::atomic<int64_t> timedCandidates;
extern std::atomic<int64_t> preferredStarts;
extern std::atomic<bool> timedChoice;
extern std::atomic<int64_t> weightReorders;

std::mutex &creationMutex();

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

int64_t useRuntimeThreads();
int64_t product(const Dims &dims, size_t from = 0);
memory::format_tag plainTag(size_t rank);

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

Program readProgram(const paddle_unranked_memref_t &m);
float *channelData(const paddle_unranked_memref_t &m, int64_t channels);
float *denseData(const paddle_unranked_memref_t &m, int64_t count,
                 const char *what);
void appendProgram(Key &key, const Program &p);
memory::desc channelDesc(const Dims &channelDims);
dnnl::primitive_attr postOpsAttr(const Program &p, bool accumulate,
                                 const Dims &channelDims);
std::vector<std::pair<int, const PostOp *>> binaryPostOpArgs(const Program &p,
                                                             bool accumulate);

/// Calls `add(arg, data)` for each of a program's per-channel operands:
/// its execution argument and the call's data.
template <typename Add>
void forEachPostOpOperand(const Program &p, bool accumulate,
                          const paddle_unranked_memref_t *const *ops,
                          int64_t channels, Add add) {
  for (auto [arg, op] : binaryPostOpArgs(p, accumulate))
    add(arg, channelData(*ops[op->operand], channels));
}

void addPostOpArgs(Args &args, const void *owner, const Program &p,
                   bool accumulate, const paddle_unranked_memref_t *const *ops,
                   int64_t channels, const Dims &channelDims);
bool readsDst(const Program &p, bool accumulate);

/// The layouts of a primitive's operands beyond src, weights and dst.
using ExtraLayouts = std::vector<std::pair<int, memory::desc>>;
ExtraLayouts extraLayouts(const Program &p, bool accumulate,
                          const memory::desc &biasDesc,
                          const Dims &channelDims);

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

Logical logical(const paddle_unranked_memref_t &m, int64_t map, int64_t rank,
                memory::data_type type = memory::data_type::f32);
bool anyZero(const Dims &dims);
void zeroFill(const Logical &l);
memory::desc plain(const Dims &sizes, const Dims &strides,
                   memory::data_type type = memory::data_type::f32);
memory::desc dense(const Dims &sizes, memory::data_type type);

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

[[noreturn]] void fail(const char *error);

constexpr size_t kErrorSize = 512;
/// This thread's buffer for the error message of a failed call (fail()).
extern thread_local char errorBuffer[kErrorSize];

/// Runs `body` for the kernel `what`; a oneDNN error or another exception
/// ends the call through fail() with a message naming `what`.
template <typename Body> void guarded(const char *what, Body body) {
  try {
    body();
    return;
  } catch (const dnnl::error &e) {
    std::snprintf(errorBuffer, kErrorSize,
                  "oneDNN %s failed: %s (dnnl status %d)", what, e.what(),
                  static_cast<int>(e.status));
  } catch (const std::exception &e) {
    std::snprintf(errorBuffer, kErrorSize, "oneDNN %s failed: %s", what,
                  e.what());
  }
  fail(errorBuffer);
}

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

WeightsCache &weightsCache();
int64_t *stateWord(const paddle_unranked_memref_t &m);

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

/// oneDNN's implementation to use for `pd` (choice.cpp), for matmuls and
/// convolutions.
template <typename Primitive, typename PrimitiveDesc>
Candidate chooseImplementation(
    const PrimitiveDesc &pd,
    const std::function<PrimitiveDesc(const Candidate &)> &alternatives,
    const ExtraLayouts &extra, const std::unordered_map<int, memory> &given,
    const ChoiceRules &rules);

} // namespace paddle::onednn

#endif // PADDLE_RUNTIME_SRC_ONEDNN_COMMON_H
