//===- Epilogue.cpp - elementwise epilogues as oneDNN post-ops ------------===//
//
// An elementwise linalg.generic after a matmul or conv that only reads its
// output (per-channel bias, scale or shift, a residual add, relu, clip,
// tanh, sigmoid, GELU) fuses into the library call as oneDNN post-ops
// (paddle_runtime/onednn.h).
// matchEpilogue finds the generic and classifies its body; the pass
// (UseOneDnn.cpp) encodes the post-ops into the call's program.
//
//===----------------------------------------------------------------------===//

#include "OneDnnMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "paddle_runtime/onednn.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;

namespace mlir::paddle::onednn {

//===----------------------------------------------------------------------===//
// Epilogues: an elementwise linalg.generic after the op as oneDNN post-ops.
//===----------------------------------------------------------------------===//

namespace {

/// What the generic's inputs are to the epilogue.
enum class InputRole { Result, Channel, Residual, Other };

struct EpilogueMatcher {
  linalg::GenericOp generic;
  Value result;                     // block argument: the op's result
  DenseMap<Value, InputRole> roles; // block argument -> role
  DenseMap<Value, Value> buffers;   // block argument -> memref
  SmallVector<Value> operands;      // extra operands (per-channel)
  Value residual;

  static std::optional<double> constant(Value v) {
    FloatAttr attr;
    if (matchPattern(v, m_Constant(&attr)))
      return attr.getValueAsDouble();
    return std::nullopt;
  }
  static bool near(std::optional<double> v, double expected) {
    return v && std::abs(*v - expected) <= 1e-6 * std::abs(expected);
  }

  int64_t operandOf(Value arg) {
    Value buffer = buffers.lookup(arg);
    auto *it = llvm::find(operands, buffer);
    if (it != operands.end())
      return it - operands.begin();
    operands.push_back(buffer);
    return operands.size() - 1;
  }

  /// `v` without the additions of constant zeros around it.
  static Value withoutZeroAdds(Value v) {
    while (auto add = v.getDefiningOp<arith::AddFOp>()) {
      std::optional<double> l = constant(add.getLhs()),
                            r = constant(add.getRhs());
      if (r && *r == 0)
        v = add.getLhs();
      else if (l && *l == 0)
        v = add.getRhs();
      else
        break;
    }
    return v;
  }

