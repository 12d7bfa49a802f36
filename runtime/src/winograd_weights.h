//===- winograd_weights.h - 3x3 weights into oneDNN's Winograd layout -----===//
//
// oneDNN's reorder into its Winograd weights layouts (F(4x4, 3x3) and
// F(2x2, 3x3)) runs at a few hundred MB/s on power-of-two channel counts: a
// 512x512x3x3 filter took 92-103 ms on one thread of the Zen 4 VM. Its
// intermediate buffer is written in 36 streams 1 MiB apart, which share
// cache sets. It was 0.38 s of ResNet-50 b8's first call. The transform
// here computes the same values in the layout's order, 16 output channels
// at a time (17-18 ms for that filter).
//
// Neither the coefficients nor the layouts are oneDNN API (its header calls
// the layouts internal), so both are learned from oneDNN itself, once per
// process and kind of layout: oneDNN reorders a small descriptor of the
// same kind, unit filters among its weights give the coefficients, and the
// transform of the others must match oneDNN's. Where that fails (another
// layout, another oneDNN), oneDNN's reorder stays in use.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_WINOGRAD_WEIGHTS_H
#define PADDLE_RUNTIME_WINOGRAD_WEIGHTS_H

#include <oneapi/dnnl/dnnl.hpp>

namespace paddle::onednn {

/// Fills `out`, a buffer in the Winograd layout `to`, with the transform of
/// the 3x3 weights [OC, IC, 3, 3] at `weights` (element strides `strides`),
/// and returns true; returns false, writing nothing, where `to` is not a
/// layout this transform reproduces (the caller then runs oneDNN's reorder).
bool transformWinogradWeights(const float *weights,
                              const dnnl::memory::dims &sizes,
                              const dnnl::memory::dims &strides,
                              const dnnl::memory::desc &to, float *out);

} // namespace paddle::onednn

#endif // PADDLE_RUNTIME_WINOGRAD_WEIGHTS_H
