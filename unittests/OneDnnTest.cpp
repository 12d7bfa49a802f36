//===- OneDnnTest.cpp - the runtime's oneDNN kernels ----------------------===//
//
// The kernels called directly with hand-built descriptors, as compiled code
// calls them (paddle_runtime/onednn.h): dim maps (transposes, broadcasts),
// accumulation, empty contractions, the primitive cache, and an invalid call
// ending paddle_invoke with an error.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/onednn.h"
#include "paddle_runtime/runtime.h"
#include "winograd_weights.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

/// A ranked descriptor {allocated, aligned, offset, sizes, strides} as the
/// words the unranked descriptor points to.
struct Memref {
  std::vector<int64_t> words;
  paddle_unranked_memref_t unranked;

  Memref(float *data, std::vector<int64_t> sizes,
         std::vector<int64_t> strides) {
    int64_t rank = sizes.size();
    words = {(int64_t)(uintptr_t)data, (int64_t)(uintptr_t)data, 0};
    words.insert(words.end(), sizes.begin(), sizes.end());
    words.insert(words.end(), strides.begin(), strides.end());
    unranked = {rank, words.data()};
  }
};

/// A row-major 4-D descriptor over all of `data`, whose size must be the
/// product of `sizes`.
paddle_memref4d_f32_t dense4d(std::vector<float> &data,
                              std::array<int64_t, 4> sizes) {
  EXPECT_EQ((int64_t)data.size(), sizes[0] * sizes[1] * sizes[2] * sizes[3]);
  return {data.data(),
          data.data(),
          0,
          {sizes[0], sizes[1], sizes[2], sizes[3]},
          {sizes[1] * sizes[2] * sizes[3], sizes[2] * sizes[3], sizes[3], 1}};
}

/// Logical dim i -> memref dim, packed as onednn.h describes (-1: absent).
int64_t pack(std::vector<int64_t> dims) {
  int64_t packed = 0;
  for (size_t i = 0; i < dims.size(); ++i)
    packed |= (dims[i] + 1) << (4 * i);
  return packed;
}

/// The extra arguments of a call: post-op operands, the call site's state
/// word and the post-op program (onednn.h).
struct Extras {
  std::vector<int64_t> program{0, 0};
  int64_t state = 0;
  std::vector<Memref> operands;
  Memref programRef{nullptr, {0}, {1}}, stateRef{nullptr, {1}, {1}};
  std::vector<const paddle_unranked_memref_t *> slots;

  /// Appends a post-op reading extra operand `operand` (-1: none).
  void post(int64_t kind, int64_t operand = -1, double alpha = 0,
            double beta = 0) {
    int64_t a, b;
    std::memcpy(&a, &alpha, sizeof(a));
    std::memcpy(&b, &beta, sizeof(b));
    program.insert(program.end(), {kind, operand, a, b});
    ++program[1];
  }
  /// Binds the descriptors (after the last change).
  void bind(const paddle_unranked_memref_t *fallback) {
    programRef = Memref(reinterpret_cast<float *>(program.data()),
                        {(int64_t)program.size()}, {1});
    stateRef = Memref(reinterpret_cast<float *>(&state), {1}, {1});
    slots.clear();
    for (const Memref &m : operands)
      slots.push_back(&m.unranked);
    while (slots.size() < PADDLE_ONEDNN_MAX_OPERANDS)
      slots.push_back(fallback);
  }
};

/// The epilogue relu((x + bias[ch]) * scale[ch]), per output channel.
void addBiasScaleRelu(Extras &e, std::vector<float> &bias,
                      std::vector<float> &scale) {
  int64_t channels = static_cast<int64_t>(bias.size());
  e.operands.emplace_back(bias.data(), std::vector<int64_t>{channels},
                          std::vector<int64_t>{1});
  e.operands.emplace_back(scale.data(), std::vector<int64_t>{channels},
                          std::vector<int64_t>{1});
  e.post(PADDLE_ONEDNN_POST_BIAS, 0);
  e.post(PADDLE_ONEDNN_POST_MUL, 1);
  e.post(PADDLE_ONEDNN_POST_RELU);
}

void matmul(Memref &a, Memref &b, Memref &c, int64_t aMap, int64_t bMap,
            int64_t cMap, int64_t accumulate, Extras extras = {}) {
  extras.bind(&c.unranked);
  _mlir_ciface_paddle_onednn_matmul(
      &a.unranked, &b.unranked, &c.unranked, extras.slots[0], extras.slots[1],
      extras.slots[2], extras.slots[3], &extras.stateRef.unranked,
      &extras.programRef.unranked, aMap, bMap, cMap, accumulate);
}

/// `pad`: top, left, bottom, right.
void conv2d(paddle_memref4d_f32_t &in, paddle_memref4d_f32_t &filter,
            paddle_memref4d_f32_t &out, int64_t sh, int64_t sw, int64_t dh,
            int64_t dw, int64_t accumulate, Extras &extras,
            std::vector<int64_t> pad = {0, 0, 0, 0}) {
  Memref fallback(out.aligned, {1}, {1});
  extras.bind(&fallback.unranked);
  _mlir_ciface_paddle_onednn_conv2d(
      &in, &filter, &out, extras.slots[0], extras.slots[1], extras.slots[2],
      extras.slots[3], &extras.stateRef.unranked, &extras.programRef.unranked,
      sh, sw, dh, dw, pad[0], pad[1], pad[2], pad[3], accumulate);
}

TEST(OneDnn, MatmulWithTransposedAndBroadcastOperands) {
  // c[b, m, n] = a[m, k] * w[b, n, k]^T for 2 batches (a is broadcast, w
  // read transposed), on top of c's contents (accumulate).
  const int64_t B = 2, M = 3, K = 4, N = 5;
  std::vector<float> a(M * K), w(B * N * K), c(B * M * N, 1.0f);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = 0.5f * i - 2;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.25f * i - 1;
  Memref ma(a.data(), {M, K}, {K, 1}), mw(w.data(), {B, N, K}, {N * K, K, 1}),
      mc(c.data(), {B, M, N}, {M * N, N, 1});
  matmul(ma, mw, mc, pack({-1, 0, 1}), pack({0, 2, 1}), pack({0, 1, 2}),
         /*accumulate=*/1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        float expected = 1.0f;
        for (int64_t k = 0; k < K; ++k)
          expected += a[m * K + k] * w[(b * N + n) * K + k];
        EXPECT_FLOAT_EQ(c[(b * M + m) * N + n], expected) << b << m << n;
      }
}

TEST(OneDnn, MatrixVectorProductsGoThroughSgemm) {
  // c[1, n] (+)= a[1, k] * b[k, n] with b row-major, then read transposed
  // from a [n, k] buffer, accumulating: oneDNN's sgemm (no primitive is
  // created); with a post-op, the matmul primitive.
  const int64_t K = 37, N = 53;
  std::vector<float> a(K), b(K * N), bt(N * K), c(N, 3.0f);
  for (int64_t i = 0; i < K; ++i)
    a[i] = std::sin(0.3 * i);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      b[k * N + n] = bt[n * K + k] = std::cos(0.1 * (k * N + n));
  auto expected = [&](int64_t n) {
    double sum = 0;
    for (int64_t k = 0; k < K; ++k)
      sum += double(a[k]) * b[k * N + n];
    return sum;
  };
  Memref ma(a.data(), {1, K}, {K, 1}), mb(b.data(), {K, N}, {N, 1}),
      mbt(bt.data(), {N, K}, {K, 1}), mc(c.data(), {1, N}, {N, 1});
  int64_t map = pack({0, 1});
  int64_t created = paddle_onednn_primitives_created();
  matmul(ma, mb, mc, map, map, map, /*accumulate=*/0);
  for (int64_t n = 0; n < N; ++n)
    EXPECT_NEAR(c[n], expected(n), 1e-5) << n;
  matmul(ma, mbt, mc, map, pack({1, 0}), map, /*accumulate=*/1);
  for (int64_t n = 0; n < N; ++n)
    EXPECT_NEAR(c[n], 2 * expected(n), 1e-5) << n;
  EXPECT_EQ(paddle_onednn_primitives_created(), created);
  Extras relu;
  relu.post(PADDLE_ONEDNN_POST_RELU);
  matmul(ma, mb, mc, map, map, map, 0, relu);
  EXPECT_EQ(paddle_onednn_primitives_created(), created + 1);
  for (int64_t n = 0; n < N; ++n)
    EXPECT_NEAR(c[n], std::max(expected(n), 0.0), 1e-5) << n;
}