  /// `u` (= f(x) for the op's result x) as post-ops, or failure.
  FailureOr<SmallVector<PostOp>> classify(Value u) {
    if (u == result)
      return SmallVector<PostOp>{};
    if (!u.getType().isF32())
      return failure();
    Operation *op = u.getDefiningOp();
    if (!op || op->getBlock() != generic.getBlock())
      return failure();
    auto then = [&](Value a, PostOp next) -> FailureOr<SmallVector<PostOp>> {
      FailureOr<SmallVector<PostOp>> ops = classify(a);
      if (failed(ops))
        return failure();
      append(*ops, next);
      return ops;
    };
    auto role = [&](Value v) {
      auto it = roles.find(v);
      return it == roles.end() ? InputRole::Other : it->second;
    };
    // Binary ops with a per-channel or residual operand, or a constant.
    if (isa<arith::AddFOp, arith::MulFOp, arith::SubFOp, arith::DivFOp>(op)) {
      Value l = op->getOperand(0), r = op->getOperand(1);
      bool commutes = isa<arith::AddFOp, arith::MulFOp>(op);
      for (int swap = 0; swap < (commutes ? 2 : 1); ++swap) {
        Value a = swap ? r : l, b = swap ? l : r;
        if (role(b) == InputRole::Channel && !isa<arith::DivFOp>(op)) {
          int64_t kind = isa<arith::AddFOp>(op)   ? PADDLE_ONEDNN_POST_ADD
                         : isa<arith::MulFOp>(op) ? PADDLE_ONEDNN_POST_MUL
                                                  : PADDLE_ONEDNN_POST_SUB;
          return then(a, {kind, operandOf(b)});
        }
        // The residual may carry a zero bias of its own (another conv's
        // folded batch norm before training): r + 0.0 differs from r at
        // most in the sign of a zero.
        Value summand = withoutZeroAdds(b);
        if (role(summand) == InputRole::Residual && isa<arith::AddFOp>(op)) {
          if (residual && residual != buffers.lookup(summand))
            return failure();
          residual = buffers.lookup(summand);
          return then(a, {PADDLE_ONEDNN_POST_SUM});
        }
        if (std::optional<double> c = constant(b)) {
          if (isa<arith::AddFOp>(op))
            return then(a, {PADDLE_ONEDNN_POST_LINEAR, -1, 1, *c});
          if (isa<arith::SubFOp>(op))
            return then(a, {PADDLE_ONEDNN_POST_LINEAR, -1, 1, -*c});
          if (isa<arith::MulFOp>(op)) {
            // A gelu is a product too; try it before a plain scale.
            if (auto gelu = matchGelu(u); succeeded(gelu))
              return gelu;
            return then(a, {PADDLE_ONEDNN_POST_LINEAR, -1, *c, 0});
          }
          if (*c != 0)
            return then(a, {PADDLE_ONEDNN_POST_LINEAR, -1, 1 / *c, 0});
        }
      }
      if (isa<arith::SubFOp>(op))
        if (std::optional<double> c = constant(l))
          return then(r, {PADDLE_ONEDNN_POST_LINEAR, -1, -1, *c});
      if (isa<arith::DivFOp>(op) && near(constant(l), 1.0))
        if (auto sigmoid = matchSigmoid(r); succeeded(sigmoid))
          return sigmoid;
      if (isa<arith::MulFOp>(op))
        return matchGelu(u);
      return failure();
    }
    if (auto neg = dyn_cast<arith::NegFOp>(op))
      return then(neg.getOperand(), {PADDLE_ONEDNN_POST_LINEAR, -1, -1, 0});
    if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
            arith::MinNumFOp>(op)) {
      bool max = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
      for (int swap = 0; swap < 2; ++swap) {
        Value a = op->getOperand(swap), b = op->getOperand(1 - swap);
        std::optional<double> c = constant(b);
        if (!c)
          continue;
        if (max && *c == 0)
          return then(a, {PADDLE_ONEDNN_POST_RELU});
        return then(a, {PADDLE_ONEDNN_POST_CLIP, -1,
                        max ? *c : -std::numeric_limits<float>::max(),
                        max ? std::numeric_limits<float>::max() : *c});
      }
      return failure();
    }
    if (auto tanh = dyn_cast<math::TanhOp>(op))
      return then(tanh.getOperand(), {PADDLE_ONEDNN_POST_TANH});
    return failure();
  }

  /// 1 + exp(-a) (either order) as sigmoid(a), given the divisor.
  FailureOr<SmallVector<PostOp>> matchSigmoid(Value d) {
    auto add = d.getDefiningOp<arith::AddFOp>();
    if (!add)
      return failure();
    for (int swap = 0; swap < 2; ++swap) {
      if (!near(constant(add->getOperand(swap)), 1.0))
        continue;
      auto exp = add->getOperand(1 - swap).getDefiningOp<math::ExpOp>();
      auto neg = exp ? exp.getOperand().getDefiningOp<arith::NegFOp>()
                     : arith::NegFOp();
      if (!neg)
        return failure();
      FailureOr<SmallVector<PostOp>> ops = classify(neg.getOperand());
      if (failed(ops))
        return failure();
      append(*ops, {PADDLE_ONEDNN_POST_SIGMOID});
      return ops;
    }
    return failure();
  }

  /// Flattens a product of f32 values into a constant and factors.
  static void factors(Value v, double &k, SmallVector<Value> &out) {
    if (std::optional<double> c = constant(v)) {
      k *= *c;
      return;
    }
    if (auto mul = v.getDefiningOp<arith::MulFOp>()) {
      factors(mul.getLhs(), k, out);
      factors(mul.getRhs(), k, out);
      return;
    }
    if (auto div = v.getDefiningOp<arith::DivFOp>())
      if (std::optional<double> c = constant(div.getRhs()); c && *c != 0) {
        factors(div.getLhs(), k, out);
        k /= *c;
        return;
      }
    out.push_back(v);
  }

