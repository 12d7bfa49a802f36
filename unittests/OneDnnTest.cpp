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

#include <gtest/gtest.h>

#include <string>
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

/// Logical dim i -> memref dim, packed as onednn.h describes (-1: absent).
int64_t pack(std::vector<int64_t> dims) {
  int64_t packed = 0;
  for (size_t i = 0; i < dims.size(); ++i)
    packed |= (dims[i] + 1) << (4 * i);
  return packed;
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
  _mlir_ciface_paddle_onednn_matmul(&ma.unranked, &mw.unranked, &mc.unranked,
                                    pack({-1, 0, 1}), pack({0, 2, 1}),
                                    pack({0, 1, 2}), /*accumulate=*/1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        float expected = 1.0f;
        for (int64_t k = 0; k < K; ++k)
          expected += a[m * K + k] * w[(b * N + n) * K + k];
        EXPECT_FLOAT_EQ(c[(b * M + m) * N + n], expected) << b << m << n;
      }
}

TEST(OneDnn, CachesPrimitivesByProblem) {
  std::vector<float> a(6 * 7, 1.0f), b(7 * 8, 2.0f), c(6 * 8);
  Memref ma(a.data(), {6, 7}, {7, 1}), mb(b.data(), {7, 8}, {8, 1}),
      mc(c.data(), {6, 8}, {8, 1});
  int64_t map = pack({0, 1});
  _mlir_ciface_paddle_onednn_matmul(&ma.unranked, &mb.unranked, &mc.unranked,
                                    map, map, map, 0);
  int64_t created = paddle_onednn_primitives_created();
  for (int i = 0; i < 3; ++i)
    _mlir_ciface_paddle_onednn_matmul(&ma.unranked, &mb.unranked, &mc.unranked,
                                      map, map, map, 0);
  EXPECT_EQ(paddle_onednn_primitives_created(), created);
  EXPECT_FLOAT_EQ(c[0], 14.0f);
  // Accumulating is another primitive (a sum post-op).
  _mlir_ciface_paddle_onednn_matmul(&ma.unranked, &mb.unranked, &mc.unranked,
                                    map, map, map, 1);
  EXPECT_EQ(paddle_onednn_primitives_created(), created + 1);
  EXPECT_FLOAT_EQ(c[0], 28.0f);
}

TEST(OneDnn, EmptyContractionWritesZeros) {
  std::vector<float> c(6, 5.0f);
  float none = 0;
  Memref ma(&none, {2, 0}, {0, 1}), mb(&none, {0, 3}, {3, 1}),
      mc(c.data(), {2, 3}, {3, 1});
  int64_t map = pack({0, 1});
  _mlir_ciface_paddle_onednn_matmul(&ma.unranked, &mb.unranked, &mc.unranked,
                                    map, map, map, /*accumulate=*/1);
  EXPECT_EQ(c[0], 5.0f);
  _mlir_ciface_paddle_onednn_matmul(&ma.unranked, &mb.unranked, &mc.unranked,
                                    map, map, map, /*accumulate=*/0);
  for (float v : c)
    EXPECT_EQ(v, 0.0f);
}

TEST(OneDnn, Conv2DWithStridesAndDilations) {
  // in [1, 1, 5, 5] = 0..24, a 2x2 filter of ones, stride 2, dilation 2:
  // out[oh, ow] = sum of in[2 oh + 2 i, 2 ow + 2 j].
  std::vector<float> in(25), filter(4, 1.0f), out(4);
  for (int i = 0; i < 25; ++i)
    in[i] = i;
  paddle_memref4d_f32_t mi{
      in.data(), in.data(), 0, {1, 1, 5, 5}, {25, 25, 5, 1}};
  paddle_memref4d_f32_t mf{
      filter.data(), filter.data(), 0, {1, 1, 2, 2}, {4, 4, 2, 1}};
  paddle_memref4d_f32_t mo{
      out.data(), out.data(), 0, {1, 1, 2, 2}, {4, 4, 2, 1}};
  _mlir_ciface_paddle_onednn_conv2d(&mi, &mf, &mo, 2, 2, 2, 2, 0);
  for (int oh = 0; oh < 2; ++oh)
    for (int ow = 0; ow < 2; ++ow) {
      float expected = 0;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          expected += in[(2 * oh + 2 * i) * 5 + 2 * ow + 2 * j];
      EXPECT_FLOAT_EQ(out[oh * 2 + ow], expected);
    }
}

/// f(x: tensor<?xf32>) -> tensor<?xf32> that calls the matmul kernel with
/// a dim map naming a dim the operand lacks: the kernel must end the call.
void badMapPacked(void **args) {
  float *x = *(float **)args[1];
  Memref m(x, {2, 2}, {2, 1});
  _mlir_ciface_paddle_onednn_matmul(&m.unranked, &m.unranked, &m.unranked,
                                    pack({0, 5}), pack({0, 1}), pack({0, 1}),
                                    0);
}

TEST(OneDnn, InvalidCallEndsInvokeWithAnError) {
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
  paddle_status_t s = paddle_invoke(badMapPacked, &sig, &in, 1, &out);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(paddle_status_code(s), PADDLE_INTERNAL);
  std::string message = paddle_status_message(s);
  paddle_status_free(s);
  EXPECT_NE(message.find("oneDNN matmul failed: a dim map names dim 5 of a "
                         "rank-2 operand"),
            std::string::npos)
      << message;
}

} // namespace
