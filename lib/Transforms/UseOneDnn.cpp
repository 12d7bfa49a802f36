//===- UseOneDnn.cpp - matmul and conv through the oneDNN runtime ---------===//
//
// The library path: large f32 matmuls and convolutions on buffers become
// calls to the runtime's oneDNN kernels (paddle_runtime/onednn.h), which
// reach close to the CPU's peak where our own loops do not yet. The callees
// take strided memref descriptors (llvm.emit_c_interface), so any buffer
// with a unit innermost stride can be passed as it is.
//
//===----------------------------------------------------------------------===//

#include "paddle/Transforms/Passes.h"

#include "RuntimeFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "paddle-use-onednn"

namespace mlir::paddle {
#define GEN_PASS_DEF_USEONEDNNPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

namespace {

/// The runtime's kernels (the names the code calls; with emit_c_interface
/// the calls go to `_mlir_ciface_<name>`, runtime/src/symbols.cpp).
constexpr llvm::StringLiteral kMatmul = "paddle_onednn_matmul";
constexpr llvm::StringLiteral kConv2D = "paddle_onednn_conv2d";
constexpr llvm::StringLiteral kConv2DGrouped = "paddle_onednn_conv2d_grouped";

/// The ops' operands as the kernels take them; empty if one is not an f32
/// memref with a unit innermost stride (oneDNN's fast plain formats).
SmallVector<MemRefType> supportedOperands(linalg::LinalgOp op) {
  SmallVector<MemRefType> types;
  if (op->getNumOperands() != 3)
    return {};
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.getElementType().isF32() || !type.isLastDimUnitStride())
      return {};
    types.push_back(type);
  }
  return types;
}

/// Bits per logical dim in a packed dim map (see onednn.h).
constexpr int kMapBits = 4;
/// oneDNN's limit on dims (DNNL_MAX_NDIMS).
constexpr int64_t kMaxDims = 12;

/// A contraction oneDNN's matmul computes: loops `batch` (any number), `m`,
/// `n` and one reduction `k`, and for each operand the packed map from its
/// logical dims (a: batch..., m, k; b: batch..., k, n; c: batch..., m, n)
/// to its memref dims (onednn.h, paddle_onednn_matmul).
struct MatmulForm {
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  int64_t maps[3];
};

/// Whether `op`'s body is `out + in0 * in1` (f32, either operand order).
bool hasMatmulBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!add || body->getOperations().size() != 3)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value x = body->getArgument(0), y = body->getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) ||
         (mul.getLhs() == y && mul.getRhs() == x);
}

