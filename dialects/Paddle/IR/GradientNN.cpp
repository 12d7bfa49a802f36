//===- GradientNN.cpp - gradient rules of matmul, conv and pooling --------===//
//
// matmul: the two products with the other operand transposed, summed over
// broadcast batch dims. conv2d and the poolings are expressed with existing
// paddle ops (conv2d, pad, slice, reshape, transpose, gather), so their
// gradients are differentiable again.
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/GradientUtils.h"

#include <limits>

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

/// The rules below build ops of one element type; a mixed-precision op
/// (bf16 operands, f32 result: what paddle-convert-precision writes, after
/// autodiff) has none.
static LogicalResult requireOneElementType(GradBuilder &gb, StringRef what,
                                           Value operand, Value result) {
  Type from = typeOf(operand).getElementType();
  Type to = typeOf(result).getElementType();
  if (from == to)
    return success();
  return emitError(gb.loc) << "gradient of " << what << " with " << from
                           << " operands and an " << to
                           << " result is not supported; differentiate "
                              "before converting precision";
}

static LogicalResult gradientOf(MatmulOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value l = op.getLhs(), r = op.getRhs(), g = rg[0];
  if (failed(requireOneElementType(gb, "matmul", l, op.getResult())))
    return failure();
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
  // A batched lhs times a matrix (a linear layer on [batch, seq, features]):
  // the matrix's gradient sums lhs^T * g over the batch. With the batch
  // folded into the rows it is one [K, B*M] x [B*M, N] product, rather than
  // B products of [K, M] x [M, N] and a sum of B [K, N] partials.
  Value lGradient = gb.matmul(*g2, transposeMatrix(gb, r2)), rGradient;
  RankedTensorType l2t = typeOf(l2);
  if (typeOf(r2).getRank() == 2 && l2t.getRank() > 2 && l2t.hasStaticShape() &&
      typeOf(*g2).hasStaticShape()) {
    int64_t rows = l2t.getNumElements() / l2t.getShape().back();
    FailureOr<Value> lRows = gb.reshape(l2, {rows, l2t.getShape().back()});
    FailureOr<Value> gRows =
        gb.reshape(*g2, {rows, typeOf(*g2).getShape().back()});
    if (failed(lRows) || failed(gRows))
      return failure();
    rGradient = gb.matmul(transposeMatrix(gb, *lRows), *gRows);
  } else {
    rGradient = gb.matmul(transposeMatrix(gb, l2), *g2);
  }
  for (auto [gradient, operand, original] :
       {std::tuple{lGradient, l2, l}, {rGradient, r2, r}}) {
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

/// Fails unless every value has a static shape (the conv and pool rules
/// compute paddings and reshapes from the sizes).
static LogicalResult requireStatic(GradBuilder &gb, StringRef what,
                                   ArrayRef<Value> values) {
  for (Value v : values)
    if (!typeOf(v).hasStaticShape())
      return emitError(gb.loc) << "gradient of " << what
                               << " needs static shapes, got " << v.getType();
  return success();
}

/// Pads (positive amounts) or slices off (negative amounts) dims 2 and 3.
static Value padOrCrop(GradBuilder &gb, Value x, int64_t top, int64_t left,
                       int64_t bottom, int64_t right) {
  RankedTensorType t = typeOf(x);
  auto pos = [](int64_t v) { return std::max<int64_t>(v, 0); };
  if (top > 0 || left > 0 || bottom > 0 || right > 0)
    x = gb.pad(x, {0, 0, pos(top), pos(left)}, {0, 0, pos(bottom), pos(right)});
  if (top < 0 || left < 0 || bottom < 0 || right < 0) {
    t = typeOf(x);
    x = gb.slice(x, {0, 0, pos(-top), pos(-left)},
                 {t.getDimSize(0), t.getDimSize(1),
                  t.getDimSize(2) - pos(-bottom),
                  t.getDimSize(3) - pos(-right)},
                 {1, 1, 1, 1});
  }
  return x;
}

/// `x` reversed along `axis` (a gather with constant indices, which has a
/// gradient rule itself).
static Value reverse(GradBuilder &gb, Value x, int64_t axis) {
  int64_t n = typeOf(x).getDimSize(axis);
  if (n == 1)
    return x;
  SmallVector<int64_t> idx;
  for (int64_t i = n - 1; i >= 0; --i)
    idx.push_back(i);
  return GatherOp::create(gb.b, gb.loc, x, gb.indices(idx),
                          gb.b.getI64IntegerAttr(axis));
}

static Value conv(GradBuilder &gb, Value x, Value w, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, int64_t groups) {
  OpBuilder &b = gb.b;
  return Conv2DOp::create(b, gb.loc, x, w, b.getDenseI64ArrayAttr(strides),
                          b.getDenseI64ArrayAttr({0, 0, 0, 0}),
                          b.getDenseI64ArrayAttr(dilations),
                          b.getI64IntegerAttr(groups));
}

/// The input gradient of a convolution with `strides`, `padding`,
/// `dilations` and `groups` whose input had spatial size `in`: a stride-1
/// convolution of the cotangent `g`, spread out by the strides and padded to
/// a "full" correlation, with `flipped` (the filter already flipped and with
/// its in/out channels swapped within each group).
static FailureOr<Value>
transposedConv(GradBuilder &gb, Value g, Value flipped, ArrayRef<int64_t> in,
               ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
               ArrayRef<int64_t> dilations, int64_t groups) {
  FailureOr<Value> spread =
      gb.interleaveZeros(g, {1, 1, strides[0], strides[1]});
  if (failed(spread))
    return failure();
  auto gs = typeOf(g).getShape(), ks = typeOf(flipped).getShape();
  int64_t low[2], high[2];
  for (int i = 0; i < 2; ++i) {
    int64_t span = dilations[i] * (ks[2 + i] - 1) + 1;
    int64_t len = (gs[2 + i] - 1) * strides[i] + 1;
    low[i] = span - 1 - padding[i];
    high[i] = in[i] + span - 1 - len - low[i];
  }
  Value gp = padOrCrop(gb, *spread, low[0], low[1], high[0], high[1]);
  return conv(gb, gp, flipped, {1, 1}, dilations, groups);
}

static LogicalResult gradientOf(Conv2DOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value x = op.getInput(), w = op.getFilter(), g = rg[0];
  if (failed(requireOneElementType(gb, "conv2d", x, op.getResult())))
    return failure();
  if (failed(requireStatic(gb, "conv2d", {x, w, g})))
    return failure();
  ArrayRef<int64_t> xs = typeOf(x).getShape(), ws = typeOf(w).getShape(),
                    gs = typeOf(g).getShape();
  int64_t n = xs[0], c = xs[1], o = ws[0], cg = ws[1];
  int64_t groups = static_cast<int64_t>(op.getGroups()), og2 = o / groups;
  ArrayRef<int64_t> st = op.getStrides(), pd = op.getPadding(),
                    dl = op.getDilations();
  int64_t k[2] = {ws[2], ws[3]}, in[2] = {xs[2], xs[3]},
          out[2] = {gs[2], gs[3]};

  // Input gradient: the filter with in/out channels swapped within each
  // group and flipped.
  FailureOr<Value> w5 = gb.reshape(w, {groups, og2, cg, k[0], k[1]});
  if (failed(w5))
    return failure();
  FailureOr<Value> wt =
      gb.reshape(gb.transpose(*w5, {0, 2, 1, 3, 4}), {c, og2, k[0], k[1]});
  if (failed(wt))
    return failure();
  Value wf = reverse(gb, reverse(gb, *wt, 2), 3);
  FailureOr<Value> gx =
      transposedConv(gb, g, wf, {in[0], in[1]}, st, pd, dl, groups);
  if (failed(gx))
    return failure();
  og.push_back(*gx);

  // Filter gradient: correlate the padded input with the cotangent, batch
  // as channels: strides and dilations trade places.
  Value xp = padOrCrop(gb, x, pd[0], pd[1], pd[2], pd[3]);
  int64_t hp = xs[2] + pd[0] + pd[2], wp = xs[3] + pd[1] + pd[3];
  FailureOr<Value> x5 = gb.reshape(xp, {n, groups, cg, hp, wp});
  if (failed(x5))
    return failure();
  FailureOr<Value> xr =
      gb.reshape(gb.transpose(*x5, {2, 1, 0, 3, 4}), {cg, groups * n, hp, wp});
  FailureOr<Value> g5 = gb.reshape(g, {n, groups, og2, out[0], out[1]});
  if (failed(xr) || failed(g5))
    return failure();
  FailureOr<Value> gk =
      gb.reshape(gb.transpose(*g5, {1, 2, 0, 3, 4}), {o, n, out[0], out[1]});
  if (failed(gk))
    return failure();
  Value dwT = conv(gb, *xr, *gk, dl, st, groups);
  // Rows past the last full window of the forward op do not contribute.
  RankedTensorType dt = typeOf(dwT);
  if (dt.getDimSize(2) != k[0] || dt.getDimSize(3) != k[1])
    dwT = gb.slice(dwT, {0, 0, 0, 0}, {cg, o, k[0], k[1]}, {1, 1, 1, 1});
  og.push_back(gb.transpose(dwT, {1, 0, 2, 3}));
  return success();
}

namespace {
/// The kernel windows of a pooling op as strided slices of its padded input:
/// window element (i, j) of every output position is
/// `slice(padded, [0, 0, i, j], ..., stride = strides)`.
struct PoolWindows {
  RankedTensorType paddedType;
  ArrayRef<int64_t> padding;
  int64_t kernel[2], strides[2], out[2];

  SmallVector<int64_t> start(int64_t i, int64_t j) const {
    return {0, 0, i, j};
  }
  SmallVector<int64_t> limit(int64_t i, int64_t j) const {
    return {paddedType.getDimSize(0), paddedType.getDimSize(1),
            i + (out[0] - 1) * strides[0] + 1,
            j + (out[1] - 1) * strides[1] + 1};
  }
  SmallVector<int64_t> stride() const { return {1, 1, strides[0], strides[1]}; }
};
} // namespace

template <typename OpTy>
static PoolWindows windowsOf(OpTy op, Type elementType) {
  PoolWindows w;
  auto xs = op.getInput().getType().getShape();
  auto os = op.getResult().getType().getShape();
  w.padding = op.getPadding();
  SmallVector<int64_t> padded(xs);
  for (int i = 0; i < 2; ++i) {
    w.kernel[i] = op.getKernel()[i];
    w.strides[i] = op.getStrides()[i];
    w.out[i] = os[2 + i];
    // Ceil mode windows may reach past the bottom/right padding.
    int64_t needed = (w.out[i] - 1) * w.strides[i] + w.kernel[i];
    padded[2 + i] = std::max(needed, xs[2 + i] + w.padding[i]);
  }
  w.paddedType = RankedTensorType::get(padded, elementType);
  return w;
}

static LogicalResult gradientOf(MaxPool2DOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value x = op.getInput(), y = op.getResult(), g = rg[0];
  if (failed(requireStatic(gb, "max_pool2d", {x, y})))
    return failure();
  Type et = typeOf(x).getElementType();
  PoolWindows w = windowsOf(op, et);
  auto xs = typeOf(x).getShape();
  auto ps = w.paddedType.getShape();
  int64_t n = xs[0], c = xs[1], k = w.kernel[0] * w.kernel[1];
  int64_t oh = w.out[0], ow = w.out[1];
  // Padding never wins: -inf, as in the forward op.
  Value xp =
      gb.pad(x, {0, 0, w.padding[0], w.padding[1]},
             {0, 0, ps[2] - xs[2] - w.padding[0], ps[3] - xs[3] - w.padding[1]},
             -std::numeric_limits<double>::infinity());
  // The windows side by side, [N, C, OH, OW, K]; the first maximum of each
  // gets the whole cotangent (as PyTorch), found with argmax, which also
  // keeps the gradient function differentiable in the cotangent.
  SmallVector<Value> windows;
  SmallVector<int64_t> flat;
  for (int64_t i = 0; i < w.kernel[0]; ++i)
    for (int64_t j = 0; j < w.kernel[1]; ++j) {
      Value s = gb.slice(xp, w.start(i, j), w.limit(i, j), w.stride());
      FailureOr<Value> r = gb.reshape(s, {n, c, oh, ow, 1});
      if (failed(r))
        return failure();
      windows.push_back(*r);
    }
  for (int64_t r = 0; r < oh; ++r)
    for (int64_t q = 0; q < ow; ++q)
      for (int64_t i = 0; i < w.kernel[0]; ++i)
        for (int64_t j = 0; j < w.kernel[1]; ++j)
          flat.push_back((r * w.strides[0] + i) * ps[3] + q * w.strides[1] + j);
  OpBuilder &b = gb.b;
  Value all = windows.size() == 1
                  ? windows[0]
                  : ConcatOp::create(b, gb.loc, windows, b.getI64IntegerAttr(4))
                        .getResult();
  Value first =
      ArgmaxOp::create(b, gb.loc, all, b.getI64IntegerAttr(4), b.getUnitAttr());
  SmallVector<int64_t> positions;
  for (int64_t i = 0; i < k; ++i)
    positions.push_back(i);
  Value hit = gb.convert(
      gb.compare(CompareDirection::EQ, first, gb.indices(positions)), et);
  FailureOr<Value> g5 = gb.reshape(g, {n, c, oh, ow, 1});
  if (failed(g5))
    return failure();
  FailureOr<Value> updates = gb.reshape(gb.mul(*g5, hit), {n, c, oh * ow * k});
  if (failed(updates))
    return failure();
  auto sumType = RankedTensorType::get({n, c, ps[2] * ps[3]}, et);
  Value sum =
      ScatterAddOp::create(b, gb.loc, gb.zeros(sumType, nullptr),
                           gb.indices(flat), *updates, b.getI64IntegerAttr(2));
  FailureOr<Value> padded = gb.reshape(sum, ps);
  if (failed(padded))
    return failure();
  og.push_back(gb.slice(*padded, {0, 0, w.padding[0], w.padding[1]},
                        {n, c, w.padding[0] + xs[2], w.padding[1] + xs[3]},
                        {1, 1, 1, 1}));
  return success();
}

static LogicalResult gradientOf(AvgPool2DOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value x = op.getInput(), y = op.getResult(), g = rg[0];
  if (failed(requireStatic(gb, "avg_pool2d", {x, y})))
    return failure();
  Type et = typeOf(x).getElementType();
  PoolWindows w = windowsOf(op, et);
  auto xs = typeOf(x).getShape();
  // The divisor of each output position, as the lowering computes it.
  SmallVector<double> divisor;
  SmallVector<int64_t> extent[2];
  for (int d = 0; d < 2; ++d)
    for (int64_t p = 0; p < w.out[d]; ++p) {
      int64_t start = p * w.strides[d] - w.padding[d];
      int64_t end = std::min(start + w.kernel[d], xs[2 + d] + w.padding[2 + d]);
      extent[d].push_back(op.getCountIncludePad()
                              ? end - start
                              : std::min(end, xs[2 + d]) -
                                    std::max<int64_t>(start, 0));
    }
  SmallVector<Attribute> values;
  for (int64_t a : extent[0])
    for (int64_t bdim : extent[1])
      values.push_back(
          gb.b.getFloatAttr(et, 1.0 / static_cast<double>(a * bdim)));
  auto divType = RankedTensorType::get({w.out[0], w.out[1]}, et);
  Value inverse =
      ConstantOp::create(gb.b, gb.loc, DenseElementsAttr::get(divType, values));
  // Each window spreads its share evenly: the input gradient of a depthwise
  // convolution with a filter of ones.
  int64_t c = xs[1];
  auto onesType = RankedTensorType::get({c, 1, w.kernel[0], w.kernel[1]}, et);
  Value ones = ConstantOp::create(
      gb.b, gb.loc,
      DenseElementsAttr::get(onesType, gb.b.getFloatAttr(et, 1.0)));
  FailureOr<Value> gx =
      transposedConv(gb, gb.mul(g, inverse), ones, {xs[2], xs[3]},
                     {w.strides[0], w.strides[1]}, w.padding, {1, 1}, c);
  if (failed(gx))
    return failure();
  og.push_back(*gx);
  return success();
}

void attachNNGradients(MLIRContext *ctx) {
  attachGradientModels<MatmulOp, Conv2DOp, MaxPool2DOp, AvgPool2DOp>(ctx);
}

} // namespace mlir::paddle
