//===- pool.cpp - oneDNN max pooling for compiled code --------------------===//
//
// paddle_onednn_max_pool2d: a cached oneDNN max pooling over the caller's
// plain NCHW or channels-last buffers.
//
//===----------------------------------------------------------------------===//

#include "onednn/common.h"

#include <string>

namespace paddle::onednn {
namespace {

Cache<dnnl::pooling_forward> &poolCache() {
  static Cache<dnnl::pooling_forward> cache;
  return cache;
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

} // namespace
} // namespace paddle::onednn

using namespace paddle::onednn;

extern "C" {

void _mlir_ciface_paddle_onednn_max_pool2d(
    const paddle_memref4d_f32_t *input, const paddle_memref4d_f32_t *output,
    int64_t kernelH, int64_t kernelW, int64_t strideH, int64_t strideW,
    int64_t padTop, int64_t padLeft, int64_t padBottom, int64_t padRight) {
  guarded("max pooling", [&] {
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
}

} // extern "C"
