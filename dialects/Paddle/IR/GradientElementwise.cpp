//===- GradientElementwise.cpp - gradient rules of elementwise ops --------===//
//
// Unary ops multiply the cotangent by the derivative, written with the op's
// own result where that is cheaper (exp, tanh, sigmoid, sqrt). Broadcasting
// binary ops un-broadcast each operand gradient. Rules of piecewise-constant
// ops (floor, ceil, round, sign) give no gradient, which the pass reads as 0.
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/GradientUtils.h"

#include <cmath>

namespace mlir::paddle {
namespace {

using Grads = SmallVectorImpl<Value>;

/// Unary rules: `gradient(g, x, y)` builds the operand gradient from the
/// cotangent `g`, the operand `x` and the result `y`.
template <typename OpTy, typename Fn>
LogicalResult unary(OpTy op, GradBuilder &gb, ArrayRef<Value> rg, Grads &og,
                    Fn gradient) {
  og.push_back(gradient(rg[0], op.getX(), op.getResult()));
  return success();
}

/// Un-broadcasts the two operand gradients of a binary op (null stays null).
template <typename OpTy>
LogicalResult binary(OpTy op, GradBuilder &gb, Grads &og, Value gl, Value gr) {
  for (auto [g, operand] : {std::pair{gl, op.getLhs()}, {gr, op.getRhs()}}) {
    if (!g) {
      og.push_back(nullptr);
      continue;
    }
    FailureOr<Value> u = gb.unbroadcast(g, operand);
    if (failed(u))
      return failure();
    og.push_back(*u);
  }
  return success();
}

} // namespace

// Argument-dependent lookup finds these from GradientModel<OpTy>; they are
// static so each stays private to this file.
static LogicalResult gradientOf(NegOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return unary(op, gb, rg, og,
               [&](Value g, Value, Value) { return gb.neg(g); });
}

static LogicalResult gradientOf(AbsOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return unary(op, gb, rg, og, [&](Value g, Value x, Value) {
    return gb.mul(g, SignOp::create(gb.b, gb.loc, x));
  });
}

static LogicalResult gradientOf(ExpOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return unary(op, gb, rg, og,
               [&](Value g, Value, Value y) { return gb.mul(g, y); });
}

static LogicalResult gradientOf(LogOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return unary(op, gb, rg, og,
               [&](Value g, Value x, Value) { return gb.div(g, x); });
}

static LogicalResult gradientOf(SqrtOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  // d sqrt(x) = 1 / (2 sqrt(x))
  return unary(op, gb, rg, og, [&](Value g, Value, Value y) {
    return gb.div(gb.mul(g, 0.5), y);
  });
}

static LogicalResult gradientOf(RsqrtOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  // d x^-1/2 = -1/2 x^-3/2 = -1/2 y / x
  return unary(op, gb, rg, og, [&](Value g, Value x, Value y) {
    return gb.div(gb.mul(gb.mul(g, -0.5), y), x);
  });
}

static LogicalResult gradientOf(TanhOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return unary(op, gb, rg, og, [&](Value g, Value, Value y) {
    return gb.mul(g, gb.sub(gb.scalar(y, 1.0), gb.mul(y, y)));
  });
}

static LogicalResult gradientOf(SigmoidOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  return unary(op, gb, rg, og, [&](Value g, Value, Value y) {
    return gb.mul(gb.mul(g, y), gb.sub(gb.scalar(y, 1.0), y));
  });
}

static LogicalResult gradientOf(ReluOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return unary(op, gb, rg, og, [&](Value g, Value x, Value) {
    Value positive = gb.compare(CompareDirection::GT, x, gb.scalar(x, 0.0));
    return gb.select(positive, g, gb.scalar(g, 0.0));
  });
}

static LogicalResult gradientOf(ErfOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  // d erf(x) = 2 / sqrt(pi) * exp(-x^2)
  return unary(op, gb, rg, og, [&](Value g, Value x, Value) {
    Value e = ExpOp::create(gb.b, gb.loc, gb.neg(gb.mul(x, x)));
    return gb.mul(g, gb.mul(e, 2.0 / std::sqrt(M_PI)));
  });
}

static LogicalResult gradientOf(SinOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return unary(op, gb, rg, og, [&](Value g, Value x, Value) {
    return gb.mul(g, CosOp::create(gb.b, gb.loc, x));
  });
}

static LogicalResult gradientOf(CosOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return unary(op, gb, rg, og, [&](Value g, Value x, Value) {
    return gb.neg(gb.mul(g, SinOp::create(gb.b, gb.loc, x)));
  });
}

static LogicalResult gradientOf(GeluOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  Value g = rg[0], x = op.getX();
  OpBuilder &b = gb.b;
  if (!op.getApproximate()) {
    // d [x Phi(x)] = Phi(x) + x phi(x)
    Value phiCdf = gb.mul(
        gb.add(gb.scalar(x, 1.0),
               ErfOp::create(b, gb.loc, gb.mul(x, 1.0 / std::sqrt(2.0)))),
        0.5);
    Value pdf = gb.mul(ExpOp::create(b, gb.loc, gb.mul(gb.mul(x, x), -0.5)),
                       1.0 / std::sqrt(2.0 * M_PI));
    og.push_back(gb.mul(g, gb.add(phiCdf, gb.mul(x, pdf))));
    return success();
  }
  // y = 0.5 x (1 + t), t = tanh(c (x + a x^3)):
  // dy = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)
  const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
  Value x2 = gb.mul(x, x);
  Value inner = gb.mul(gb.add(x, gb.mul(gb.mul(x2, x), a)), c);
  Value t = TanhOp::create(b, gb.loc, inner);
  Value one = gb.scalar(x, 1.0);
  Value left = gb.mul(gb.add(one, t), 0.5);
  Value dInner = gb.mul(gb.add(one, gb.mul(x2, 3.0 * a)), c);
  Value right =
      gb.mul(gb.mul(gb.mul(x, 0.5), gb.sub(one, gb.mul(t, t))), dInner);
  og.push_back(gb.mul(g, gb.add(left, right)));
  return success();
}

/// floor, ceil, round, sign: piecewise constant, so the gradient is zero.
template <typename OpTy>
static LogicalResult zeroGradient(OpTy, GradBuilder &, ArrayRef<Value>,
                                  Grads &og) {
  og.push_back(nullptr);
  return success();
}
static LogicalResult gradientOf(FloorOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return zeroGradient(op, gb, rg, og);
}
static LogicalResult gradientOf(CeilOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return zeroGradient(op, gb, rg, og);
}
static LogicalResult gradientOf(RoundOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return zeroGradient(op, gb, rg, og);
}
static LogicalResult gradientOf(SignOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return zeroGradient(op, gb, rg, og);
}

static LogicalResult gradientOf(AddOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return binary(op, gb, og, rg[0], rg[0]);
}

static LogicalResult gradientOf(SubOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return binary(op, gb, og, rg[0], gb.neg(rg[0]));
}

static LogicalResult gradientOf(MulOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  Value g = rg[0];
  return binary(op, gb, og, gb.mul(g, op.getRhs()), gb.mul(g, op.getLhs()));
}

static LogicalResult gradientOf(DivOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  // d(l / r) = dl / r - (l / r) dr / r
  Value g = rg[0], r = op.getRhs();
  Value gl = gb.div(g, r);
  Value gr = gb.neg(gb.mul(gl, op.getResult()));
  return binary(op, gb, og, gl, gr);
}

static LogicalResult gradientOf(PowOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  // d l^r = r l^(r-1) dl + l^r ln(l) dr (the second term needs l > 0).
  Value g = rg[0], l = op.getLhs(), r = op.getRhs();
  Value rMinus1 = gb.sub(r, gb.scalar(r, 1.0));
  Value gl = gb.mul(g, gb.mul(r, PowOp::create(gb.b, gb.loc, l, rMinus1)));
  Value gr = gb.mul(g, gb.mul(op.getResult(), LogOp::create(gb.b, gb.loc, l)));
  return binary(op, gb, og, gl, gr);
}

static LogicalResult gradientOf(MaximumOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  // Ties send the gradient to the lhs.
  Value g = rg[0];
  Value lhsWins = gb.compare(CompareDirection::GE, op.getLhs(), op.getRhs());
  Value zero = gb.scalar(g, 0.0);
  return binary(op, gb, og, gb.select(lhsWins, g, zero),
                gb.select(lhsWins, zero, g));
}

static LogicalResult gradientOf(MinimumOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value g = rg[0];
  Value lhsWins = gb.compare(CompareDirection::LE, op.getLhs(), op.getRhs());
  Value zero = gb.scalar(g, 0.0);
  return binary(op, gb, og, gb.select(lhsWins, g, zero),
                gb.select(lhsWins, zero, g));
}

static LogicalResult gradientOf(RemOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  // rem(l, r) = l - r floor(l / r); floor is locally constant.
  Value g = rg[0];
  Value q = FloorOp::create(gb.b, gb.loc, gb.div(op.getLhs(), op.getRhs()));
  return binary(op, gb, og, g, gb.neg(gb.mul(g, q)));
}

static LogicalResult gradientOf(SelectOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value g = rg[0], c = op.getCond(), zero = gb.scalar(g, 0.0);
  og.push_back(nullptr);
  for (auto [operand, onTrue] :
       {std::pair{op.getOnTrue(), true}, {op.getOnFalse(), false}}) {
    Value picked = onTrue ? gb.select(c, g, zero) : gb.select(c, zero, g);
    FailureOr<Value> u = gb.unbroadcast(picked, operand);
    if (failed(u))
      return failure();
    og.push_back(*u);
  }
  return success();
}

static LogicalResult gradientOf(CastOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  // Only float -> float casts carry a gradient; the pass never asks for the
  // others (integer values are not differentiated).
  Type from = op.getX().getType().getElementType();
  Type to = op.getResult().getType().getElementType();
  if (!isa<FloatType>(from) || !isa<FloatType>(to)) {
    og.push_back(nullptr);
    return success();
  }
  og.push_back(gb.convert(rg[0], from));
  return success();
}

void attachElementwiseGradients(MLIRContext *ctx) {
  attachGradientModels<NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp,
                       SigmoidOp, ReluOp, ErfOp, SinOp, CosOp, GeluOp, FloorOp,
                       CeilOp, RoundOp, SignOp, AddOp, SubOp, MulOp, DivOp,
                       PowOp, MaximumOp, MinimumOp, RemOp, SelectOp, CastOp>(
      ctx);
}

} // namespace mlir::paddle