/// linalg.matmul, linalg.batch_matmul and the linalg.generic contractions
/// elementwise fusion makes of them (batched matmuls whose reshapes or
/// broadcasts it folded in, transposed operands) as a MatmulForm. Operand
/// maps may hold constant 0 for unit dims (a broadcast size-1 batch dim).
std::optional<MatmulForm> matchMatmul(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || !hasMatmulBody(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Where loop `loop` indexes `operand`'s memref, or -1.
  auto position = [&](int operand, unsigned loop) -> int64_t {
    for (unsigned i = 0; i < maps[operand].getNumResults(); ++i)
      if (auto d = dyn_cast<AffineDimExpr>(maps[operand].getResult(i)))
        if (d.getPosition() == loop)
          return i;
    return -1;
  };
  // Every index is a loop or a constant 0 into a unit dim.
  for (int operand = 0; operand < 3; ++operand) {
    auto type = cast<ShapedType>(op->getOperand(operand).getType());
    for (auto [i, e] : llvm::enumerate(maps[operand].getResults())) {
      if (isa<AffineDimExpr>(e))
        continue;
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!c || c.getValue() != 0 || type.getDimSize(i) != 1)
        return std::nullopt;
    }
  }
  if (!maps[2].isProjectedPermutation() ||
      maps[2].getNumResults() != op.getNumLoops() - 1)
    return std::nullopt;
  // Classify the loops: k is in a and b; a parallel loop in a only is an m
  // dim, in b only an n dim, in both a batch dim.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> ms, ns;
  std::optional<unsigned> k;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
    bool inA = position(0, loop) >= 0, inB = position(1, loop) >= 0;
    if (iterators[loop] == utils::IteratorType::reduction) {
      if (!inA || !inB)
        return std::nullopt;
      k = loop;
    } else if (inA && !inB) {
      ms.push_back(loop);
    } else if (inB && !inA) {
      ns.push_back(loop);
    } else if (!inA && !inB) {
      return std::nullopt;
    }
  }
  if (!k || ms.empty() || ns.empty())
    return std::nullopt;
  AffineMap out = maps[2];
  auto last = [&](ArrayRef<unsigned> loops) {
    return *llvm::max_element(loops, [&](unsigned x, unsigned y) {
      return position(2, x) < position(2, y);
    });
  };
  MatmulForm form;
  form.m = last(ms);
  form.n = last(ns);
  form.k = *k;
  for (AffineExpr e : out.getResults()) {
    unsigned loop = cast<AffineDimExpr>(e).getPosition();
    if (loop != form.m && loop != form.n)
      form.batch.push_back(loop);
  }
  if (static_cast<int64_t>(form.batch.size()) + 2 > kMaxDims)
    return std::nullopt;
  unsigned ends[3][2] = {{form.m, form.k}, {form.k, form.n}, {form.m, form.n}};
  for (int operand = 0; operand < 3; ++operand) {
    SmallVector<unsigned> logical(form.batch);
    logical.append({ends[operand][0], ends[operand][1]});
    int64_t packed = 0;
    for (auto [i, loop] : llvm::enumerate(logical)) {
      int64_t at = position(operand, loop);
      if (at < 0 && i + 2 >= logical.size())
        return std::nullopt;
      packed |= (at + 1) << (kMapBits * i);
    }
    form.maps[operand] = packed;
  }
  return form;
}

/// Product of static sizes; a dynamic dim counts as 1 (it is at least that).
int64_t staticProduct(ArrayRef<int64_t> sizes) {
  int64_t product = 1;
  for (int64_t s : sizes)
    if (!ShapedType::isDynamic(s))
      product *= s;
  return product;
}

/// Whether dims `d` and `d + 1` are statically contiguous with each other
/// (the runtime merges the group and channel dims of the grouped conv).
bool contiguousPair(MemRefType type, int64_t d) {
  auto [strides, offset] = type.getStridesAndOffset();
  (void)offset;
  int64_t inner = type.getDimSize(d + 1);
  return !ShapedType::isDynamic(strides[d]) &&
         !ShapedType::isDynamic(strides[d + 1]) &&
         !ShapedType::isDynamic(inner) && strides[d] == strides[d + 1] * inner;
}

/// The f32 memref type the kernels take: fully dynamic strided of `rank`,
/// or unranked for a rank < 0.
Type dynamicType(MLIRContext *ctx, int64_t rank) {
  auto f32 = Float32Type::get(ctx);
  if (rank < 0)
    return UnrankedMemRefType::get(f32, Attribute());
  auto layout =
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                             SmallVector<int64_t>(rank, ShapedType::kDynamic));
  return MemRefType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic), f32,
                         layout);
}

/// The zero fill of `buffer` right before `op`, if any: trace calls and ops
/// without memory effects in between do not touch the buffer.
linalg::FillOp zeroFillBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs().front() != buffer ||
          !matchPattern(fill.getInputs().front(), m_AnyZeroFloat()))
        return {};
      return fill;
    }
    if (auto call = dyn_cast<func::CallOp>(prev))
      if (call.getCallee().starts_with("paddle_trace_kernel_"))
        continue;
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

struct UseOneDnnPass : paddle::impl::UseOneDnnPassBase<UseOneDnnPass> {
  using UseOneDnnPassBase::UseOneDnnPassBase;

  /// Library call or our own loops, for an op oneDNN can run. Today a FLOP
  /// threshold measured against the generated loops (docs/onednn.md).
  // TODO(cost model): ask lib/CostModel for both predicted times instead.
  bool isWorthLibraryCall(Operation *op, int64_t flops) const {
    (void)op;
    return force || flops >= minFlops;
  }