  /// The polynomial (degree <= 3) of `v` in `a`, or nullopt.
  static std::optional<std::array<double, 4>> poly(Value v, Value a) {
    if (v == a)
      return std::array<double, 4>{0, 1, 0, 0};
    if (std::optional<double> c = constant(v))
      return std::array<double, 4>{*c, 0, 0, 0};
    Operation *op = v.getDefiningOp();
    if (!op || !isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
                    arith::NegFOp>(op))
      return std::nullopt;
    if (isa<arith::NegFOp>(op)) {
      auto p = poly(op->getOperand(0), a);
      if (p)
        for (double &x : *p)
          x = -x;
      return p;
    }
    auto l = poly(op->getOperand(0), a), r = poly(op->getOperand(1), a);
    if (!l || !r)
      return std::nullopt;
    std::array<double, 4> out{0, 0, 0, 0};
    if (isa<arith::AddFOp, arith::SubFOp>(op)) {
      double sign = isa<arith::SubFOp>(op) ? -1 : 1;
      for (int i = 0; i < 4; ++i)
        out[i] = (*l)[i] + sign * (*r)[i];
      return out;
    }
    if (isa<arith::DivFOp>(op)) {
      if ((*r)[1] || (*r)[2] || (*r)[3] || !(*r)[0])
        return std::nullopt;
      for (int i = 0; i < 4; ++i)
        out[i] = (*l)[i] / (*r)[0];
      return out;
    }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        if ((*l)[i] * (*r)[j] != 0) {
          if (i + j > 3)
            return std::nullopt;
          out[i + j] += (*l)[i] * (*r)[j];
        }
    return out;
  }

  /// k * a * (1 + erf(a / sqrt 2)) with k = 1/2 (gelu), or the tanh form
  /// 1 + tanh(sqrt(2 / pi) * (a + 0.044715 a^3)).
  FailureOr<SmallVector<PostOp>> matchGelu(Value u) {
    double k = 1;
    SmallVector<Value> fs;
    factors(u, k, fs);
    if (fs.size() != 2 || !near(k, 0.5))
      return failure();
    for (int swap = 0; swap < 2; ++swap) {
      Value a = fs[swap];
      auto add = fs[1 - swap].getDefiningOp<arith::AddFOp>();
      if (!add)
        continue;
      for (int side = 0; side < 2; ++side) {
        if (!near(constant(add->getOperand(side)), 1.0))
          continue;
        Operation *inner = add->getOperand(1 - side).getDefiningOp();
        if (!inner || !isa<math::ErfOp, math::TanhOp>(inner))
          continue;
        auto p = poly(inner->getOperand(0), a);
        if (!p || (*p)[0] != 0 || (*p)[2] != 0)
          continue;
        int64_t kind;
        if (isa<math::ErfOp>(inner) && near((*p)[1], M_SQRT1_2) && (*p)[3] == 0)
          kind = PADDLE_ONEDNN_POST_GELU_ERF;
        else if (isa<math::TanhOp>(inner) &&
                 near((*p)[1], std::sqrt(2 / M_PI)) &&
                 near((*p)[3], std::sqrt(2 / M_PI) * 0.044715))
          kind = PADDLE_ONEDNN_POST_GELU_TANH;
        else
          continue;
        FailureOr<SmallVector<PostOp>> ops = classify(a);
        if (failed(ops))
          return failure();
        append(*ops, {kind});
        return ops;
      }
    }
    return failure();
  }