TEST(OneDnn, MatrixVectorProductsSplitRowsOverThreads) {
  // A b whose rows are contiguous, padded (ldb > N), with K not a multiple
  // of the kernel's 8 rows and N not of its 16-float slices: on 1, 2 and 3
  // threads (slices of 336, 176 and 112 floats), written then accumulated,
  // against a float64 sum; the elements past N in each row stay untouched.
  const int64_t K = 203, N = 333, LDB = 347;
  std::vector<float> a(K), b(K * LDB), c(N + 7, -5.0f);
  for (int64_t i = 0; i < K; ++i)
    a[i] = std::sin(0.13 * i);
  for (int64_t i = 0; i < K * LDB; ++i)
    b[i] = std::cos(0.011 * i);
  auto expected = [&](int64_t n) {
    double sum = 0;
    for (int64_t k = 0; k < K; ++k)
      sum += double(a[k]) * b[k * LDB + n];
    return sum;
  };
  Memref ma(a.data(), {1, K}, {K, 1}), mb(b.data(), {K, N}, {LDB, 1}),
      mc(c.data(), {1, N}, {N, 1});
  int64_t map = pack({0, 1});
  int64_t created = paddle_onednn_primitives_created();
  int32_t saved = paddle_get_num_threads();
  for (int32_t threads : {1, 2, 3}) {
    ASSERT_EQ(paddle_set_num_threads(threads), nullptr);
    matmul(ma, mb, mc, map, map, map, /*accumulate=*/0);
    for (int64_t n = 0; n < N; ++n)
      EXPECT_NEAR(c[n], expected(n), 1e-4) << threads << " " << n;
    matmul(ma, mb, mc, map, map, map, /*accumulate=*/1);
    for (int64_t n = 0; n < N; ++n)
      EXPECT_NEAR(c[n], 2 * expected(n), 2e-4) << threads << " " << n;
    for (int64_t n = N; n < N + 7; ++n)
      EXPECT_EQ(c[n], -5.0f);
  }
  ASSERT_EQ(paddle_set_num_threads(saved), nullptr);
  EXPECT_EQ(paddle_onednn_primitives_created(), created);
}

TEST(OneDnn, OpenMPWorkersStayOffTheCallersCpu) {
  // A call on 2 threads makes the OpenMP worker of the calling thread's
  // team avoid the CPU the caller runs on (a worker woken there shared it
  // with the caller until the next balancing tick). The test pins itself
  // to one CPU for the call, so "the caller's CPU" is known; the worker
  // must then be allowed elsewhere only, and run elsewhere.
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  if (CPU_COUNT(&saved) < 2 || omp_get_proc_bind() != omp_proc_bind_false)
    GTEST_SKIP() << "needs 2 CPUs and no OpenMP binding";
  int first = 0;
  while (!CPU_ISSET(first, &saved))
    ++first;
  // The team's worker is made before the pinning: a new thread inherits
  // its creator's CPUs.
  int32_t threads = paddle_get_num_threads();
  ASSERT_EQ(paddle_set_num_threads(2), nullptr);
#pragma omp parallel num_threads(2)
  (void)omp_get_thread_num();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  // Too small for the matrix-vector kernel: a oneDNN primitive.
  const int64_t M = 8, K = 8, N = 8;
  std::vector<float> a(M * K, 1.0f), b(K * N, 0.5f), c(M * N);
  Memref ma(a.data(), {M, K}, {K, 1}), mb(b.data(), {K, N}, {N, 1}),
      mc(c.data(), {M, N}, {N, 1});
  int64_t map = pack({0, 1});
  matmul(ma, mb, mc, map, map, map, /*accumulate=*/0);
  EXPECT_EQ(c[0], 4.0f);
  // The caller may run on all its CPUs again; the worker keeps its mask
  // until a call from another CPU.
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  int workerCpu = -1;
  bool allowedOnCallers = true;
#pragma omp parallel num_threads(2)
  if (omp_get_thread_num() == 1) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
      allowedOnCallers = CPU_ISSET(first, &mask);
    workerCpu = sched_getcpu();
  }
  EXPECT_FALSE(allowedOnCallers);
  EXPECT_NE(workerCpu, first);
  ASSERT_EQ(paddle_set_num_threads(threads), nullptr);
}

TEST(OneDnn, CallsInsideAParallelRegionLeaveAffinitiesAlone) {
  // A call made inside an OpenMP parallel region (its team is not the
  // caller's own) runs, and changes no thread's CPUs.
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  int32_t threads = paddle_get_num_threads();
  ASSERT_EQ(paddle_set_num_threads(2), nullptr);
  const int64_t M = 8, K = 8, N = 8;
  std::vector<float> a(M * K, 1.0f), b(K * N, 0.5f), c(M * N);
  Memref ma(a.data(), {M, K}, {K, 1}), mb(b.data(), {K, N}, {N, 1}),
      mc(c.data(), {M, N}, {N, 1});
  int64_t map = pack({0, 1});
  bool same[2] = {false, false};
#pragma omp parallel num_threads(2)
  {
    int i = omp_get_thread_num();
    cpu_set_t mine, after;
    sched_getaffinity(0, sizeof(mine), &mine);
    if (i == 0)
      matmul(ma, mb, mc, map, map, map, /*accumulate=*/0);
#pragma omp barrier
    sched_getaffinity(0, sizeof(after), &after);
    same[i] = CPU_EQUAL(&mine, &after);
  }
  EXPECT_EQ(c[0], 4.0f);
  EXPECT_TRUE(same[0]);
  EXPECT_TRUE(same[1]);
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  ASSERT_EQ(paddle_set_num_threads(threads), nullptr);
}

TEST(OneDnn, CachesPrimitivesByProblem) {
  std::vector<float> a(6 * 7, 1.0f), b(7 * 8, 2.0f), c(6 * 8);
  Memref ma(a.data(), {6, 7}, {7, 1}), mb(b.data(), {7, 8}, {8, 1}),
      mc(c.data(), {6, 8}, {8, 1});
  int64_t map = pack({0, 1});
  matmul(ma, mb, mc, map, map, map, 0);
  int64_t created = paddle_onednn_primitives_created();
  for (int i = 0; i < 3; ++i)
    matmul(ma, mb, mc, map, map, map, 0);
  EXPECT_EQ(paddle_onednn_primitives_created(), created);
  EXPECT_FLOAT_EQ(c[0], 14.0f);
  // Accumulating is another primitive (a sum post-op).
  matmul(ma, mb, mc, map, map, map, 1);
  EXPECT_EQ(paddle_onednn_primitives_created(), created + 1);
  EXPECT_FLOAT_EQ(c[0], 28.0f);
}

TEST(OneDnn, EmptyContractionWritesZeros) {
  std::vector<float> c(6, 5.0f);
  float none = 0;
  Memref ma(&none, {2, 0}, {0, 1}), mb(&none, {0, 3}, {3, 1}),
      mc(c.data(), {2, 3}, {3, 1});
  int64_t map = pack({0, 1});
  matmul(ma, mb, mc, map, map, map, /*accumulate=*/1);
  EXPECT_EQ(c[0], 5.0f);
  matmul(ma, mb, mc, map, map, map, /*accumulate=*/0);
  for (float v : c)
    EXPECT_EQ(v, 0.0f);
}

TEST(OneDnn, Conv2DWithStridesAndDilations) {
  // in [1, 1, 5, 5] = 0..24, a 2x2 filter of ones, stride 2, dilation 2:
  // out[oh, ow] = sum of in[2 oh + 2 i, 2 ow + 2 j].
  std::vector<float> in(25), filter(4, 1.0f), out(4);
  for (int i = 0; i < 25; ++i)
    in[i] = i;
  paddle_memref4d_f32_t mi = dense4d(in, {1, 1, 5, 5});
  paddle_memref4d_f32_t mf = dense4d(filter, {1, 1, 2, 2});
  paddle_memref4d_f32_t mo = dense4d(out, {1, 1, 2, 2});
  Extras none;
  conv2d(mi, mf, mo, 2, 2, 2, 2, 0, none);
  for (int oh = 0; oh < 2; ++oh)
    for (int ow = 0; ow < 2; ++ow) {
      float expected = 0;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          expected += in[(2 * oh + 2 * i) * 5 + 2 * ow + 2 * j];
      EXPECT_FLOAT_EQ(out[oh * 2 + ow], expected);
    }
}

/// Runs `body` as f(x: tensor<?xf32>) -> tensor<?xf32> through
/// paddle_invoke on a 4-element x, which must end with an error status;
/// returns its code and message.
std::pair<paddle_status_code_t, std::string>
invokeError(void (*body)(void **)) {
  static const paddle_tensor_spec_t spec = {
      PADDLE_F32, 1, {PADDLE_DYNAMIC_DIM}};
  static const paddle_function_signature_t sig = {"bad", 1, &spec, 1, &spec};
  float x[4] = {1, 2, 3, 4};
  paddle_tensor_t in{};
  in.dtype = PADDLE_F32;
  in.rank = 1;
  in.shape[0] = 4;
  in.data = x;
  paddle_tensor_t out{};
  paddle_status_t s = paddle_invoke(body, &sig, &in, 1, &out);
  if (!s)
    return {PADDLE_OK, "no error"};
  std::pair<paddle_status_code_t, std::string> result{paddle_status_code(s),
                                                      paddle_status_message(s)};
  paddle_status_free(s);
  return result;
}

