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
#include "paddle_runtime/runtime.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using dnnl::memory;
using Dims = memory::dims;

/// Everything a cached primitive depends on, flattened.
using Key = std::vector<int64_t>;

enum class Kind : int64_t { Matmul = 1, Conv = 2 };

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

std::atomic<int64_t> primitivesCreated{0};

/// A convolution primitive with the layouts it chose (`format_tag::any`,
/// usually blocked) and the reorders from and to the caller's plain strided
/// buffers where those differ.
struct ConvEntry {
  dnnl::convolution_forward conv;
  memory::desc src, weights, dst;
  memory::desc userSrc, userWeights, userDst;
  bool reorderSrc, reorderWeights, reorderDst;
  dnnl::reorder srcIn, weightsIn, dstIn, dstOut;
};

struct MatmulEntry {
  dnnl::matmul matmul;
  memory::desc a, b, c;
};

/// The cache of one primitive kind: lookups are under a lock, execution
/// is not (oneDNN primitives may run concurrently).
template <typename Entry> class Cache {
public:
  template <typename Make>
  std::shared_ptr<const Entry> get(const Key &key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(key);
      if (it != entries_.end())
        return it->second;
    }
    // Built outside the lock: creation can take milliseconds. Two threads
    // racing on one key both build; the first insert wins.
    auto entry = std::make_shared<const Entry>(make());
    ++primitivesCreated;
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.emplace(key, std::move(entry)).first->second;
  }

private:
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

/// oneDNN's thread count for this call: the runtime's.
int64_t useRuntimeThreads() {
  int32_t n = paddle_get_num_threads();
  if (omp_get_max_threads() != n)
    omp_set_num_threads(n);
  return n;
}

dnnl::primitive_attr accumulateAttr(bool accumulate) {
  dnnl::primitive_attr attr;
  if (accumulate) {
    // dst = op(src) + dst: linalg's accumulation into its init.
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  return attr;
}

template <typename Desc, int Rank> Dims sizesOf(const Desc &d) {
  return Dims(d.sizes, d.sizes + Rank);
}
template <typename Desc, int Rank> Dims stridesOf(const Desc &d) {
  return Dims(d.strides, d.strides + Rank);
}
template <typename Desc> float *dataOf(const Desc &d) {
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
  float *data;
};

/// Reads the ranked descriptor behind `m` and orders its dims by `map`
/// (onednn.h); absent dims are broadcasts of size 1.
Logical logical(const paddle_unranked_memref_t &m, int64_t map, int64_t rank) {
  if (m.rank < 1 || m.rank > kMaxDims)
    throw std::invalid_argument("an operand has rank " +
                                std::to_string(m.rank));
  // {allocated, aligned, offset, sizes[rank], strides[rank]}
  auto *words = static_cast<const int64_t *>(m.descriptor);
  float *aligned;
  std::memcpy(&aligned, &words[1], sizeof(aligned));
  const int64_t *sizes = words + 3, *strides = words + 3 + m.rank;
  Logical l{Dims(rank), Dims(rank), aligned + words[2]};
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
    l.data[at] = 0.0f;
  }
}

/// The caller's buffers as memory descriptors with their strides.
memory::desc plain(const Dims &sizes, const Dims &strides) {
  return memory::desc(sizes, memory::data_type::f32, strides);
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

/// c[B..., M, N] (+)= a[B..., M, K] * b[B..., K, N] for 2 or 3 dims.
void matmul(const Dims &aSizes, const Dims &aStrides, float *a,
            const Dims &bSizes, const Dims &bStrides, float *b,
            const Dims &cSizes, const Dims &cStrides, float *c,
            bool accumulate) {
  int64_t threads = useRuntimeThreads();
  Key key{static_cast<int64_t>(Kind::Matmul), threads, accumulate,
          static_cast<int64_t>(aSizes.size())};
  for (const Dims *v :
       {&aSizes, &aStrides, &bSizes, &bStrides, &cSizes, &cStrides})
    key.insert(key.end(), v->begin(), v->end());
  auto entry = matmulCache().get(key, [&] {
    MatmulEntry e;
    e.a = plain(aSizes, aStrides);
    e.b = plain(bSizes, bStrides);
    e.c = plain(cSizes, cStrides);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e.a, e.b, e.c),
                                    accumulateAttr(accumulate), cpuEngine());
    e.matmul = dnnl::matmul(pd);
    return e;
  });
  dnnl::engine &engine = cpuEngine();
  dnnl::stream stream(engine);
  entry->matmul.execute(stream,
                        {{DNNL_ARG_SRC, memory(entry->a, engine, a)},
                         {DNNL_ARG_WEIGHTS, memory(entry->b, engine, b)},
                         {DNNL_ARG_DST, memory(entry->c, engine, c)}});
  stream.wait();
}