  /// Appends `next`, merging scalar affine steps and clamps; identity
  /// steps vanish.
  static void append(SmallVector<PostOp> &ops, PostOp next) {
    if (next.kind == PADDLE_ONEDNN_POST_LINEAR) {
      if (!ops.empty() && ops.back().kind == PADDLE_ONEDNN_POST_LINEAR) {
        PostOp &last = ops.back();
        last.beta = next.alpha * last.beta + next.beta;
        last.alpha *= next.alpha;
      } else {
        ops.push_back(next);
      }
      if (ops.back().alpha == 1 && ops.back().beta == 0)
        ops.pop_back();
      return;
    }
    if (next.kind == PADDLE_ONEDNN_POST_CLIP && !ops.empty()) {
      PostOp &last = ops.back();
      double lo = last.kind == PADDLE_ONEDNN_POST_RELU ? 0 : last.alpha;
      bool clamp = last.kind == PADDLE_ONEDNN_POST_RELU ||
                   last.kind == PADDLE_ONEDNN_POST_CLIP;
      if (clamp) {
        double hi = last.kind == PADDLE_ONEDNN_POST_RELU
                        ? std::numeric_limits<float>::max()
                        : last.beta;
        double newLo = std::max(lo, next.alpha),
               newHi = std::min(hi, next.beta);
        if (newLo <= newHi) {
          last = {PADDLE_ONEDNN_POST_CLIP, -1, newLo, newHi};
          return;
        }
      }
    }
    ops.push_back(next);
  }
};

} // namespace