TEST(OneDnn, Conv2DPadsItsInput) {
  // in [1, 2, 4, 5], a 3x3 filter [3, 2, 3, 3], stride 2, padding top 1,
  // left 2, bottom 0, right 1: out [1, 3, 2, 3], against the sum over the
  // zero-padded input.
  const int C = 2, H = 4, W = 5, F = 3, K = 3, OH = 2, OW = 3;
  const int top = 1, left = 2;
  std::vector<float> in(C * H * W), filter(F * C * K * K), out(F * OH * OW);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = std::sin(0.7 * i);
  for (size_t i = 0; i < filter.size(); ++i)
    filter[i] = std::cos(0.3 * i);
  paddle_memref4d_f32_t mi = dense4d(in, {1, C, H, W});
  paddle_memref4d_f32_t mf = dense4d(filter, {F, C, K, K});
  paddle_memref4d_f32_t mo = dense4d(out, {1, F, OH, OW});
  Extras none;
  conv2d(mi, mf, mo, 2, 2, 1, 1, 0, none, {top, left, 0, 1});
  for (int f = 0; f < F; ++f)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        double expected = 0;
        for (int c = 0; c < C; ++c)
          for (int i = 0; i < K; ++i)
            for (int j = 0; j < K; ++j) {
              int y = 2 * oh + i - top, x = 2 * ow + j - left;
              if (y >= 0 && y < H && x >= 0 && x < W)
                expected += double(in[(c * H + y) * W + x]) *
                            filter[((f * C + c) * K + i) * K + j];
            }
        EXPECT_NEAR(out[(f * OH + oh) * OW + ow], expected, 1e-5)
            << f << " " << oh << " " << ow;
      }
}

/// f(x) calling the conv kernel with padding that does not give its output
/// dims (a 3x3 input padded by 1 all round is 5x5: a 3x3 filter gives 3x3,
/// not 2x2).
void badPaddingConv(void **) {
  static std::vector<float> in(9), filter(9), out(4);
  paddle_memref4d_f32_t mi = dense4d(in, {1, 1, 3, 3});
  paddle_memref4d_f32_t mf = dense4d(filter, {1, 1, 3, 3});
  paddle_memref4d_f32_t mo = dense4d(out, {1, 1, 2, 2});
  Extras none;
  conv2d(mi, mf, mo, 1, 1, 1, 1, 0, none, {1, 1, 1, 1});
}

TEST(OneDnn, Conv2DPaddingThatMissesTheOutputIsAnError) {
  std::string message = invokeError(badPaddingConv).second;
  EXPECT_NE(message.find("output spatial dim 0 is 2, the padded input gives 3"),
            std::string::npos)
      << message;
}

TEST(OneDnn, ReorderCopiesBetweenLayouts) {
  // [1, 3, 2, 4] from NCHW into NHWC strides, and back through a strided
  // (offset) view: every element lands where its strides say.
  const int C = 3, H = 2, W = 4, N = C * H * W;
  std::vector<float> nchw(N), nhwc(N, -1.0f), back(N + 5, -1.0f);
  for (int i = 0; i < N; ++i)
    nchw[i] = 0.5f * i;
  paddle_memref4d_f32_t plain = dense4d(nchw, {1, C, H, W});
  paddle_memref4d_f32_t last{
      nhwc.data(), nhwc.data(), 0, {1, C, H, W}, {N, 1, W * C, C}};
  _mlir_ciface_paddle_onednn_reorder(&plain, &last);
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w)
        EXPECT_EQ(nhwc[(h * W + w) * C + c], nchw[(c * H + h) * W + w]);
  paddle_memref4d_f32_t shifted{
      back.data(), back.data(), 5, {1, C, H, W}, {N, H * W, W, 1}};
  _mlir_ciface_paddle_onednn_reorder(&last, &shifted);
  for (int i = 0; i < N; ++i)
    EXPECT_EQ(back[5 + i], nchw[i]);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(back[i], -1.0f);
}

/// f(x) reordering between buffers of different shapes.
void badShapeReorder(void **) {
  static std::vector<float> a(8), b(8);
  paddle_memref4d_f32_t ma = dense4d(a, {1, 2, 2, 2});
  paddle_memref4d_f32_t mb = dense4d(b, {1, 2, 4, 1});
  _mlir_ciface_paddle_onednn_reorder(&ma, &mb);
}

TEST(OneDnn, ReorderOfDifferentShapesIsAnError) {
  auto [code, message] = invokeError(badShapeReorder);
  EXPECT_EQ(code, PADDLE_INTERNAL);
  EXPECT_NE(message.find("the input and output shapes differ"),
            std::string::npos)
      << message;
}

/// max over the window of the -inf-padded input: the reference of
/// paddle_onednn_max_pool2d, on a [N, C, H, W] view with any strides.
float referenceMaxPool(const paddle_memref4d_f32_t &in, int64_t n, int64_t c,
                       int64_t oh, int64_t ow, std::array<int64_t, 2> kernel,
                       std::array<int64_t, 2> stride,
                       std::array<int64_t, 2> before) {
  float best = -INFINITY;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j) {
      int64_t y = oh * stride[0] + i - before[0],
              x = ow * stride[1] + j - before[1];
      if (y < 0 || y >= in.sizes[2] || x < 0 || x >= in.sizes[3])
        continue;
      best = std::max(
          best, in.aligned[in.offset + n * in.strides[0] + c * in.strides[1] +
                           y * in.strides[2] + x * in.strides[3]]);
    }
  return best;
}

TEST(OneDnn, MaxPoolPadsWithMinusInfinityInEitherLayout) {
  // in [2, 3, 7, 6] negative everywhere (a zero padding would win), a 3x2
  // window, strides 2 and 1, padding top 1, left 1, bottom 2 (a ceil-mode
  // window), right 0: out [2, 3, 4, 6]. Once plain NCHW into plain, once
  // from an NHWC view at an offset into an NHWC output.
  const int64_t N = 2, C = 3, H = 7, W = 6, OH = 4, OW = 6;
  const int64_t count = N * C * H * W;
  std::vector<float> in(count), out(N * C * OH * OW, 1.0f);
  for (int64_t i = 0; i < count; ++i)
    in[i] = -1.0f - std::abs(std::sin(0.37 * i)) * 10;
  std::vector<float> nhwcIn(count + 3), nhwcOut(out.size());
  paddle_memref4d_f32_t plainIn = dense4d(in, {N, C, H, W});
  paddle_memref4d_f32_t lastIn{
      nhwcIn.data(), nhwcIn.data(), 3, {N, C, H, W}, {H * W * C, 1, W * C, C}};
  _mlir_ciface_paddle_onednn_reorder(&plainIn, &lastIn);
  paddle_memref4d_f32_t plainOut = dense4d(out, {N, C, OH, OW});
  paddle_memref4d_f32_t lastOut{nhwcOut.data(),
                                nhwcOut.data(),
                                0,
                                {N, C, OH, OW},
                                {OH * OW * C, 1, OW * C, C}};
  for (auto [src, dst] :
       {std::pair{&plainIn, &plainOut}, std::pair{&lastIn, &lastOut}}) {
    _mlir_ciface_paddle_onednn_max_pool2d(src, dst, 3, 2, 2, 1, 1, 1, 2, 0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            float got =
                dst->aligned[dst->offset + n * dst->strides[0] +
                             c * dst->strides[1] + oh * dst->strides[2] +
                             ow * dst->strides[3]];
            EXPECT_EQ(got, referenceMaxPool(plainIn, n, c, oh, ow, {3, 2},
                                            {2, 1}, {1, 1}))
                << n << " " << c << " " << oh << " " << ow;
          }
  }
}

/// f(x) pooling a 5x5 input with a 3x3 window, stride 2, no padding, into
/// a 3x3 output (the input gives 2x2).
void badShapeMaxPool(void **) {
  static std::vector<float> in(25), out(9);
  paddle_memref4d_f32_t mi = dense4d(in, {1, 1, 5, 5});
  paddle_memref4d_f32_t mo = dense4d(out, {1, 1, 3, 3});
  _mlir_ciface_paddle_onednn_max_pool2d(&mi, &mo, 3, 3, 2, 2, 0, 0, 0, 0);
}

/// f(x) pooling with padding as large as the window (a window of padding
/// alone).
void paddingOnlyWindowMaxPool(void **) {
  static std::vector<float> in(4), out(9);
  paddle_memref4d_f32_t mi = dense4d(in, {1, 1, 2, 2});
  paddle_memref4d_f32_t mo = dense4d(out, {1, 1, 3, 3});
  _mlir_ciface_paddle_onednn_max_pool2d(&mi, &mo, 2, 2, 1, 1, 2, 2, 0, 0);
}

