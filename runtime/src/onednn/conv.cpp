//===- conv.cpp - oneDNN convolutions for compiled code -------------------===//
//
// paddle_onednn_conv2d(_bf16) and paddle_onednn_conv2d_grouped(_bf16): a
// cached oneDNN convolution with the layouts it chose and the reorders from
// and to the caller's buffers, Winograd where the compiler asks for it
// (its weights transformed by winograd_weights.h), and a fused 1x1 conv
// followed by a depthwise one, run in strips.
//
//===----------------------------------------------------------------------===//

#include "onednn/common.h"
#include "winograd_weights.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace paddle::onednn {
namespace {

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

Cache<ConvEntry> &convCache() {
  static Cache<ConvEntry> cache;
  return cache;
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

/// Merges dims `d` and `d + 1` of a strided view into one when they are
/// contiguous with each other (the channel dims of the grouped form).
bool mergeable(const int64_t *sizes, const int64_t *strides, int d) {
  return strides[d] == strides[d + 1] * sizes[d + 1];
}

/// paddle_onednn_conv2d(_bf16): input and filter of `in` elements
/// (descriptors `In`), output f32.
template <typename In>
void conv2dCall(const In *input, const In *filter,
                const paddle_memref4d_f32_t *output, const Operands &operands,
                const paddle_unranked_memref_t *state,
                const paddle_unranked_memref_t *program, const int64_t *params,
                int64_t accumulate, memory::data_type in) {
  guarded("conv2d", [&] {
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
  guarded("grouped conv2d", [&] {
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
}

} // namespace
} // namespace paddle::onednn

using namespace paddle::onednn;

extern "C" {

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

} // extern "C"