/// The elementwise linalg.generic reading `op`'s output `out` as its only
/// other reader, expressible as post-ops; `channel` is the dim of `out`
/// per-channel operands follow. `inputs` are the op's inputs, which the
/// fused output must not overlap. `out` may also be a reshape of the op's
/// output `written` (a grouped conv's [N, G, F, H, W] collapsed to NCHW),
/// the only other user of `written`.
std::optional<Epilogue> matchEpilogue(Operation *op, Value out, Operation *init,
                                      unsigned channel, ValueRange inputs,
                                      Value written) {
  // The next op with memory effects (trace calls and allocations of
  // operands known before the op aside) is the generic.
  SmallVector<Operation *> allocations;
  auto knownBefore = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def ? def->getBlock() == op->getBlock() && def->isBeforeInBlock(op)
               : v.getParentRegion()->isAncestor(op->getParentRegion());
  };
  // A fill of a buffer apart from the op's operands may lie in between too
  // (the fused call runs after it): the next conv's zero padding, whose
  // interior the epilogue writes.
  auto fillApart = [&](Operation *o) {
    auto fill = dyn_cast<linalg::FillOp>(o);
    auto apart = [&](Value v) {
      return !mayAlias(v, fill.getOutputs().front());
    };
    return fill && fill.hasPureBufferSemantics() &&
           llvm::all_of(op->getOperands(), apart) &&
           llvm::all_of(inputs, apart);
  };
  Operation *next = op->getNextNode();
  while (next) {
    if (onlyAllocates(next) && llvm::all_of(next->getOperands(), knownBefore))
      allocations.push_back(next);
    else if (!isTraceCall(next) && !isMemoryEffectFree(next) &&
             !fillApart(next))
      break;
    next = next->getNextNode();
  }
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return std::nullopt;
  // out's other users ran before the op, or, where the generic writes out
  // in place, read its result after it.
  // Users nested in later ops count as those ops: a conv's explicit
  // padding reads its input with memref.load in a generic's body.
  bool inPlace = generic.getDpsInits().front() == out;
  Operation *view = out == written ? nullptr : out.getDefiningOp();
  if (view && !llvm::all_of(written.getUsers(), [&](Operation *user) {
        return user == op || user == init || user == view;
      }))
    return std::nullopt;
  for (Operation *user : out.getUsers()) {
    if (user == op || user == init || user == generic)
      continue;
    Operation *at = op->getBlock()->findAncestorOpInBlock(*user);
    if (!at || at == op || at == generic)
      return std::nullopt;
    if (!at->isBeforeInBlock(op) && !(inPlace && generic->isBeforeInBlock(at)))
      return std::nullopt;
  }
  auto outType = cast<MemRefType>(out.getType());
  OpOperand *initOperand = generic.getDpsInitOperand(0);
  Value output = initOperand->get();
  auto outputType = cast<MemRefType>(output.getType());
  if (!generic.getMatchingIndexingMap(initOperand).isIdentity() ||
      outputType.getShape() != outType.getShape() ||
      !outType.hasStaticShape() || !outputType.getElementType().isF32() ||
      !outputType.isLastDimUnitStride() ||
      !generic.getMatchingBlockArgument(initOperand).use_empty())
    return std::nullopt;
  // The generic's output may be out itself (in place) or a buffer apart
  // from the op's inputs (the fused call writes it while reading them).
  if (output != out)
    for (Value in : inputs)
      if (mayAlias(output, in))
        return std::nullopt;
  EpilogueMatcher m;
  m.generic = generic;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    Value arg = generic.getMatchingBlockArgument(input);
    AffineMap map = generic.getMatchingIndexingMap(input);
    auto type = dyn_cast<MemRefType>(input->get().getType());
    m.buffers[arg] = input->get();
    InputRole role = InputRole::Other;
    if (type && type.getElementType().isF32()) {
      if (input->get() == out) {
        role = map.isIdentity() && !m.result ? InputRole::Result
                                             : InputRole::Other;
        if (role == InputRole::Result)
          m.result = arg;
      } else if (map.isIdentity() && type.getShape() == outType.getShape() &&
                 (sameBuffer(input->get(), output) ||
                  !mayAlias(input->get(), output))) {
        role = InputRole::Residual;
      } else if (type.hasStaticShape() && !mayAlias(input->get(), output)) {
        // One result indexes the channel dim, the others unit dims.
        int channels = 0;
        bool unitElsewhere = true;
        for (auto [i, e] : llvm::enumerate(map.getResults())) {
          auto d = dyn_cast<AffineDimExpr>(e);
          if (d && d.getPosition() == channel &&
              type.getDimSize(i) == outType.getDimSize(channel))
            ++channels;
          else if (type.getDimSize(i) != 1)
            unitElsewhere = false;
        }
        auto [strides, offset] = type.getStridesAndOffset();
        (void)offset;
        bool unitStride = true;
        for (auto [i, size] : llvm::enumerate(type.getShape()))
          if (size != 1 && strides[i] != 1)
            unitStride = false;
        if (channels == 1 && unitElsewhere && unitStride)
          role = InputRole::Channel;
      }
    }
    if (role == InputRole::Other && !arg.use_empty())
      return std::nullopt;
    m.roles[arg] = role;
  }
  if (!m.result)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(generic.getBlock()->getTerminator());
  FailureOr<SmallVector<PostOp>> ops = m.classify(yield.getValues().front());
  if (failed(ops) || ops->size() > PADDLE_ONEDNN_MAX_POST_OPS ||
      m.operands.size() > PADDLE_ONEDNN_MAX_OPERANDS)
    return std::nullopt;
  // oneDNN 2.6's JIT kernels apply one set of scalars to all eltwise
  // post-ops of one algorithm (measured: linear x4, clip, linear x0.25
  // scaled by 4 twice), so a chain repeating a kind with other scalars
  // stays unfused.
  for (auto [i, a] : llvm::enumerate(*ops))
    for (const PostOp &b : ArrayRef<PostOp>(*ops).drop_front(i + 1))
      if (a.kind == b.kind && a.operand < 0 &&
          (a.alpha != b.alpha || a.beta != b.beta))
        return std::nullopt;
  // A first per-channel add is the primitive's bias.
  if (!ops->empty() && ops->front().kind == PADDLE_ONEDNN_POST_ADD)
    ops->front().kind = PADDLE_ONEDNN_POST_BIAS;
  // The residual is summed from the output: it must be the output or lie
  // apart from it (it is copied there first). Per-channel operands and the
  // residual must survive the copy.
  if (m.residual && !sameBuffer(m.residual, output))
    for (Value v : m.operands)
      if (mayAlias(v, output))
        return std::nullopt;
  // The fused call, at the op, writes the generic's output: allocate it
  // first.
  for (Operation *allocation : allocations)
    allocation->moveBefore(op);
  return Epilogue{generic, *ops, m.operands, m.residual, output};
}

} // namespace mlir::paddle::onednn