TEST(OneDnn, MaxPoolOfTheWrongShapeIsAnError) {
  auto [code, message] = invokeError(badShapeMaxPool);
  EXPECT_EQ(code, PADDLE_INTERNAL);
  EXPECT_NE(message.find("max pooling failed: output spatial dim 0 is 3, the "
                         "padded input gives 2"),
            std::string::npos)
      << message;
  message = invokeError(paddingOnlyWindowMaxPool).second;
  EXPECT_NE(message.find("padding of spatial dim 0 must be from 0 to the "
                         "kernel size - 1"),
            std::string::npos)
      << message;
}

TEST(OneDnn, Conv2DMayRunAsWinograd) {
  // 64 -> 64 channels, 3x3, padding 1, on channels-last activations with a
  // bias and relu: with the Winograd flag the call matches the float64 sum
  // as closely as the direct conv does. On AVX-512 oneDNN has the kernel.
  const int C = 64, H = 10, W = 10, K = 3;
  std::vector<float> in(C * H * W), filter(C * C * K * K), bias(C);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < filter.size(); ++i)
    filter[i] = std::cos(0.11 * i) / 8;
  for (int i = 0; i < C; ++i)
    bias[i] = 0.1f * (i % 7) - 0.3f;
  // in[c, h, w] at (h * W + w) * C + c.
  paddle_memref4d_f32_t mi{
      in.data(), in.data(), 0, {1, C, H, W}, {C * H * W, 1, W * C, C}};
  paddle_memref4d_f32_t mf = dense4d(filter, {C, C, K, K});
  double largest = 0;
  std::vector<double> expected(C * H * W);
  for (int f = 0; f < C; ++f)
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w) {
        double sum = bias[f];
        for (int c = 0; c < C; ++c)
          for (int i = 0; i < K; ++i)
            for (int j = 0; j < K; ++j) {
              int y = h + i - 1, x = w + j - 1;
              if (y >= 0 && y < H && x >= 0 && x < W)
                sum += double(in[(y * W + x) * C + c]) *
                       filter[((f * C + c) * K + i) * K + j];
            }
        expected[(h * W + w) * C + f] = std::max(sum, 0.0);
        largest = std::max(largest, std::abs(sum));
      }
  for (int64_t flags : {0, PADDLE_ONEDNN_FLAG_WINOGRAD}) {
    std::vector<float> out(C * H * W, 7.0f);
    paddle_memref4d_f32_t mo{
        out.data(), out.data(), 0, {1, C, H, W}, {C * H * W, 1, W * C, C}};
    Extras e;
    e.program[0] = flags;
    e.operands.emplace_back(bias.data(), std::vector<int64_t>{C},
                            std::vector<int64_t>{1});
    e.post(PADDLE_ONEDNN_POST_BIAS, 0);
    e.post(PADDLE_ONEDNN_POST_RELU);
    int64_t before = paddle_onednn_winograd_primitives();
    int64_t transformsBefore = paddle_onednn_winograd_transforms();
    conv2d(mi, mf, mo, 1, 1, 1, 1, 0, e, {1, 1, 1, 1});
    if (flags && __builtin_cpu_supports("avx512f")) {
      EXPECT_EQ(paddle_onednn_winograd_primitives(), before + 1);
      // The run-time weights went through the runtime's own transform,
      // which the float64 comparison below checks end to end.
      EXPECT_EQ(paddle_onednn_winograd_transforms(), transformsBefore + 1);
    }
    if (!flags) {
      EXPECT_EQ(paddle_onednn_winograd_primitives(), before);
    }
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_NEAR(out[i], expected[i], 1e-5 * largest) << flags << " " << i;
  }
}

TEST(OneDnn, WinogradWeightsMatchOneDnnsReorder) {
  // ResNet's 3x3 shapes (oneDNN picks three Winograd weights layouts among
  // them) and one whose channels the layout pads (60 -> 64, 40 -> 48):
  // the runtime's transform writes what oneDNN's reorder writes.
  struct Shape {
    int64_t n, ic, oc, hw;
  };
  int transformed = 0;
  for (Shape s :
       {Shape{1, 64, 64, 56}, Shape{8, 128, 128, 28}, Shape{1, 256, 256, 14},
        Shape{8, 512, 512, 7}, Shape{1, 40, 60, 28}}) {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    auto any = [](const dnnl::memory::dims &d) {
      return dnnl::memory::desc(d, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::any);
    };
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    try {
      pd.emplace(dnnl::convolution_forward::desc(
                     dnnl::prop_kind::forward_inference,
                     dnnl::algorithm::convolution_winograd,
                     any({s.n, s.ic, s.hw, s.hw}), any({s.oc, s.ic, 3, 3}),
                     any({s.n, s.oc, s.hw, s.hw}), {1, 1}, {1, 1}, {1, 1}),
                 engine);
    } catch (const dnnl::error &) {
      continue; // no Winograd kernel for it on this CPU
    }
    dnnl::memory::desc to = pd->weights_desc();
    dnnl::memory::desc from({s.oc, s.ic, 3, 3}, dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::oihw);
    std::vector<float> w(s.oc * s.ic * 9);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = std::sin(0.37 * i) + 0.1f * std::cos(0.011 * i);
    std::vector<float> want(to.get_size() / sizeof(float)),
        got(want.size(), -7.0f);
    dnnl::stream stream(engine);
    dnnl::memory in(from, engine, w.data()), out(to, engine, want.data());
    dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to))
        .execute(stream, in, out);
    stream.wait();
    if (!paddle::onednn::transformWinogradWeights(
            w.data(), {s.oc, s.ic, 3, 3}, {s.ic * 9, 9, 3, 1}, to, got.data()))
      continue;
    ++transformed;
    float scale = 0;
    for (float v : want)
      scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-5 * scale)
          << "at " << i << " of " << s.oc << "x" << s.ic << " at " << s.hw;
  }
  // All of them on AVX-512 (the layouts the transform knows).
  if (__builtin_cpu_supports("avx512f"))
    EXPECT_EQ(transformed, 5);
}

TEST(OneDnn, WinogradFlagFallsBackWhereThereIsNoKernel) {
  // Stride 2 has no Winograd kernel: the flag leaves the direct conv.
  std::vector<float> in(2 * 6 * 6), filter(3 * 2 * 9), out(3 * 2 * 2);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = std::sin(0.5 * i);
  for (size_t i = 0; i < filter.size(); ++i)
    filter[i] = std::cos(0.2 * i);
  paddle_memref4d_f32_t mi = dense4d(in, {1, 2, 6, 6});
  paddle_memref4d_f32_t mf = dense4d(filter, {3, 2, 3, 3});
  paddle_memref4d_f32_t mo = dense4d(out, {1, 3, 2, 2});
  Extras e;
  e.program[0] = PADDLE_ONEDNN_FLAG_WINOGRAD;
  int64_t before = paddle_onednn_winograd_primitives();
  conv2d(mi, mf, mo, 2, 2, 1, 1, 0, e);
  EXPECT_EQ(paddle_onednn_winograd_primitives(), before);
  for (int f = 0; f < 3; ++f)
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 2; ++ow) {
        double sum = 0;
        for (int c = 0; c < 2; ++c)
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              sum += double(in[(c * 6 + 2 * oh + i) * 6 + 2 * ow + j]) *
                     filter[((f * 2 + c) * 3 + i) * 3 + j];
        EXPECT_NEAR(out[(f * 2 + oh) * 2 + ow], sum, 1e-5);
      }
}

/// A 1x2x3x3 input, two 2x2 filters (stride 1) and per-channel vectors for
/// the post-op tests; out[f] = sum of in[c, oh + i, ow + j] * w[f, c, i, j].
struct ConvCase {
  std::vector<float> in, w, out, bias{0.5f, -40.0f}, scale{2.0f, -0.5f};
  paddle_memref4d_f32_t mi, mw, mo;
  ConvCase() : in(18), w(16), out(8, 7.0f) {
    for (int i = 0; i < 18; ++i)
      in[i] = 0.5f * i - 3;
    for (int i = 0; i < 16; ++i)
      w[i] = 0.25f * (i % 5) - 0.5f;
    mi = dense4d(in, {1, 2, 3, 3});
    mw = dense4d(w, {2, 2, 2, 2});
    mo = dense4d(out, {1, 2, 2, 2});
  }
  double conv(int f, int oh, int ow) const {
    double sum = 0;
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          sum += double(in[c * 9 + (oh + i) * 3 + ow + j]) *
                 w[((f * 2 + c) * 2 + i) * 2 + j];
    return sum;
  }
};

