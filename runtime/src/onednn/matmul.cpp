//===- matmul.cpp - oneDNN matmul and the GEMV for compiled code ----------===//
//
// paddle_onednn_matmul(_bf16): a cached oneDNN matmul primitive over the
// operands' logical views, with constant weights reordered once into a
// layout without 4K aliasing, and the runtime's own hand-vectorized GEMV
// for a single row.
//
//===----------------------------------------------------------------------===//

#include "cpu_isa.h"
#include "onednn/common.h"

#include <cstring>
#include <optional>
#include <string>

namespace paddle::onednn {
namespace {

struct MatmulEntry {
  dnnl::primitive matmul;
  memory::desc a, b, c, userA, userB, bias;
  // a's conversion to f32 where oneDNN has no bf16 kernel (bf16Fallback).
  bool convertA = false;
  dnnl::reorder aIn, bIn;
};

Cache<MatmulEntry> &matmulCache() {
  static Cache<MatmulEntry> cache;
  return cache;
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

/// paddle_onednn_matmul(_bf16): a and b of `in` elements.
void matmulCall(const paddle_unranked_memref_t *a,
                const paddle_unranked_memref_t *b,
                const paddle_unranked_memref_t *c, const Operands &operands,
                const paddle_unranked_memref_t *state,
                const paddle_unranked_memref_t *program, int64_t aMap,
                int64_t bMap, int64_t cMap, int64_t accumulate,
                memory::data_type in) {
  guarded("matmul", [&] {
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
}

} // namespace
} // namespace paddle::onednn

using namespace paddle::onednn;

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

} // extern "C"