  /// Declares `name` taking memrefs of `ranks` (dynamic strided; unranked
  /// for a rank < 0) and `scalars` i64s, or checks an existing declaration.
  FailureOr<func::FuncOp> declare(ModuleOp module, StringRef name,
                                  ArrayRef<int64_t> ranks, int64_t scalars) {
    MLIRContext *ctx = module.getContext();
    SmallVector<Type> inputs;
    for (int64_t rank : ranks)
      inputs.push_back(dynamicType(ctx, rank));
    inputs.append(scalars, IntegerType::get(ctx, 64));
    return paddle::declareRuntimeFunction(module, name,
                                          FunctionType::get(ctx, inputs, {}));
  }

  /// Replaces `op` by a call of `callee` on its operands (cast to ranked
  /// dynamic strided memrefs, or unranked ones with `unranked`) followed by
  /// `params` and the accumulate flag.
  LogicalResult replace(ModuleOp module, linalg::LinalgOp op, StringRef callee,
                        ArrayRef<int64_t> params, bool unranked = false) {
    SmallVector<int64_t> ranks;
    for (Value v : op->getOperands())
      ranks.push_back(unranked ? -1 : cast<MemRefType>(v.getType()).getRank());
    FailureOr<func::FuncOp> decl =
        declare(module, callee, ranks, params.size() + 1);
    if (failed(decl))
      return failure();
    Value output = op.getDpsInits().front();
    linalg::FillOp fill = zeroFillBefore(op, output);
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<Value> args;
    for (auto [v, rank] : llvm::zip(op->getOperands(), ranks))
      args.push_back(
          memref::CastOp::create(b, loc, dynamicType(b.getContext(), rank), v));
    for (int64_t p : params)
      args.push_back(arith::ConstantIntOp::create(b, loc, p, 64));
    args.push_back(arith::ConstantIntOp::create(b, loc, fill ? 0 : 1, 64));
    func::CallOp::create(b, loc, *decl, args);
    op->erase();
    if (fill)
      fill->erase();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op->getParentOfType<func::FuncOp>())
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates) {
      bool conv = isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp>(op);
      std::optional<MatmulForm> matmul;
      if (!conv && !(matmul = matchMatmul(op)))
        continue;
      SmallVector<MemRefType> types = supportedOperands(op);
      if (types.empty())
        continue;
      LogicalResult result = success();
      if (matmul) {
        int64_t flops = 2 * staticProduct(op.getStaticLoopRanges());
        if (!isWorthLibraryCall(op, flops))
          continue;
        result = replace(module, op, kMatmul,
                         {matmul->maps[0], matmul->maps[1], matmul->maps[2]},
                         /*unranked=*/true);
      } else {
        // Convolutions: the filter's dims after the output channels are
        // the contraction (input channels per group, kernel height, width).
        bool grouped = isa<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
        DenseIntElementsAttr strides, dilations;
        if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
          strides = conv.getStrides();
          dilations = conv.getDilations();
        } else {
          auto g = cast<linalg::Conv2DNgchwGfchwOp>(op.getOperation());
          strides = g.getStrides();
          dilations = g.getDilations();
          // The runtime merges (group, channel) into one oneDNN dim.
          if (!contiguousPair(types[0], 1) || !contiguousPair(types[2], 1))
            continue;
        }
        ArrayRef<int64_t> f = types[1].getShape();
        int64_t flops = 2 * staticProduct(types[2].getShape()) *
                        staticProduct(f.take_back(3));
        if (!isWorthLibraryCall(op, flops))
          continue;
        SmallVector<int64_t> params;
        for (DenseIntElementsAttr attr : {strides, dilations})
          for (const APInt &v : attr.getValues<APInt>())
            params.push_back(v.getSExtValue());
        result = replace(module, op, grouped ? kConv2DGrouped : kConv2D,
                         {params[0], params[1], params[2], params[3]});
      }
      if (failed(result))
        return signalPassFailure();
    }
  }
};

} // namespace