TEST(OneDnn, Conv2DFusesBiasScaleAndRelu) {
  ConvCase t;
  Extras e;
  e.operands.emplace_back(t.bias.data(), std::vector<int64_t>{2},
                          std::vector<int64_t>{1});
  e.operands.emplace_back(t.scale.data(), std::vector<int64_t>{1, 2, 1, 1},
                          std::vector<int64_t>{2, 1, 1, 1});
  e.post(PADDLE_ONEDNN_POST_BIAS, 0);
  e.post(PADDLE_ONEDNN_POST_MUL, 1);
  e.post(PADDLE_ONEDNN_POST_LINEAR, -1, 1.0, 0.25);
  e.post(PADDLE_ONEDNN_POST_RELU);
  conv2d(t.mi, t.mw, t.mo, 1, 1, 1, 1, 0, e);
  for (int f = 0; f < 2; ++f)
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 2; ++ow) {
        double y = (t.conv(f, oh, ow) + t.bias[f]) * t.scale[f] + 0.25;
        EXPECT_NEAR(t.out[(f * 2 + oh) * 2 + ow], std::max(y, 0.0), 1e-4)
            << f << oh << ow;
      }
}

TEST(OneDnn, CachedPrimitivesFollowEachCallsBuffers) {
  // The runtime keeps one memory object per primitive argument and thread
  // and points it at each call's buffers: calls of one cached primitive
  // that alternate between two sets of operands (input, weights, bias,
  // scale, output at other addresses, with other values) must each get
  // their own result.
  ConvCase cases[2];
  ConvCase &b = cases[1];
  for (float &v : b.in)
    v = 1.5f - 0.25f * v;
  for (float &v : b.w)
    v = 0.75f * v + 0.125f;
  b.bias = {-1.0f, 3.0f};
  b.scale = {0.5f, 4.0f};
  for (int call = 0; call < 6; ++call) {
    ConvCase &t = cases[call % 2];
    std::fill(t.out.begin(), t.out.end(), 7.0f);
    Extras e;
    e.operands.emplace_back(t.bias.data(), std::vector<int64_t>{2},
                            std::vector<int64_t>{1});
    e.operands.emplace_back(t.scale.data(), std::vector<int64_t>{2},
                            std::vector<int64_t>{1});
    e.post(PADDLE_ONEDNN_POST_BIAS, 0);
    e.post(PADDLE_ONEDNN_POST_MUL, 1);
    conv2d(t.mi, t.mw, t.mo, 1, 1, 1, 1, 0, e);
    for (int f = 0; f < 2; ++f)
      for (int oh = 0; oh < 2; ++oh)
        for (int ow = 0; ow < 2; ++ow)
          EXPECT_NEAR(t.out[(f * 2 + oh) * 2 + ow],
                      (t.conv(f, oh, ow) + t.bias[f]) * t.scale[f], 1e-4)
              << "call " << call << ": " << f << oh << ow;
  }
}

TEST(OneDnn, Conv2DSumsTheOutputsContents) {
  // A residual already in the output, then a clip.
  ConvCase t;
  Extras e;
  e.post(PADDLE_ONEDNN_POST_SUM);
  e.post(PADDLE_ONEDNN_POST_CLIP, -1, -1.0, 9.0);
  conv2d(t.mi, t.mw, t.mo, 1, 1, 1, 1, 0, e);
  for (int f = 0; f < 2; ++f)
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 2; ++ow)
        EXPECT_NEAR(t.out[(f * 2 + oh) * 2 + ow],
                    std::min(std::max(t.conv(f, oh, ow) + 7.0, -1.0), 9.0),
                    1e-4);
}

TEST(OneDnn, ConvolutionsTimeOneDnnsImplementationsToChoose) {
  // A 1x1 conv on channels-last buffers with a bias, a per-channel scale
  // (a binary post-op, which the timing runs feed too) and relu: oneDNN
  // offers several implementations on x86 (brgconv_1x1, jit_1x1, ...);
  // with timed choice they are timed when the primitive is created, and
  // whichever wins, the result matches the float64 reference. Without it
  // nothing is timed. Each case is a new problem (its own H), so each
  // creates its primitive.
  const int64_t C = 24, F = 40, W = 9;
  for (int timed : {1, 0}) {
    paddle_onednn_set_timed_choice(timed);
    const int64_t H = 10 + timed;
    std::vector<float> in(C * H * W), w(F * C), bias(F), scale(F),
        out(F * H * W, 7.0f);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = std::sin(0.37 * i);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = std::cos(0.11 * i) / 4;
    for (int64_t f = 0; f < F; ++f) {
      bias[f] = 0.1f * (f % 7) - 0.3f;
      scale[f] = 1.0f + 0.05f * f;
    }
    // Channels-last: [c, h, w] at (h * W + w) * C + c.
    paddle_memref4d_f32_t mi{
        in.data(), in.data(), 0, {1, C, H, W}, {C * H * W, 1, W * C, C}};
    paddle_memref4d_f32_t mw = dense4d(w, {F, C, 1, 1});
    paddle_memref4d_f32_t mo{
        out.data(), out.data(), 0, {1, F, H, W}, {F * H * W, 1, W * F, F}};
    Extras e;
    addBiasScaleRelu(e, bias, scale);
    int64_t before = paddle_onednn_timed_candidates();
    conv2d(mi, mw, mo, 1, 1, 1, 1, 0, e);
    int64_t timedNow = paddle_onednn_timed_candidates() - before;
    if (!timed) {
      EXPECT_EQ(timedNow, 0);
    } else if (__builtin_cpu_supports("avx512f")) {
      // oneDNN's first pick, and the others unless the pick took over the
      // bound (1 ms; a few us here, but other tests share the cores).
      EXPECT_GE(timedNow, 1);
    }
    for (int64_t h = 0; h < H; ++h)
      for (int64_t x = 0; x < W; ++x)
        for (int64_t f = 0; f < F; ++f) {
          double y = bias[f];
          for (int64_t c = 0; c < C; ++c)
            y += double(in[(h * W + x) * C + c]) * w[f * C + c];
          y = std::max(y * scale[f], 0.0);
          ASSERT_NEAR(out[(h * W + x) * F + f], y, 1e-4)
              << "timed " << timed << " at " << h << "," << x << "," << f;
        }
  }
  paddle_onednn_set_timed_choice(1);
}

TEST(OneDnn, ConvolutionsTooBigToGainKeepOneDnnsPickUntimed) {
  // A 1x1 conv of 2.1 GFLOP (512 -> 512 channels at 64x64): at any x86
  // core's rate it runs longer than the timed choice's bound, so it keeps
  // oneDNN's pick without a warm-up run (nothing is timed), and computes
  // the right thing.
  paddle_onednn_set_timed_choice(1);
  const int64_t C = 512, F = 512, H = 64, W = 64;
  std::vector<float> in(C * H * W), w(F * C), out(F * H * W);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::cos(0.11 * i) / 16;
  paddle_memref4d_f32_t mi{
      in.data(), in.data(), 0, {1, C, H, W}, {C * H * W, 1, W * C, C}};
  paddle_memref4d_f32_t mw = dense4d(w, {F, C, 1, 1});
  paddle_memref4d_f32_t mo{
      out.data(), out.data(), 0, {1, F, H, W}, {F * H * W, 1, W * F, F}};
  int64_t before = paddle_onednn_timed_candidates();
  Extras none;
  conv2d(mi, mw, mo, 1, 1, 1, 1, 0, none);
  EXPECT_EQ(paddle_onednn_timed_candidates() - before, 0);
  // Every 97th output against float64.
  for (int64_t i = 0; i < F * H * W; i += 97) {
    int64_t pixel = i / F, f = i % F;
    double y = 0;
    for (int64_t c = 0; c < C; ++c)
      y += double(in[pixel * C + c]) * w[f * C + c];
    ASSERT_NEAR(out[i], y, 1e-3) << "at pixel " << pixel << ", channel " << f;
  }
}