/// The grouped convolution in oneDNN's dims: src [N, G*C, H, W], weights
/// [G, F, C, KH, KW] (or [F, C, KH, KW] for one group), dst [N, G*F, OH, OW].
struct ConvProblem {
  Dims src, srcStrides, weights, weightsStrides, dst, dstStrides;
  Dims strides, dilations;
};

void conv2d(const ConvProblem &p, float *src, float *weights, float *dst,
            bool accumulate) {
  int64_t threads = useRuntimeThreads();
  Key key{static_cast<int64_t>(Kind::Conv), threads, accumulate,
          static_cast<int64_t>(p.weights.size())};
  for (const Dims *v : {&p.src, &p.srcStrides, &p.weights, &p.weightsStrides,
                        &p.dst, &p.dstStrides, &p.strides, &p.dilations})
    key.insert(key.end(), v->begin(), v->end());
  auto entry = convCache().get(key, [&] {
    ConvEntry e;
    e.userSrc = plain(p.src, p.srcStrides);
    e.userWeights = plain(p.weights, p.weightsStrides);
    e.userDst = plain(p.dst, p.dstStrides);
    auto any = [](const Dims &sizes) {
      return memory::desc(sizes, memory::data_type::f32,
                          memory::format_tag::any);
    };
    // oneDNN counts dilation from 0 (no dilation).
    Dims dilations{p.dilations[0] - 1, p.dilations[1] - 1};
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        any(p.src), any(p.weights), any(p.dst), p.strides, dilations,
        Dims{0, 0}, Dims{0, 0});
    dnnl::convolution_forward::primitive_desc pd(
        desc, accumulateAttr(accumulate), cpuEngine());
    e.conv = dnnl::convolution_forward(pd);
    e.src = pd.src_desc();
    e.weights = pd.weights_desc();
    e.dst = pd.dst_desc();
    dnnl::engine &engine = cpuEngine();
    e.reorderSrc = e.src != e.userSrc;
    e.reorderWeights = e.weights != e.userWeights;
    e.reorderDst = e.dst != e.userDst;
    if (e.reorderSrc)
      e.srcIn = dnnl::reorder(
          dnnl::reorder::primitive_desc(engine, e.userSrc, engine, e.src));
    if (e.reorderWeights)
      e.weightsIn = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine, e.userWeights, engine, e.weights));
    if (e.reorderDst) {
      e.dstOut = dnnl::reorder(
          dnnl::reorder::primitive_desc(engine, e.dst, engine, e.userDst));
      if (accumulate)
        e.dstIn = dnnl::reorder(
            dnnl::reorder::primitive_desc(engine, e.userDst, engine, e.dst));
    }
    return e;
  });

  dnnl::engine &engine = cpuEngine();
  dnnl::stream stream(engine);
  memory userSrc(entry->userSrc, engine, src);
  memory userWeights(entry->userWeights, engine, weights);
  memory userDst(entry->userDst, engine, dst);
  // Buffers in the primitive's layouts, allocated by oneDNN for this call.
  memory srcMem = entry->reorderSrc ? memory(entry->src, engine) : userSrc;
  memory weightsMem =
      entry->reorderWeights ? memory(entry->weights, engine) : userWeights;
  memory dstMem = entry->reorderDst ? memory(entry->dst, engine) : userDst;
  if (entry->reorderSrc)
    entry->srcIn.execute(stream, userSrc, srcMem);
  if (entry->reorderWeights)
    entry->weightsIn.execute(stream, userWeights, weightsMem);
  if (entry->reorderDst && accumulate)
    entry->dstIn.execute(stream, userDst, dstMem);
  entry->conv.execute(stream, {{DNNL_ARG_SRC, srcMem},
                               {DNNL_ARG_WEIGHTS, weightsMem},
                               {DNNL_ARG_DST, dstMem}});
  if (entry->reorderDst)
    entry->dstOut.execute(stream, dstMem, userDst);
  stream.wait();
}

/// Merges dims `d` and `d + 1` of a strided view into one when they are
/// contiguous with each other (the channel dims of the grouped form).
bool mergeable(const int64_t *sizes, const int64_t *strides, int d) {
  return strides[d] == strides[d + 1] * sizes[d + 1];
}

thread_local char errorBuffer[kErrorSize];

} // namespace

