//===- program.cpp - Fused post-op programs and operand descriptors -------===//
//
// How the oneDNN kernels of the runtime read what compiled code passes
// them: the fused epilogue program paddle-use-onednn encodes (onednn.h) as
// oneDNN post-op attributes, their per-channel operands and cache key
// parts; the matmul operands' logical views of their memref descriptors;
// the caller's strided buffers as oneDNN memory descriptors; and the ending
// of a failed call.
//
//===----------------------------------------------------------------------===//

#include "onednn/common.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace paddle::onednn {

static double doubleOf(int64_t bits) {
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

/// Reads the ranked descriptor behind `m` (of `type` elements) and orders
/// its dims by `map` (onednn.h); absent dims are broadcasts of size 1.
Logical logical(const paddle_unranked_memref_t &m, int64_t map, int64_t rank,
                memory::data_type type) {
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
                   memory::data_type type) {
  return memory::desc(sizes, type, strides);
}

/// A dense row-major descriptor of `sizes`.
memory::desc dense(const Dims &sizes, memory::data_type type) {
  return memory::desc(sizes, type, plainTag(sizes.size()));
}

/// Ends the call with `error`. Called from the extern "C" functions after
/// every C++ object of the failed call is destroyed: paddle_runtime_fail
/// longjmps, which would skip their destructors.
[[noreturn]] void fail(const char *error) {
  paddle_runtime_fail(PADDLE_INTERNAL, error);
  // paddle_runtime_fail does not return (it unwinds or aborts).
  std::abort();
}

} // namespace paddle::onednn