TEST(OneDnn, MatmulsWithRunTimeWeightsTimeOneDnnsImplementations) {
  // c (+)= a * b with b a run-time operand whose rows are 4 KiB apart
  // (oneDNN offers brg and gemm:jit kernels for it on x86): with timed
  // choice the implementations are timed on the call's own operands when
  // the primitive is created. An accumulating call must not see the
  // timing runs in its result (they write a buffer of their own), and a
  // call with a bias, a per-column scale and relu gets the same result
  // whichever kernel won. Each case is a new problem (its own M).
  const int64_t K = 96, N = 1024;
  for (int timed : {1, 0}) {
    paddle_onednn_set_timed_choice(timed);
    for (int accumulate : {1, 0}) {
      const int64_t M = 40 + 2 * timed + accumulate;
      std::vector<float> a(M * K), b(K * N), c(M * N), bias(N), scale(N);
      for (size_t i = 0; i < a.size(); ++i)
        a[i] = std::sin(0.37 * i);
      for (size_t i = 0; i < b.size(); ++i)
        b[i] = std::cos(0.11 * i) / 4;
      for (size_t i = 0; i < c.size(); ++i)
        c[i] = 0.5f * std::cos(0.07 * i);
      for (int64_t n = 0; n < N; ++n) {
        bias[n] = 0.1f * (n % 7) - 0.3f;
        scale[n] = 1.0f + 0.001f * n;
      }
      std::vector<float> before = c;
      Memref ma(a.data(), {M, K}, {K, 1}), mb(b.data(), {K, N}, {N, 1}),
          mc(c.data(), {M, N}, {N, 1});
      Extras e;
      if (!accumulate) {
        addBiasScaleRelu(e, bias, scale);
      }
      int64_t map = pack({0, 1});
      int64_t candidatesBefore = paddle_onednn_timed_candidates();
      matmul(ma, mb, mc, map, map, map, accumulate, std::move(e));
      int64_t timedNow = paddle_onednn_timed_candidates() - candidatesBefore;
      if (!timed) {
        EXPECT_EQ(timedNow, 0);
      } else if (__builtin_cpu_supports("avx512f")) {
        EXPECT_GE(timedNow, 1);
      }
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double y = accumulate ? before[m * N + n] : bias[n];
          for (int64_t k = 0; k < K; ++k)
            y += double(a[m * K + k]) * b[k * N + n];
          if (!accumulate)
            y = std::max(y * scale[n], 0.0);
          ASSERT_NEAR(c[m * N + n], y, 1e-4)
              << "timed " << timed << " accumulate " << accumulate << " at "
              << m << "," << n;
        }
    }
  }
  paddle_onednn_set_timed_choice(1);
}

TEST(OneDnn, LargeMatmulsWithRunTimeWeightsStartFromGemmJit) {
  // c = a * b with b a run-time operand: from 2.5e8 FLOPs (512^3) the
  // timed choice starts from gemm:jit instead of oneDNN's brg (4-20%
  // faster there on the Xeon VM); a 256^3 product keeps oneDNN's order.
  // With timed choice off, oneDNN's first pick stays.
  struct Case {
    int64_t n;
    int timed;
    int64_t starts;
  };
  for (Case k : {Case{512, 1, 1}, Case{256, 1, 0}, Case{512, 0, 0}}) {
    paddle_onednn_set_timed_choice(k.timed);
    // Each case its own problem: one more row than the last.
    const int64_t M = k.n + k.timed + (k.n == 256), K = k.n, N = k.n;
    std::vector<float> a(M * K), b(K * N), c(M * N);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = std::sin(0.37 * i);
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = std::cos(0.11 * i) / 4;
    Memref ma(a.data(), {M, K}, {K, 1}), mb(b.data(), {K, N}, {N, 1}),
        mc(c.data(), {M, N}, {N, 1});
    int64_t map = pack({0, 1});
    int64_t before = paddle_onednn_preferred_starts();
    matmul(ma, mb, mc, map, map, map, /*accumulate=*/0, Extras{});
    if (__builtin_cpu_supports("avx512f"))
      EXPECT_EQ(paddle_onednn_preferred_starts() - before, k.starts)
          << "n " << k.n << " timed " << k.timed;
    // Every 7th row against float64.
    for (int64_t m = 0; m < M; m += 7)
      for (int64_t n = 0; n < N; ++n) {
        double y = 0;
        for (int64_t i = 0; i < K; ++i)
          y += double(a[m * K + i]) * b[i * N + n];
        ASSERT_NEAR(c[m * N + n], y, 1e-3)
            << "n " << k.n << " at " << m << "," << n;
      }
  }
  paddle_onednn_set_timed_choice(1);
}

TEST(OneDnn, MatmulsWithConstantWeightsTimeOneDnnsImplementations) {
  // c = a * b + bias with b constant: oneDNN offers brg (blocked weights)
  // and gemm:jit (plain) kernels for it on x86, and with timed choice both
  // are timed on zeros in their own weight layout when the primitive is
  // created. The winner's layout is the one the weights are reordered into
  // (once), and every call, the first included, gets the product.
  const int64_t M = 48, K = 160, N = 96;
  std::vector<float> a(M * K), b(K * N), c(M * N), bias(N);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = std::cos(0.11 * i) / 4;
  for (int64_t n = 0; n < N; ++n)
    bias[n] = 0.1f * (n % 7) - 0.3f;
  Memref ma(a.data(), {M, K}, {K, 1}), mb(b.data(), {K, N}, {N, 1}),
      mc(c.data(), {M, N}, {N, 1});
  paddle_onednn_set_timed_choice(1);
  Extras e;
  e.program[0] = PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS;
  e.operands.emplace_back(bias.data(), std::vector<int64_t>{N},
                          std::vector<int64_t>{1});
  e.post(PADDLE_ONEDNN_POST_BIAS, 0);
  int64_t candidatesBefore = paddle_onednn_timed_candidates();
  int64_t reordersBefore = paddle_onednn_weight_reorders();
  e.bind(&mc.unranked);
  int64_t map = pack({0, 1});
  for (int call = 0; call < 3; ++call) {
    std::fill(c.begin(), c.end(), 0.0f);
    // The same call site each time: its state word keeps the reordered
    // weights.
    _mlir_ciface_paddle_onednn_matmul(&ma.unranked, &mb.unranked, &mc.unranked,
                                      e.slots[0], e.slots[1], e.slots[2],
                                      e.slots[3], &e.stateRef.unranked,
                                      &e.programRef.unranked, map, map, map, 0);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double y = bias[n];
        for (int64_t k = 0; k < K; ++k)
          y += double(a[m * K + k]) * b[k * N + n];
        ASSERT_NEAR(c[m * N + n], y, 1e-4)
            << "call " << call << " at " << m << "," << n;
      }
  }
  if (__builtin_cpu_supports("avx512f"))
    EXPECT_GE(paddle_onednn_timed_candidates() - candidatesBefore, 2);
  EXPECT_LE(paddle_onednn_weight_reorders() - reordersBefore, 1);
}

TEST(OneDnn, ConstantWeightsAreReorderedOncePerCallSite) {
  ConvCase t;
  Extras e;
  e.program[0] = 1; // constant weights
  int64_t before = paddle_onednn_weight_reorders();
  conv2d(t.mi, t.mw, t.mo, 1, 1, 1, 1, 0, e);
  std::vector<float> first = t.out;
  int64_t afterFirst = paddle_onednn_weight_reorders();
  // Where oneDNN chose another layout, the state word is set now: later
  // calls reuse the reordered weights.
  EXPECT_EQ(e.state != 0, afterFirst - before == 1);
  for (int i = 0; i < 3; ++i) {
    std::fill(t.out.begin(), t.out.end(), 0.0f);
    conv2d(t.mi, t.mw, t.mo, 1, 1, 1, 1, 0, e);
    EXPECT_EQ(t.out, first);
  }
  // oneDNN may keep the plain layout (no reorder, nothing cached).
  EXPECT_LE(afterFirst - before, 1);
  EXPECT_EQ(paddle_onednn_weight_reorders(), afterFirst);
  // A new module at the same address (state 0) with other contents: the
  // cache must not serve the old weights.
  for (float &v : t.w)
    v = -v;
  e.state = 0;
  conv2d(t.mi, t.mw, t.mo, 1, 1, 1, 1, 0, e);
  for (size_t i = 0; i < first.size(); ++i)
    EXPECT_FLOAT_EQ(t.out[i], -first[i]) << i;
}

/// A 1x1 conv (Cin -> C, bias, relu6) and a depthwise 3x3 conv after it
/// (padding 1, `stride`, bias, relu6), channels-last or plain (NCHW)
/// buffers, with the float64 reference. Not copyable: the descriptors
/// point into it.
struct DepthwiseCase {
  int64_t N, Cin, C, H, W, stride, OH, OW;
  std::vector<float> in, w, bias, dw, dwBias, out;
  std::vector<double> expected;
  paddle_memref4d_f32_t mi, mw, mo;
  int64_t state = 0;
  DepthwiseCase(std::array<int64_t, 5> shape, int64_t stride, bool channelsLast)
      : N(shape[0]), Cin(shape[1]), C(shape[2]), H(shape[3]), W(shape[4]),
        stride(stride), OH((H - 1) / stride + 1), OW((W - 1) / stride + 1),
        in(N * Cin * H * W), w(C * Cin), bias(C), dw(C * 9), dwBias(C),
        out(N * C * OH * OW, 7.0f), expected(out.size()) {
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = std::sin(0.37 * i) * 3;
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = std::cos(0.11 * i);
    for (size_t i = 0; i < dw.size(); ++i)
      dw[i] = std::sin(0.23 * i + 1) / 2;
    for (int64_t c = 0; c < C; ++c) {
      bias[c] = 0.1f * (c % 7) - 0.3f;
      dwBias[c] = 0.5f - 0.05f * c;
    }
    auto layout = [&](float *data, int64_t c, int64_t h, int64_t w) {
      paddle_memref4d_f32_t m{data, data, 0, {N, c, h, w}, {}};
      int64_t nhwc[4] = {c * h * w, 1, w * c, c},
              nchw[4] = {c * h * w, h * w, w, 1};
      std::copy(channelsLast ? nhwc : nchw, (channelsLast ? nhwc : nchw) + 4,
                m.strides);
      return m;
    };
    mi = layout(in.data(), Cin, H, W);
    mw = dense4d(w, {C, Cin, 1, 1});
    mo = layout(out.data(), C, OH, OW);
  }
  DepthwiseCase(const DepthwiseCase &) = delete;