extern "C" {

void _mlir_ciface_paddle_onednn_matmul(const paddle_unranked_memref_t *a,
                                       const paddle_unranked_memref_t *b,
                                       const paddle_unranked_memref_t *c,
                                       int64_t aMap, int64_t bMap, int64_t cMap,
                                       int64_t accumulate) {
  bool ok = guarded("matmul", errorBuffer, kErrorSize, [&] {
    int64_t rank = c->rank;
    if (rank < 2 || rank > kMaxDims)
      throw std::invalid_argument("the output has rank " +
                                  std::to_string(rank) + " (2 to 12 needed)");
    Logical la = logical(*a, aMap, rank), lb = logical(*b, bMap, rank),
            lc = logical(*c, cMap, rank);
    int64_t k = la.sizes[rank - 1];
    if (anyZero(lc.sizes))
      return;
    if (k == 0) {
      // An empty sum: zeros, or the accumulated output as it is.
      if (!accumulate)
        zeroFill(lc);
      return;
    }
    matmul(la.sizes, la.strides, la.data, lb.sizes, lb.strides, lb.data,
           lc.sizes, lc.strides, lc.data, accumulate != 0);
  });
  if (!ok)
    fail(errorBuffer);
}

void _mlir_ciface_paddle_onednn_conv2d(const paddle_memref4d_f32_t *input,
                                       const paddle_memref4d_f32_t *filter,
                                       const paddle_memref4d_f32_t *output,
                                       int64_t strideH, int64_t strideW,
                                       int64_t dilationH, int64_t dilationW,
                                       int64_t accumulate) {
  bool ok = true;
  const int64_t *os = output->sizes;
  if (input->sizes[1] == 0) {
    if (!accumulate)
      zeroFill<paddle_memref4d_f32_t, 4>(*output);
  } else if (os[0] && os[1] && os[2] && os[3]) {
    ok = guarded("conv2d", errorBuffer, kErrorSize, [&] {
      ConvProblem p{sizesOf<paddle_memref4d_f32_t, 4>(*input),
                    stridesOf<paddle_memref4d_f32_t, 4>(*input),
                    sizesOf<paddle_memref4d_f32_t, 4>(*filter),
                    stridesOf<paddle_memref4d_f32_t, 4>(*filter),
                    sizesOf<paddle_memref4d_f32_t, 4>(*output),
                    stridesOf<paddle_memref4d_f32_t, 4>(*output),
                    {strideH, strideW},
                    {dilationH, dilationW}};
      conv2d(p, dataOf(*input), dataOf(*filter), dataOf(*output),
             accumulate != 0);
    });
  }
  if (!ok)
    fail(errorBuffer);
}

void _mlir_ciface_paddle_onednn_conv2d_grouped(
    const paddle_memref5d_f32_t *input, const paddle_memref5d_f32_t *filter,
    const paddle_memref5d_f32_t *output, int64_t strideH, int64_t strideW,
    int64_t dilationH, int64_t dilationW, int64_t accumulate) {
  bool ok = true;
  const int64_t *is = input->sizes, *os = output->sizes;
  if (is[2] == 0) {
    if (!accumulate)
      zeroFill<paddle_memref5d_f32_t, 5>(*output);
  } else if (os[0] && os[1] && os[2] && os[3] && os[4]) {
    if (!mergeable(is, input->strides, 1) ||
        !mergeable(os, output->strides, 1)) {
      // The pass passes only contiguous channel dims (identity layouts).
      std::snprintf(errorBuffer, kErrorSize,
                    "oneDNN grouped conv2d: the group and channel dims of "
                    "the input and output must be contiguous");
      ok = false;
    } else {
      ok = guarded("grouped conv2d", errorBuffer, kErrorSize, [&] {
        const int64_t *ist = input->strides, *ost = output->strides;
        ConvProblem p{{is[0], is[1] * is[2], is[3], is[4]},
                      {ist[0], ist[2], ist[3], ist[4]},
                      sizesOf<paddle_memref5d_f32_t, 5>(*filter),
                      stridesOf<paddle_memref5d_f32_t, 5>(*filter),
                      {os[0], os[1] * os[2], os[3], os[4]},
                      {ost[0], ost[2], ost[3], ost[4]},
                      {strideH, strideW},
                      {dilationH, dilationW}};
        conv2d(p, dataOf(*input), dataOf(*filter), dataOf(*output),
               accumulate != 0);
      });
    }
  }
  if (!ok)
    fail(errorBuffer);
}

int64_t paddle_onednn_primitives_created(void) { return primitivesCreated; }

} // extern "C"