  static int64_t at(const paddle_memref4d_f32_t &m, int64_t n, int64_t c,
                    int64_t y, int64_t x) {
    return n * m.strides[0] + c * m.strides[1] + y * m.strides[2] +
           x * m.strides[3];
  }

  void computeExpected() {
    auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
    std::vector<double> middle(N * C * H * W);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t y = 0; y < H; ++y)
          for (int64_t x = 0; x < W; ++x) {
            double sum = bias[c];
            for (int64_t k = 0; k < Cin; ++k)
              sum += double(in[at(mi, n, k, y, x)]) * w[c * Cin + k];
            middle[((n * C + c) * H + y) * W + x] = relu6(sum);
          }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t oy = 0; oy < OH; ++oy)
          for (int64_t ox = 0; ox < OW; ++ox) {
            double sum = dwBias[c];
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 3; ++j) {
                int64_t y = oy * stride + i - 1, x = ox * stride + j - 1;
                if (y >= 0 && y < H && x >= 0 && x < W)
                  sum += middle[((n * C + c) * H + y) * W + x] *
                         dw[c * 9 + i * 3 + j];
              }
            expected[at(mo, n, c, oy, ox)] = relu6(sum);
          }
  }

  /// Runs the call: bias, relu6, depthwise (filter e1), its bias (e2),
  /// relu6, with `flags`.
  void run(int64_t flags) {
    Extras e;
    e.program[0] = flags;
    e.operands.emplace_back(bias.data(), std::vector<int64_t>{C},
                            std::vector<int64_t>{1});
    e.operands.emplace_back(dw.data(), std::vector<int64_t>{C, 1, 1, 3, 3},
                            std::vector<int64_t>{9, 9, 9, 3, 1});
    e.operands.emplace_back(dwBias.data(), std::vector<int64_t>{C},
                            std::vector<int64_t>{1});
    e.post(PADDLE_ONEDNN_POST_BIAS, 0);
    e.post(PADDLE_ONEDNN_POST_CLIP, -1, 0.0, 6.0);
    e.post(PADDLE_ONEDNN_POST_DEPTHWISE, 1, double(stride));
    e.post(PADDLE_ONEDNN_POST_BIAS, 2);
    e.post(PADDLE_ONEDNN_POST_CLIP, -1, 0.0, 6.0);
    Memref fallback(out.data(), {1}, {1});
    e.bind(&fallback.unranked);
    Memref stateRef(reinterpret_cast<float *>(&state), {1}, {1});
    std::fill(out.begin(), out.end(), 7.0f);
    _mlir_ciface_paddle_onednn_conv2d(
        &mi, &mw, &mo, e.slots[0], e.slots[1], e.slots[2], e.slots[3],
        &stateRef.unranked, &e.programRef.unranked, 1, 1, 1, 1, 0, 0, 0, 0, 0);
  }

  void check(const std::string &what) {
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_NEAR(out[i], expected[i], 1e-4) << what << " element " << i;
  }
};

TEST(OneDnn, Conv2DRunsADepthwisePostOpInStripsOfRows) {
  // Against the float64 reference: strides 1 and 2, odd and even sizes, a
  // batch, channels-last and plain buffers, constant (cached) and per-call
  // weights; in one strip (no budget), strips of one output row (carrying
  // 3 - stride input rows from strip to strip) and of a few rows.
  constexpr int64_t kConstant = PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS |
                                PADDLE_ONEDNN_FLAG_CONSTANT_DEPTHWISE_WEIGHTS;
  for (std::array<int64_t, 5> shape :
       {std::array<int64_t, 5>{2, 5, 20, 9, 7},
        std::array<int64_t, 5>{1, 24, 144, 56, 56}})
    for (int64_t stride : {1, 2})
      for (bool channelsLast : {true, false})
        for (int64_t budgetRows : {0, 1, 8})
          for (int64_t flags : {int64_t(0), kConstant}) {
            DepthwiseCase t(shape, stride, channelsLast);
            t.computeExpected();
            int64_t rowBytes = t.W * t.C * int64_t(sizeof(float));
            paddle_onednn_set_depthwise_strip_bytes(budgetRows * rowBytes);
            // Strips of 1 output row, of (8 - 3) / stride + 1, or all rows.
            int64_t rows = budgetRows == 0   ? t.OH
                           : budgetRows == 1 ? 1
                                             : (budgetRows - 3) / stride + 1;
            std::string what = "shape " + std::to_string(shape[3]) +
                               " stride " + std::to_string(stride) +
                               (channelsLast ? " nhwc" : " nchw") + " rows " +
                               std::to_string(rows) + " flags " +
                               std::to_string(flags);
            int64_t calls = paddle_onednn_depthwise_calls(),
                    strips = paddle_onednn_depthwise_strip_calls();
            for (int call = 0; call < 2; ++call) {
              t.run(flags);
              t.check(what);
            }
            EXPECT_EQ(paddle_onednn_depthwise_calls() - calls, 2) << what;
            EXPECT_EQ(paddle_onednn_depthwise_strip_calls() - strips,
                      rows < t.OH ? 2 : 0)
                << what;
            if (flags) {
              // A new module's constants at the same addresses (state
              // 0): the cache must serve neither old one, for any strip.
              for (float &v : t.dw)
                v = -v;
              for (float &v : t.w)
                v = v / 2;
              t.computeExpected();
              t.state = 0;
              t.run(flags);
              t.check(what + " refreshed constants");
            }
          }
  paddle_onednn_set_depthwise_strip_bytes(768 << 10);
}

TEST(OneDnn, ConcurrentCallsOfOnePrimitiveKeepTheirScratchpadsApart) {
  // Calls from several threads at once share the cached primitives (one
  // key, one object); each call must still get the float64 reference.
  // With the scratchpad the primitive's own, shared by the threads, this
  // failed in 6 runs of 6.
  int32_t threadsBefore = paddle_get_num_threads();
  ASSERT_EQ(paddle_set_num_threads(1), nullptr);
  constexpr int kThreads = 6, kCalls = 16;
  constexpr int64_t kConstant = PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS |
                                PADDLE_ONEDNN_FLAG_CONSTANT_DEPTHWISE_WEIGHTS;
  for (int64_t stride : {1, 2}) {
    std::vector<std::unique_ptr<DepthwiseCase>> cases;
    for (int i = 0; i < kThreads; ++i) {
      cases.push_back(std::make_unique<DepthwiseCase>(
          std::array<int64_t, 5>{1, 24, 144, 56, 56}, stride, true));
      cases.back()->computeExpected();
    }
    std::vector<int> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&, i] {
        DepthwiseCase &t = *cases[i];
        for (int call = 0; call < kCalls; ++call) {
          t.run(kConstant);
          for (size_t j = 0; j < t.out.size(); ++j)
            if (std::abs(t.out[j] - t.expected[j]) > 1e-4) {
              ++wrong[i];
              break;
            }
        }
      });
    for (std::thread &t : threads)
      t.join();
    for (int i = 0; i < kThreads; ++i)
      EXPECT_EQ(wrong[i], 0) << "stride " << stride << " thread " << i
                             << ": wrong outputs in calls of " << kCalls;
  }
  ASSERT_EQ(paddle_set_num_threads(threadsBefore), nullptr);
}

TEST(OneDnn, DepthwisePostOpErrorsNameWhatIsWrong) {
  static DepthwiseCase *t = nullptr;
  auto body = [](void **) { t->run(0); };
  // An output of the 1x1 conv's size, not the depthwise conv's.
  DepthwiseCase c({1, 2, 3, 4, 5}, 2, true);
  c.mo.sizes[2] = 4;
  c.mo.sizes[3] = 5;
  c.out.resize(4 * 5 * 3);
  c.mo.allocated = c.mo.aligned = c.out.data();
  t = &c;
  std::string message = invokeError(+body).second;
  EXPECT_NE(message.find("the output is [1, 3, 4, 5], the depthwise "
                         "post-op makes [1, 3, 2, 3]"),
            std::string::npos)
      << message;
}

TEST(OneDnn, MatmulFusesBiasAndGelu) {
  // c[m, n] = gelu(sum_k a[m, k] b[k, n] + bias[n]) with constant b.
  const int64_t M = 3, K = 4, N = 5;
  std::vector<float> a(M * K), b(K * N), c(M * N), bias(N);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = 0.3f * i - 1.5f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 0.1f * (i % 7) - 0.3f;
  for (int64_t n = 0; n < N; ++n)
    bias[n] = 0.2f * n - 0.4f;
  Memref ma(a.data(), {M, K}, {K, 1}), mb(b.data(), {K, N}, {N, 1}),
      mc(c.data(), {M, N}, {N, 1});
  Extras e;
  e.program[0] = 1;
  e.operands.emplace_back(bias.data(), std::vector<int64_t>{N},
                          std::vector<int64_t>{1});
  e.post(PADDLE_ONEDNN_POST_BIAS, 0);
  e.post(PADDLE_ONEDNN_POST_GELU_ERF);
  int64_t map = pack({0, 1});
  matmul(ma, mb, mc, map, map, map, 0, std::move(e));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double y = bias[n];
      for (int64_t k = 0; k < K; ++k)
        y += double(a[m * K + k]) * b[k * N + n];
      double gelu = 0.5 * y * (1 + std::erf(y / std::sqrt(2.0)));
      EXPECT_NEAR(c[m * N + n], gelu, 1e-5) << m << n;
    }
}

/// bf16 elements (round to nearest even) of `values`, and the f32 values
/// they hold.
struct BF16Data {
  std::vector<uint16_t> bits;
  std::vector<float> values;
  explicit BF16Data(size_t n, float (*f)(size_t)) : bits(n), values(n) {
    for (size_t i = 0; i < n; ++i) {
      float x = f(i);
      uint32_t u;
      std::memcpy(&u, &x, 4);
      bits[i] = static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
      uint32_t back = uint32_t(bits[i]) << 16;
      std::memcpy(&values[i], &back, 4);
    }
  }
  float *raw() { return reinterpret_cast<float *>(bits.data()); }
};

TEST(OneDnn, BF16MatmulSumsExactProductsInF32) {
  // c = a @ b^T + bias with bf16 a [M, K] and b [N, K] (read transposed,
  // constant) and an f32 c: the products of bf16 values are exact in f32,
  // so c is the float64 sum up to f32 accumulation (K terms).
  const int64_t M = 37, K = 200, N = 48;
  BF16Data a(M * K, [](size_t i) { return float(std::sin(0.37 * i)); });
  BF16Data b(N * K, [](size_t i) { return float(std::cos(0.11 * i + 1)); });
  std::vector<float> c(M * N), bias(N);
  for (int64_t n = 0; n < N; ++n)
    bias[n] = 0.25f * n - 3;
  Memref ma(a.raw(), {M, K}, {K, 1}), mb(b.raw(), {N, K}, {K, 1}),
      mc(c.data(), {M, N}, {N, 1});
  for (int constant = 0; constant < 2; ++constant) {
    Extras e;
    e.program[0] = constant ? PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS : 0;
    e.operands.emplace_back(bias.data(), std::vector<int64_t>{N},
                            std::vector<int64_t>{1});
    e.post(PADDLE_ONEDNN_POST_BIAS, 0);
    e.bind(&mc.unranked);
    std::fill(c.begin(), c.end(), 0.0f);
    _mlir_ciface_paddle_onednn_matmul_bf16(
        &ma.unranked, &mb.unranked, &mc.unranked, e.slots[0], e.slots[1],
        e.slots[2], e.slots[3], &e.stateRef.unranked, &e.programRef.unranked,
        pack({0, 1}), pack({1, 0}), pack({0, 1}), 0);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double y = bias[n], scale = std::fabs(bias[n]);
        for (int64_t k = 0; k < K; ++k) {
          double p = double(a.values[m * K + k]) * b.values[n * K + k];
          y += p;
          scale += std::fabs(p);
        }
        ASSERT_NEAR(c[m * N + n], y, 1e-5 * scale) << m << " " << n;
      }
  }
}

TEST(OneDnn, BF16Conv2DSumsExactProductsInF32) {
  // A grouped and a plain convolution on bf16 input and filter, f32 output,
  // against the float64 sum over the zero-padded input.
  const int64_t C = 8, H = 9, W = 7, F = 6, KH = 3, KW = 3;
  for (int64_t groups : {1, 2}) {
    int64_t cg = C / groups, fg = F / groups;
    BF16Data in(C * H * W, [](size_t i) { return float(std::sin(0.7 * i)); });
    BF16Data filter(F * cg * KH * KW,
                    [](size_t i) { return float(std::cos(0.3 * i)); });
    std::vector<float> out(F * H * W);
    Extras e;
    Memref fallback(out.data(), {1}, {1});
    e.bind(&fallback.unranked);
    auto *inBits = in.bits.data(), *filterBits = filter.bits.data();
    if (groups == 1) {
      paddle_memref4d_bf16_t mi{
          inBits, inBits, 0, {1, C, H, W}, {C * H * W, H * W, W, 1}};
      paddle_memref4d_bf16_t mf{filterBits,
                                filterBits,
                                0,
                                {F, C, KH, KW},
                                {C * KH * KW, KH * KW, KW, 1}};
      paddle_memref4d_f32_t mo = dense4d(out, {1, F, H, W});
      _mlir_ciface_paddle_onednn_conv2d_bf16(
          &mi, &mf, &mo, e.slots[0], e.slots[1], e.slots[2], e.slots[3],
          &e.stateRef.unranked, &e.programRef.unranked, 1, 1, 1, 1, 1, 1, 1, 1,
          0);
    } else {
      paddle_memref5d_bf16_t mi{inBits,
                                inBits,
                                0,
                                {1, groups, cg, H, W},
                                {C * H * W, cg * H * W, H * W, W, 1}};
      paddle_memref5d_bf16_t mf{
          filterBits,
          filterBits,
          0,
          {groups, fg, cg, KH, KW},
          {fg * cg * KH * KW, cg * KH * KW, KH * KW, KW, 1}};
      float *o = out.data();
      paddle_memref5d_f32_t mo{
          o, o, 0, {1, groups, fg, H, W}, {F * H * W, fg * H * W, H * W, W, 1}};
      _mlir_ciface_paddle_onednn_conv2d_grouped_bf16(
          &mi, &mf, &mo, e.slots[0], e.slots[1], e.slots[2], e.slots[3],
          &e.stateRef.unranked, &e.programRef.unranked, 1, 1, 1, 1, 1, 1, 1, 1,
          0);
    }
    for (int64_t f = 0; f < F; ++f)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) {
          int64_t g = f / fg;
          double sum = 0, scale = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                int64_t iy = y + i - 1, ix = x + j - 1;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                  continue;
                double p = double(in.values[((g * cg + c) * H + iy) * W + ix]) *
                           filter.values[((f * cg + c) * KH + i) * KW + j];
                sum += p;
                scale += std::fabs(p);
              }
          ASSERT_NEAR(out[(f * H + y) * W + x], sum, 1e-5 * scale + 1e-30)
              << groups << " " << f << " " << y << " " << x;
        }
  }
}

TEST(OneDnn, BadProgramEndsTheCall) {
  // A per-channel operand of the wrong length is an error, not a read past
  // its end.
  static std::vector<float> shortBias(1);
  static ConvCase t;
  auto body = [](void **) {
    Extras e;
    e.operands.emplace_back(shortBias.data(), std::vector<int64_t>{1},
                            std::vector<int64_t>{1});
    e.post(PADDLE_ONEDNN_POST_ADD, 0);
    conv2d(t.mi, t.mw, t.mo, 1, 1, 1, 1, 0, e);
  };
  std::string message = invokeError(+body).second;
  EXPECT_NE(message.find("a per-channel operand has 1 elements for 2 "
                         "channels"),
            std::string::npos)
      << message;
}

/// f(x: tensor<?xf32>) -> tensor<?xf32> that calls the matmul kernel with
/// a dim map naming a dim the operand lacks: the kernel must end the call.
void badMapPacked(void **args) {
  float *x = *(float **)args[1];
  Memref m(x, {2, 2}, {2, 1});
  matmul(m, m, m, pack({0, 5}), pack({0, 1}), pack({0, 1}), 0);
}

TEST(OneDnn, InvalidCallEndsInvokeWithAnError) {
  auto [code, message] = invokeError(badMapPacked);
  EXPECT_EQ(code, PADDLE_INTERNAL);
  EXPECT_NE(message.find("oneDNN matmul failed: a dim map names dim 5 of a "
                         "rank-2 operand"),
            std::string::npos)
      << message;
}

} // namespace
