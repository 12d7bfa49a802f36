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
#include "TileAndVectorize.h"
#include "paddle/Conversion/Passes.h"
#include "paddle/CostModel/CostModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "paddle_runtime/onednn.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Debug.h"
#include "llvm/TargetParser/Host.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include <array>
#include <cmath>
#include <limits>

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
constexpr llvm::StringLiteral kReorder = "paddle_onednn_reorder";
constexpr llvm::StringLiteral kMaxPool2D = "paddle_onednn_max_pool2d";
/// The matmul and convolutions on bf16 inputs: `<kernel>_bf16`.
constexpr llvm::StringLiteral kBF16Suffix = "_bf16";

/// The kernel `callee` runs, without the `_bf16` of a bf16 variant.
StringRef kernelOf(StringRef callee) {
  return callee.ends_with(kBF16Suffix) ? callee.drop_back(kBF16Suffix.size())
                                       : callee;
}

/// The operand a call of one of the kernels writes (its output): operand 2
/// of the matmul and the convolutions, operand 1 of the pooling and the
/// reorder; -1 for any other call.
int libraryOutput(func::CallOp call) {
  StringRef callee = kernelOf(call.getCallee());
  if (callee == kMatmul || callee == kConv2D || callee == kConv2DGrouped)
    return 2;
  if (callee == kMaxPool2D || callee == kReorder)
    return 1;
  return -1;
}

/// The operands of a kernel call that are NCHW activations (its input and
/// output), which a channels-last layout may replace: the convolutions'
/// and the pooling's; none for other calls.
SmallVector<unsigned, 2> activationOperands(func::CallOp call) {
  StringRef callee = kernelOf(call.getCallee());
  if (callee == kConv2D || callee == kConv2DGrouped)
    return {0, 2};
  if (callee == kMaxPool2D)
    return {0, 1};
  return {};
}

/// The ops' operands as the kernels take them; empty unless each is a
/// memref with a unit innermost stride (oneDNN's fast plain formats), the
/// output f32 and the two inputs both f32 or both bf16 (the `_bf16`
/// kernels, `paddle-convert-precision`'s contractions).
SmallVector<MemRefType> supportedOperands(linalg::LinalgOp op) {
  SmallVector<MemRefType> types;
  if (op->getNumOperands() != 3)
    return {};
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.isLastDimUnitStride())
      return {};
    types.push_back(type);
  }
  Type in = types[0].getElementType();
  if (!(in.isF32() || in.isBF16()) || types[1].getElementType() != in ||
      !types[2].getElementType().isF32())
    return {};
  return types;
}

/// Whether the kernel for `types` (supportedOperands) is the bf16 one.
bool isBF16Kernel(ArrayRef<MemRefType> types) {
  return types[0].getElementType().isBF16();
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

/// Whether `op`'s body is `out + in0 * in1` (f32, either operand order),
/// or the same on both inputs extended from bf16 to f32 (a bf16 x bf16 ->
/// f32 contraction).
bool hasMatmulBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  // The inputs as the product reads them: the block arguments, or their
  // extensions from bf16.
  Value x = body->getArgument(0), y = body->getArgument(1);
  size_t ops = 3;
  if (x.getType().isBF16() && y.getType().isBF16()) {
    auto extended = [&](Value arg) -> Value {
      if (!arg.hasOneUse())
        return {};
      auto ext = dyn_cast<arith::ExtFOp>(*arg.getUsers().begin());
      return ext && ext.getType().isF32() ? ext.getResult() : Value();
    };
    x = extended(x);
    y = extended(y);
    if (!x || !y)
      return false;
    ops = 5;
  }
  if (body->getOperations().size() != ops)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
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

/// Bytes of a memref's static elements (a dynamic dim counts as 1).
double bytesOf(Value v) {
  auto type = cast<MemRefType>(v.getType());
  return double(staticProduct(type.getShape())) *
         double(type.getElementTypeBitWidth() / 8);
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

/// The memref type the kernels take: fully dynamic strided of `rank`, or
/// unranked for a rank < 0, of `element` (f32 by default).
Type dynamicType(MLIRContext *ctx, int64_t rank, Type element = {}) {
  if (!element)
    element = Float32Type::get(ctx);
  if (rank < 0)
    return UnrankedMemRefType::get(element, Attribute());
  auto layout =
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                             SmallVector<int64_t>(rank, ShapedType::kDynamic));
  return MemRefType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic),
                         element, layout);
}

//===----------------------------------------------------------------------===//
// Aliasing of buffers (planned workspace views, allocations, globals).
//===----------------------------------------------------------------------===//

/// Where a buffer lives: a root value (an allocation, a global, a call's
/// result, a block argument) and a byte range in it; `end` = INT64_MAX
/// for "anywhere in the root".
struct Region {
  Value root;
  int64_t begin = 0, end = INT64_MAX;
};

Region regionOf(Value v) {
  if (auto view = v.getDefiningOp<memref::ViewOp>()) {
    auto type = view.getType();
    APInt offset;
    if (type.hasStaticShape() && type.getLayout().isIdentity() &&
        matchPattern(view.getByteShift(), m_ConstantInt(&offset))) {
      Region source = regionOf(view.getSource());
      int64_t begin = offset.getSExtValue();
      int64_t bytes =
          type.getNumElements() * (type.getElementTypeBitWidth() / 8);
      return {source.root, begin, begin + bytes};
    }
    return {regionOf(view.getSource()).root};
  }
  // Reshapes and casts cover the same bytes as their source (GPT-2's
  // reshaped matmul operands; a grouped conv's padded input, an expand_shape
  // of a planned workspace view).
  if (isa_and_nonnull<memref::CollapseShapeOp, memref::ExpandShapeOp,
                      memref::CastOp>(v.getDefiningOp()))
    return regionOf(v.getDefiningOp()->getOperand(0));
  // A subview stays within its source (the tiles of a fused group's loops):
  // its source's range bounds it.
  if (auto subview = v.getDefiningOp<memref::SubViewOp>())
    return regionOf(subview.getSource());
  // Other views: anywhere in their source.
  if (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    return {regionOf(view.getViewSource()).root};
  return {v};
}

/// Whether `a` and `b` may share memory. Different roots are distinct
/// unless both are block arguments (a caller may pass one buffer twice).
bool mayAlias(Value a, Value b) {
  if (a == b)
    return true;
  Region ra = regionOf(a), rb = regionOf(b);
  if (ra.root != rb.root)
    return isa<BlockArgument>(ra.root) && isa<BlockArgument>(rb.root);
  return ra.begin < rb.end && rb.begin < ra.end;
}

/// Whether `a` and `b` are the same memory: one value, or views of one
/// byte range with one type.
bool sameBuffer(Value a, Value b) {
  if (a == b)
    return true;
  Region ra = regionOf(a), rb = regionOf(b);
  return a.getType() == b.getType() && ra.root == rb.root &&
         ra.begin == rb.begin && ra.end == rb.end && ra.end != INT64_MAX;
}

/// Whether `op` only allocates (a memref.alloc of the epilogue's output):
/// it touches no existing memory, so an epilogue may lie beyond it.
bool onlyAllocates(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.hasEffect<MemoryEffects::Allocate>() &&
         !effects.hasEffect<MemoryEffects::Read>() &&
         !effects.hasEffect<MemoryEffects::Write>() &&
         !effects.hasEffect<MemoryEffects::Free>();
}

bool isTraceCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee().starts_with("paddle_trace_kernel_");
}

bool isZeroFillOf(Operation *op, Value buffer) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  return fill && fill.getOutputs().front() == buffer &&
         matchPattern(fill.getInputs().front(), m_AnyZeroFloat());
}

/// Whether `op` may write memory aliasing `buffer` (unknown effects: yes).
bool mayWrite(Operation *op, Value buffer) {
  if (isTraceCall(op) || isMemoryEffectFree(op))
    return false;
  // The kernels this pass made write their output only.
  if (auto call = dyn_cast<func::CallOp>(op))
    if (int out = libraryOutput(call); out >= 0)
      if (auto cast = call.getOperand(out).getDefiningOp<memref::CastOp>())
        return mayAlias(cast.getSource(), buffer);
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (auto &e : list) {
    if (!isa<MemoryEffects::Write>(e.getEffect()))
      continue;
    Value v = e.getValue();
    if (!v || mayAlias(v, buffer))
      return true;
  }
  return false;
}

/// Whether `op` may read or write any of `buffer` (unknown effects: yes).
bool mayAccess(Operation *op, Value buffer) {
  if (isTraceCall(op) || isMemoryEffectFree(op))
    return false;
  if (auto call = dyn_cast<func::CallOp>(op)) {
    for (Value v : call.getOperands())
      if (isa<BaseMemRefType>(v.getType())) {
        if (auto cast = v.getDefiningOp<memref::CastOp>())
          v = cast.getSource();
        if (mayAlias(v, buffer))
          return true;
      }
    return false;
  }
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects) {
    // Loops and other ops with regions: any use of the buffer inside.
    bool touched = false;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        touched |= isa<BaseMemRefType>(v.getType()) && mayAlias(v, buffer);
    });
    return touched || op->getNumRegions() == 0;
  }
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (auto &e : list) {
    Value v = e.getValue();
    if (isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()) &&
        (!v || mayAlias(v, buffer)))
      return true;
  }
  return false;
}

/// Whether `buffer` holds zeros right before `at`: a zero fill of it
/// earlier in the block, nothing writing it since.
bool isKnownZero(Value buffer, Operation *at) {
  for (Operation *prev = at->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (isZeroFillOf(prev, buffer))
      return true;
    if (mayWrite(prev, buffer))
      return false;
  }
  return false;
}

/// How an op's output starts: known zeros (then the kernel overwrites it),
/// with the op to erase that wrote them, if only the op needs it.
struct ZeroInit {
  bool zero = false;
  Operation *erase = nullptr;
};

/// The zero initialization of `buffer` before `op`: a zero fill right
/// before it (trace calls and ops without memory effects in between), a
/// copy there of a buffer known to hold zeros (bufferization copies one
/// zero-filled tensor into several outputs), or an earlier zero fill of
/// the buffer itself with nothing writing it since (the last of those
/// outputs reuses the zero buffer).
ZeroInit zeroInitBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (isTraceCall(prev) || isMemoryEffectFree(prev))
      continue;
    if (isZeroFillOf(prev, buffer))
      return {true, prev};
    if (auto copy = dyn_cast<memref::CopyOp>(prev))
      if (copy.getTarget() == buffer && !mayAlias(copy.getSource(), buffer) &&
          isKnownZero(copy.getSource(), copy))
        return {true, copy};
    break;
  }
  return {isKnownZero(buffer, op), nullptr};
}

//===----------------------------------------------------------------------===//
// Epilogues: an elementwise linalg.generic after the op as oneDNN post-ops.
//===----------------------------------------------------------------------===//

struct PostOp {
  int64_t kind;
  int64_t operand = -1; // index into the extra operands
  double alpha = 0, beta = 0;
};

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

/// The epilogue fused into a library call: the generic it replaces, the
/// post-ops, their operands and the buffer the call writes.
struct Epilogue {
  linalg::GenericOp generic;
  SmallVector<PostOp> ops;
  SmallVector<Value> operands;
  Value residual, output;
};

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

/// How the paddle lowering collapses a grouped conv's [N, G, F, H, W]
/// output to NCHW.
SmallVector<ReassociationIndices> groupReassociation() {
  return {{0}, {1, 2}, {3}, {4}};
}

/// The NCHW collapse of a grouped conv's output `out`, when that is its
/// only reshape and static with an identity layout (the fused call
/// expands the epilogue's output back).
Value collapsedGroups(Value out) {
  Value found;
  for (Operation *user : out.getUsers()) {
    auto collapse = dyn_cast<memref::CollapseShapeOp>(user);
    if (!collapse)
      continue;
    if (found || collapse.getReassociationIndices() != groupReassociation() ||
        !collapse.getType().getLayout().isIdentity() ||
        !collapse.getType().hasStaticShape())
      return Value();
    found = collapse.getResult();
  }
  return found;
}

/// A buffer the function allocates itself (a workspace view or an
/// allocation) of static shape and identity layout: its layout is the
/// function's to choose.
bool isOwnBuffer(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() &&
         isa_and_nonnull<memref::ViewOp, memref::AllocOp, memref::AllocaOp>(
             v.getDefiningOp());
}

/// The strides of `shape`, a [N, C, H, W] or grouped [N, G, F, H, W] view
/// of an activation stored channels-last (N, H, W, then C = G * F).
SmallVector<int64_t> channelsLastStrides(ArrayRef<int64_t> shape) {
  bool grouped = shape.size() == 5;
  int64_t c = grouped ? shape[1] * shape[2] : shape[1];
  int64_t h = shape[shape.size() - 2], w = shape.back();
  if (grouped)
    return {h * w * c, shape[2], 1, w * c, c};
  return {h * w * c, 1, w * c, c};
}

/// Whether `use` is an operand of `generic` that a channels-last layout can
/// follow: the generic has 4 loops and buffer operands, maps `use` by the
/// identity and every operand by a projected permutation (which stays one
/// when genericChannelsLast reorders the loops), and reads no loop index
/// (a zero-padding copy, which loads its source by index, keeps its loops).
bool followsLayout(linalg::GenericOp generic, OpOperand &use) {
  if (generic.getNumLoops() != 4 || !generic.hasPureBufferSemantics() ||
      generic.hasIndexSemantics() ||
      !generic.getMatchingIndexingMap(&use).isIdentity())
    return false;
  return llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap map) {
    return map.isProjectedPermutation();
  });
}

/// The operands of a 4-loop generic that it maps by the identity: those
/// that change layout with the loops (followsLayout).
SmallVector<Value> layoutOperands(linalg::GenericOp generic) {
  SmallVector<Value> operands;
  for (OpOperand &operand : generic->getOpOperands())
    if (generic.getMatchingIndexingMap(&operand).isIdentity())
      operands.push_back(operand.get());
  return operands;
}

/// Rewrites `generic`, whose identity-mapped operands (layoutOperands) are
/// now stored channels-last, to read and write them as [N, H, W, C] views
/// with its loops in that order: its innermost loop then walks C, which is
/// contiguous, instead of W, which is C elements apart. The order of each
/// reduction is unchanged (a pool still sums H then W for each channel).
void genericChannelsLast(linalg::GenericOp generic) {
  MLIRContext *ctx = generic.getContext();
  OpBuilder b(generic);
  Location loc = generic.getLoc();
  // [N, C, H, W] loops read the [N, H, W, C] view through this map.
  AffineMap toNhwc =
      AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 3, 1}, ctx);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  for (OpOperand &operand : generic->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    if (!maps[i].isIdentity())
      continue;
    ArrayRef<int64_t> nchw =
        cast<MemRefType>(operand.get().getType()).getShape();
    SmallVector<int64_t> sizes{nchw[0], nchw[2], nchw[3], nchw[1]};
    SmallVector<int64_t> strides{nchw[2] * nchw[3] * nchw[1], nchw[3] * nchw[1],
                                 nchw[1], 1};
    Value view = memref::ReinterpretCastOp::create(
        b, loc,
        MemRefType::get(
            sizes, cast<MemRefType>(operand.get().getType()).getElementType()),
        operand.get(), /*offset=*/0, sizes, strides);
    operand.set(view);
    maps[i] = toNhwc;
  }
  generic.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  IRRewriter rewriter(ctx);
  // Loops (N, C, H, W) -> (N, H, W, C).
  (void)linalg::interchangeGenericOp(rewriter, generic, {0, 2, 3, 1});
}

/// Stores the activations that only oneDNN convolutions and max poolings
/// read and write channels-last (NHWC), the layout oneDNN's convolutions
/// pick for themselves (`format_tag::any`): a conv chain then runs without
/// the plain <-> oneDNN reorders of each call's input and output. A buffer
/// qualifies when every use is, through the grouped form's reshapes, the
/// input or output of a conv or pooling call, a whole-buffer copy (a
/// residual), a fill, or an operand of a 4-loop linalg.generic read or
/// written with the identity map (a global average pool, or the residual
/// add and relu fused with it).
/// Workspace views of the same bytes that are used (memory planning's
/// in-place reuse passes data from one to the other without a copy)
/// qualify together or not at all. The calls then take channels-last views
/// (memref.reinterpret_cast with permuted strides); a copy between two
/// channels-last buffers stays a memcpy, one between a plain and a
/// channels-last buffer becomes `reorder` (paddle_onednn_reorder). The
/// 4-D operands a generic maps by the identity change layout together or
/// not at all; the generic then reads and writes them as [N, H, W, C]
/// views with its loops in that order, so that its innermost loop walks
/// memory contiguously (genericChannelsLast). Returns how many buffers
/// changed layout, or failure where `reorder` (which declares it) fails,
/// before anything changed.
FailureOr<unsigned>
storeChannelsLast(func::FuncOp func,
                  llvm::function_ref<FailureOr<func::FuncOp>()> reorder) {
  // The casts conv calls take as their inputs or outputs, per buffer.
  llvm::MapVector<Value, SmallVector<memref::CastOp>> leaves;
  DenseSet<Value> rejected;
  // Buffers that must keep one layout with the key.
  DenseMap<Value, SmallVector<Value>> coupled;
  llvm::SetVector<memref::CopyOp> copies;
  llvm::SetVector<linalg::GenericOp> generics;
  auto isActivation = [](Operation *op, unsigned operand) {
    auto call = dyn_cast<func::CallOp>(op);
    return call && llvm::is_contained(activationOperands(call), operand);
  };
  // Whether every use of `v`, `root` or a reshape of it, is one a
  // channels-last layout keeps correct.
  std::function<bool(Value, Value)> usesAllow = [&](Value root, Value v) {
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto cast = dyn_cast<memref::CastOp>(user)) {
        if (!llvm::all_of(cast->getUses(), [&](OpOperand &u) {
              return isActivation(u.getOwner(), u.getOperandNumber());
            }))
          return false;
        leaves[root].push_back(cast);
        continue;
      }
      // The grouped conv's [N, G, F, H, W] view of an NCHW buffer, and back.
      auto expand = dyn_cast<memref::ExpandShapeOp>(user);
      auto collapse = dyn_cast<memref::CollapseShapeOp>(user);
      if ((expand &&
           expand.getReassociationIndices() == groupReassociation()) ||
          (collapse &&
           collapse.getReassociationIndices() == groupReassociation())) {
        if (!usesAllow(root, user->getResult(0)))
          return false;
        continue;
      }
      // A whole-buffer copy: between two channels-last buffers it stays,
      // to or from a plain one it becomes a reorder (of f32 buffers).
      if (auto copy = dyn_cast<memref::CopyOp>(user)) {
        auto other = dyn_cast<MemRefType>(
            (v == copy.getSource() ? copy.getTarget() : copy.getSource())
                .getType());
        auto type = cast<MemRefType>(v.getType());
        if (v != root || type.getRank() != 4 ||
            !type.getElementType().isF32() || !other || !other.isStrided())
          return false;
        copies.insert(copy);
        continue;
      }
      if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
        if (v != root || !followsLayout(generic, use))
          return false;
        generics.insert(generic);
        continue;
      }
      // A fill writes every element whatever the layout.
      if (isa<memref::DeallocOp>(user) ||
          (isa<linalg::FillOp>(user) && v == root))
        continue;
      return false;
    }
    return true;
  };
  SmallVector<memref::ViewOp> views;
  func.walk([&](memref::ViewOp view) {
    if (!view->use_empty())
      views.push_back(view);
  });
  func.walk([&](func::CallOp call) {
    for (unsigned i : activationOperands(call)) {
      auto cast = call.getOperand(i).getDefiningOp<memref::CastOp>();
      if (!cast)
        continue;
      // Back through the grouped form's reshapes to the buffer.
      Value root = cast.getSource();
      while (isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
          root.getDefiningOp()))
        root = root.getDefiningOp()->getOperand(0);
      if (leaves.count(root) || rejected.count(root))
        continue;
      // f32 activations, and the bf16 inputs of the bf16 convolutions.
      auto type = dyn_cast<MemRefType>(root.getType());
      if (!isOwnBuffer(root) ||
          !(type.getElementType().isF32() || type.getElementType().isBF16()) ||
          (type.getRank() != 4 && type.getRank() != 5) ||
          !usesAllow(root, root)) {
        leaves.erase(root);
        rejected.insert(root);
        continue;
      }
      if (!root.getDefiningOp<memref::ViewOp>())
        continue;
      Region region = regionOf(root);
      for (memref::ViewOp other : views) {
        Region r = regionOf(other);
        if (other.getResult() != root && r.root == region.root &&
            r.end == region.end && r.begin == region.begin)
          coupled[root].push_back(other);
      }
    }
  });
  for (linalg::GenericOp generic : generics) {
    SmallVector<Value> operands = layoutOperands(generic);
    for (Value operand : operands)
      llvm::append_range(coupled[operand], operands);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto &[root, others] : coupled)
      if (!rejected.count(root) && llvm::any_of(others, [&](Value o) {
            return rejected.count(o) || !leaves.count(o);
          })) {
        rejected.insert(root);
        changed = true;
      }
  }
  auto isChannelsLast = [&](Value v) {
    return leaves.count(v) && !rejected.count(v);
  };
  // `root` as `shape` (itself or a grouped reshape), channels-last.
  auto channelsLastView = [](OpBuilder &b, Location loc, Value root,
                             ArrayRef<int64_t> sizes) {
    SmallVector<int64_t> strides = channelsLastStrides(sizes);
    return memref::ReinterpretCastOp::create(
        b, loc,
        MemRefType::get(sizes,
                        cast<MemRefType>(root.getType()).getElementType(),
                        StridedLayoutAttr::get(b.getContext(), 0, strides)),
        root, /*offset=*/0, sizes, strides);
  };
  for (memref::CopyOp copy : copies) {
    Value from = copy.getSource(), to = copy.getTarget();
    if (isChannelsLast(from) == isChannelsLast(to))
      continue;
    FailureOr<func::FuncOp> callee = reorder();
    if (failed(callee))
      return failure();
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    SmallVector<Value> args;
    for (Value v : {from, to}) {
      Value view = v;
      if (isChannelsLast(v))
        view = channelsLastView(b, loc, v,
                                cast<MemRefType>(v.getType()).getShape());
      args.push_back(memref::CastOp::create(
          b, loc, callee->getFunctionType().getInput(0), view));
    }
    func::CallOp::create(b, loc, *callee, args);
    copy->erase();
  }
  unsigned changedBuffers = 0;
  for (auto &[root, casts] : leaves) {
    if (rejected.count(root))
      continue;
    ++changedBuffers;
    for (memref::CastOp leaf : casts) {
      ArrayRef<int64_t> sizes =
          cast<MemRefType>(leaf.getSource().getType()).getShape();
      OpBuilder b(leaf);
      auto view = channelsLastView(b, leaf.getLoc(), root, sizes);
      Value old = leaf.getSource();
      leaf.getSourceMutable().assign(view);
      // Reshapes the casts no longer read.
      while (old != root && old.use_empty()) {
        Operation *def = old.getDefiningOp();
        old = def->getOperand(0);
        def->erase();
      }
    }
  }
  for (linalg::GenericOp generic : generics)
    if (isChannelsLast(layoutOperands(generic).front()))
      genericChannelsLast(generic);
  return changedBuffers;
}

struct UseOneDnnPass : paddle::impl::UseOneDnnPassBase<UseOneDnnPass> {
  using UseOneDnnPassBase::UseOneDnnPassBase;

  /// The device the choice is made for (the `device` option).
  paddle::DeviceSpec spec;

  /// Library call or our own loops for `op`, which oneDNN can run: the
  /// path the cost model predicts faster on `device` (docs/onednn.md,
  /// "Choosing"), or oneDNN with `force`. A conv reorders its activations
  /// on every call, and `weights` too unless they are constant. Dynamic
  /// dims count as 1, which keeps such ops on our loops unless the static
  /// dims alone make oneDNN pay.
  /// `flopsPerIteration` counts the operations of one iteration of the
  /// op's loops: 2 for the multiply-add of a contraction, 1 for a pooling's
  /// maximum.
  bool isWorthLibraryCall(linalg::LinalgOp op, bool conv, Value weights,
                          double copyBytes = 0, double flopsPerIteration = 2) {
    if (force)
      return true;
    if (!spec.onednn)
      return false;
    paddle::ContractionCost cost;
    cost.copyBytes = copyBytes;
    cost.flops =
        flopsPerIteration * double(staticProduct(op.getStaticLoopRanges()));
    for (Value v : op->getOperands())
      cost.bytes += bytesOf(v);
    if (cast<MemRefType>(op.getDpsInputs()[0].getType())
            .getElementType()
            .isBF16())
      cost.inputType = paddle::SpecDType::BF16;
    if (conv) {
      cost.reorderBytes =
          bytesOf(op.getDpsInputs()[0]) + bytesOf(op.getDpsInits()[0]);
      if (!isConstantWeights(weights))
        cost.reorderBytes += bytesOf(weights);
    }
    cost.tiled = tileAndVectorize && paddle::isTiledMatmul(op, vectorBitsFor());
    std::optional<paddle::PathEstimate> t = paddle::estimatePaths(cost, spec);
    if (!t)
      return false;
    LLVM_DEBUG(llvm::dbgs()
               << "paddle-use-onednn: " << op->getName() << " " << cost.flops
               << " FLOPs, " << (cost.tiled ? "tiled" : "scalar") << ": onednn "
               << t->librarySeconds * 1e6 << " us, codegen "
               << t->codegenSeconds * 1e6 << " us\n");
    return t->libraryIsFaster();
  }

  /// The register width tiled matmuls get (as in the CPU pipeline).
  int64_t vectorBitsFor() const {
    if (vectorBits > 0)
      return vectorBits;
    // Once per process: the query reads the CPU's features anew each time
    // (0.1 ms; a long function asks for every matmul).
    static const int64_t host =
        llvm::sys::getHostCPUFeatures().lookup("avx512f") ? 512 : 256;
    return host;
  }

  SymbolTable *symbols = nullptr;

  /// Declares `name` taking memrefs of `elements` (dynamic strided of
  /// `ranks`; unranked for a rank < 0), then unranked f32 extra operands,
  /// the unranked i64 state and program, and `scalars` i64s; or checks an
  /// existing one.
  FailureOr<func::FuncOp> declare(ModuleOp module, StringRef name,
                                  ArrayRef<int64_t> ranks,
                                  ArrayRef<Type> elements, int64_t scalars) {
    MLIRContext *ctx = module.getContext();
    SmallVector<Type> inputs;
    for (auto [rank, element] : llvm::zip_equal(ranks, elements))
      inputs.push_back(dynamicType(ctx, rank, element));
    inputs.append(PADDLE_ONEDNN_MAX_OPERANDS, dynamicType(ctx, -1));
    Type i64 = IntegerType::get(ctx, 64);
    inputs.append(2, UnrankedMemRefType::get(i64, Attribute()));
    inputs.append(scalars, i64);
    return paddle::declareRuntimeFunction(module, name,
                                          FunctionType::get(ctx, inputs, {}));
  }

  /// A private global of `type` (initial value `value`) named after
  /// `name`, made unique.
  memref::GlobalOp addGlobal(ModuleOp module, StringRef name, MemRefType type,
                             Attribute value, bool constant) {
    OpBuilder b(module.getBodyRegion());
    auto global = memref::GlobalOp::create(
        b, module.getLoc(), name, b.getStringAttr("private"), type, value,
        constant, /*alignment=*/IntegerAttr());
    symbols->insert(global);
    return global;
  }

  /// A call site's post-op program (a constant i64 global) and its state
  /// (a mutable i64 word, zero when loaded; onednn.h).
  std::pair<memref::GlobalOp, memref::GlobalOp>
  addProgramAndState(ModuleOp module, ArrayRef<int64_t> program) {
    Type i64 = IntegerType::get(module.getContext(), 64);
    auto programType = MemRefType::get({(int64_t)program.size()}, i64);
    memref::GlobalOp programGlobal = addGlobal(
        module, "__paddle_onednn_program", programType,
        DenseIntElementsAttr::get(
            RankedTensorType::get(programType.getShape(), i64), program),
        /*constant=*/true);
    auto stateType = MemRefType::get({1}, i64);
    memref::GlobalOp state =
        addGlobal(module, "__paddle_onednn_state", stateType,
                  DenseIntElementsAttr::get(RankedTensorType::get({1}, i64),
                                            ArrayRef<int64_t>{0}),
                  /*constant=*/false);
    return {programGlobal, state};
  }

  /// Appends a call's extra operands (`extras` as unranked f32 memrefs,
  /// the unused slots a dummy, so that activations have no uses the
  /// kernels do not read: storeChannelsLast), its state and its program.
  void appendExtrasAndGlobals(OpBuilder &b, Location loc, ModuleOp module,
                              SmallVectorImpl<Value> &args,
                              ArrayRef<Value> extras, memref::GlobalOp state,
                              memref::GlobalOp program) {
    MLIRContext *ctx = module.getContext();
    Type unrankedF32 = dynamicType(ctx, -1);
    Value unusedArg;
    for (int i = 0; i < PADDLE_ONEDNN_MAX_OPERANDS; ++i) {
      if (i < (int)extras.size()) {
        Value v = extras[i];
        args.push_back(v.getType() == unrankedF32
                           ? v
                           : memref::CastOp::create(b, loc, unrankedF32, v));
        continue;
      }
      if (!unusedArg)
        unusedArg = memref::CastOp::create(b, loc, unrankedF32,
                                           unusedOperand(module, b, loc));
      args.push_back(unusedArg);
    }
    Type unrankedI64 =
        UnrankedMemRefType::get(IntegerType::get(ctx, 64), Attribute());
    for (memref::GlobalOp global : {state, program}) {
      Value get = memref::GetGlobalOp::create(b, loc, global.getType(),
                                              global.getSymName());
      args.push_back(memref::CastOp::create(b, loc, unrankedI64, get));
    }
  }

  /// Whether `op` is a conv oneDNN may run as Winograd: 3x3, stride and
  /// dilation 1, not grouped, at least 64 input and output channels (the
  /// ResNet shapes where its Winograd kernels measured 1.2-2.5x faster than
  /// the direct ones, at the same error; docs/onednn.md, "Winograd").
  static bool allowsWinograd(linalg::LinalgOp op) {
    auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation());
    if (!conv)
      return false;
    auto ones = [](DenseIntElementsAttr attr) {
      return llvm::all_of(attr.getValues<APInt>(),
                          [](const APInt &v) { return v == 1; });
    };
    auto filter = cast<MemRefType>(conv.getDpsInputs()[1].getType());
    return ones(conv.getStrides()) && ones(conv.getDilations()) &&
           filter.getDimSize(2) == 3 && filter.getDimSize(3) == 3 &&
           filter.getDimSize(0) >= 64 && filter.getDimSize(1) >= 64;
  }

  /// A one-element f32 global the calls pass for extra operands their
  /// program does not use.
  Value unusedOperand(ModuleOp module, OpBuilder &b, Location loc) {
    auto type = MemRefType::get({1}, b.getF32Type());
    if (!unused)
      unused = addGlobal(
          module, "__paddle_onednn_unused", type,
          DenseFPElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()),
                                   ArrayRef<float>{0.0f}),
          /*constant=*/true);
    return memref::GetGlobalOp::create(b, loc, type, unused.getSymName());
  }
  memref::GlobalOp unused;

  /// Whether `v` is a constant global's contents.
  bool isConstantWeights(Value v) {
    auto get = v.getDefiningOp<memref::GetGlobalOp>();
    if (!get)
      return false;
    auto global = symbols->lookup<memref::GlobalOp>(get.getName());
    return global && global.getConstant();
  }

  /// The op before `op` that wrote its operand `copy` for `op` alone, as
  /// `sourceOf` recognizes it (it returns the source the writer copied
  /// from, or null for any other op): the last op before `op` that touches
  /// `copy`; its source is written neither from there up to `op` nor by
  /// `op`; and the copy is a buffer of this function's own that nothing
  /// else uses. `op` can then read the source in place of the copy, and
  /// the writer can go.
  Operation *writtenOnlyFor(Operation *op, Value copy,
                            function_ref<Value(Operation *)> sourceOf) {
    // `op` must read the copy only here (the other read would lose it).
    if (llvm::count(op->getOperands(), copy) != 1)
      return nullptr;
    Operation *writer = nullptr;
    Value source;
    for (Operation *it = op->getPrevNode(); it; it = it->getPrevNode()) {
      if ((source = sourceOf(it))) {
        writer = it;
        break;
      }
      // Another access between (even a write of unknown target) would
      // have read or changed what `op` reads.
      if (mayAccess(it, copy))
        return nullptr;
    }
    if (!writer)
      return nullptr;
    // `op` itself included: its output may have been planned over the
    // source, which is dead after the copy.
    for (Operation *it = writer->getNextNode(); it;
         it = it == op ? nullptr : it->getNextNode())
      if (mayWrite(it, source))
        return nullptr;
    // Its users, not other buffers planned over its bytes later (which
    // hold their own data), are what would read the copy after `op`.
    // Bufferization may give one buffer to several such copies (of equal
    // tensor.empty inits, merged by CSE): users before the writer saw
    // earlier contents, which the writer replaced; after `op`, the next
    // user must replace the contents again without reading them.
    Value buffer = copy;
    while (isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp,
                           memref::CastOp>(buffer.getDefiningOp()))
      buffer = buffer.getDefiningOp()->getOperand(0);
    if (!isa_and_nonnull<memref::AllocOp, memref::ViewOp>(
            buffer.getDefiningOp()))
      return nullptr;
    SmallVector<Operation *> users;
    collectUsers(buffer, users);
    Block *block = op->getBlock();
    Operation *next = nullptr;
    for (Operation *user : users) {
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at)
        return nullptr;
      if (at == writer || at == op || at->isBeforeInBlock(writer))
        continue;
      if (!op->isBeforeInBlock(at))
        return nullptr;
      if (!next || at->isBeforeInBlock(next))
        next = at;
    }
    return !next || overwrites(next, buffer) ? writer : nullptr;
  }

  /// The users of `buffer` and of its views, but for deallocs.
  static void collectUsers(Value buffer, SmallVectorImpl<Operation *> &users) {
    for (Operation *user : buffer.getUsers()) {
      if (isa<memref::DeallocOp>(user))
        continue;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == buffer) {
        for (Value v : user->getResults())
          collectUsers(v, users);
        continue;
      }
      users.push_back(user);
    }
  }

  /// Whether `op` writes every element of `buffer` without reading it: a
  /// fill of it, or a transpose or all-parallel generic whose only output
  /// it is (through a permutation; the generic's body ignores the output's
  /// value) and whose inputs and loads are other memory.
  static bool overwrites(Operation *op, Value buffer) {
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      return fill.hasPureBufferSemantics() && fill.getDpsInits()[0] == buffer;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !isa<linalg::GenericOp, linalg::TransposeOp>(op) ||
        !linalgOp.hasPureBufferSemantics() || linalgOp.getNumDpsInits() != 1 ||
        linalgOp.getDpsInits()[0] != buffer ||
        linalgOp.getNumParallelLoops() != linalgOp.getNumLoops() ||
        !linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0))
             .isPermutation() ||
        linalgOp.payloadUsesValueFromOperand(linalgOp.getDpsInitOperand(0)))
      return false;
    for (Value input : linalgOp.getDpsInputs())
      if (mayAlias(input, buffer))
        return false;
    bool readsOther = true;
    op->walk([&](memref::LoadOp load) {
      readsOther &= !mayAlias(load.getMemRef(), buffer);
    });
    return readsOther;
  }

  /// The matmul operands (by operand number) that a linalg.transpose wrote
  /// for `op` alone (writtenOnlyFor). oneDNN can read the source through
  /// permuted strides, so these copies are pure overhead on the library
  /// path: the weights of `x @ W^T`, a weight gradient's `lhs^T @ g`.
  SmallVector<std::pair<unsigned, linalg::TransposeOp>>
  absorbableTransposes(linalg::LinalgOp op) {
    SmallVector<std::pair<unsigned, linalg::TransposeOp>> found;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      Value t = operand->get();
      Operation *writer = writtenOnlyFor(op, t, [&](Operation *it) {
        auto transpose = dyn_cast<linalg::TransposeOp>(it);
        return transpose && transpose.getInit() == t &&
                       transpose.hasPureBufferSemantics()
                   ? transpose.getInput()
                   : Value();
      });
      if (writer)
        found.emplace_back(operand->getOperandNumber(),
                           cast<linalg::TransposeOp>(writer));
    }
    return found;
  }

  /// Makes `op` read the sources of `transposes` (absorbableTransposes)
  /// through permuted maps and erases the transposes. A named op becomes
  /// the equivalent generic (matchMatmul reads any maps); returns the op
  /// that is left.
  linalg::LinalgOp absorbTransposes(
      linalg::LinalgOp op,
      ArrayRef<std::pair<unsigned, linalg::TransposeOp>> transposes) {
    MLIRContext *ctx = op.getContext();
    IRRewriter rewriter(ctx);
    linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(*op);
    if (!generic) {
      // This erases `op`: only `generic` is used below.
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
      if (failed(g))
        return op;
      generic = *g;
    }
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    for (auto [number, transpose] : transposes) {
      // Dim i of the transpose's output is dim perm[i] of its source.
      ArrayRef<int64_t> perm = transpose.getPermutation();
      AffineMap map = maps[number];
      SmallVector<AffineExpr> results(map.getNumResults());
      for (auto [i, e] : llvm::enumerate(map.getResults()))
        results[perm[i]] = e;
      maps[number] = AffineMap::get(map.getNumDims(), 0, results, ctx);
      generic->setOperand(number, transpose.getInput());
    }
    generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    for (auto [number, transpose] : transposes)
      transpose.erase();
    return generic;
  }

  /// A padding (a generic marked `marker`: kZeroPadAttr before a conv,
  /// kMaxPoolPadAttr before a max pooling) that wrote the op's input for
  /// the op alone (writtenOnlyFor): oneDNN pads the source itself, so the
  /// copy can go.
  struct FoldablePad {
    linalg::GenericOp pad;
    Value source;                 // the op's input in its place
    std::array<int64_t, 4> sizes; // top, left, bottom, right
  };
  std::optional<FoldablePad> foldablePad(linalg::LinalgOp conv,
                                         StringRef marker) {
    Value input = conv.getDpsInputs()[0];
    // A grouped conv reads the padded NCHW buffer as [N, G, C, H, W].
    auto expand = input.getDefiningOp<memref::ExpandShapeOp>();
    Value padded = expand ? expand.getSrc() : input;
    auto paddedType = cast<MemRefType>(padded.getType());
    FoldablePad found;
    Operation *writer = writtenOnlyFor(conv, input, [&](Operation *it) {
      auto generic = dyn_cast<linalg::GenericOp>(it);
      auto sizes = generic ? generic->getAttrOfType<DenseI64ArrayAttr>(marker)
                           : DenseI64ArrayAttr();
      if (!sizes || sizes.size() != 4 || !generic.hasPureBufferSemantics() ||
          generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1 ||
          generic.getDpsInits()[0] != padded)
        return Value();
      SmallVector<memref::LoadOp> loads;
      generic.getBody()->walk([&](memref::LoadOp l) { loads.push_back(l); });
      if (loads.size() != 1)
        return Value();
      Value source = loads.front().getMemRef();
      auto sourceType = cast<MemRefType>(source.getType());
      if (sourceType.getRank() != 4 || !sourceType.hasStaticShape() ||
          !paddedType.hasStaticShape() ||
          sourceType.getElementType() != paddedType.getElementType())
        return Value();
      for (int d = 0; d < 4; ++d) {
        int64_t extra = d < 2 ? 0 : sizes[d - 2] + sizes[d];
        if (sourceType.getDimSize(d) + extra != paddedType.getDimSize(d))
          return Value();
      }
      found.pad = generic;
      found.source = source;
      llvm::copy(sizes.asArrayRef(), found.sizes.begin());
      return source;
    });
    if (!writer)
      return std::nullopt;
    if (expand) {
      // The source in the grouped form, where its layout allows.
      auto sourceType = cast<MemRefType>(found.source.getType());
      SmallVector<int64_t> shape(expand.getType().getShape());
      shape[3] = sourceType.getDimSize(2);
      shape[4] = sourceType.getDimSize(3);
      FailureOr<MemRefType> type = memref::ExpandShapeOp::computeExpandedType(
          sourceType, shape, expand.getReassociationIndices());
      if (failed(type) || !contiguousPair(*type, 1))
        return std::nullopt;
      OpBuilder b(conv);
      found.source =
          memref::ExpandShapeOp::create(b, expand.getLoc(), *type, found.source,
                                        expand.getReassociationIndices());
    }
    return found;
  }

  /// Replaces `op` by a call of `callee` on its operands (cast to ranked
  /// dynamic strided memrefs, or unranked ones with `unranked`), the extra
  /// operands, state and program, then `params` and the accumulate flag.
  /// An elementwise generic after it that oneDNN post-ops express (per-
  /// channel operands along `channel` of the output; none for nullopt) is
  /// fused into the call.
  /// `inputs` are the call's inputs in place of the op's (a conv's input
  /// that the call pads itself).
  LogicalResult replace(ModuleOp module, linalg::LinalgOp op, StringRef callee,
                        ArrayRef<int64_t> params,
                        std::optional<unsigned> channel, Value weights,
                        bool unranked = false,
                        std::optional<SmallVector<Value>> callInputs = {}) {
    SmallVector<Value> inputs =
        callInputs ? std::move(*callInputs) : op.getDpsInputs();
    SmallVector<int64_t> ranks;
    SmallVector<Type> elements;
    for (Value v : op->getOperands()) {
      auto type = cast<MemRefType>(v.getType());
      ranks.push_back(unranked ? -1 : type.getRank());
      elements.push_back(type.getElementType());
    }
    FailureOr<func::FuncOp> decl =
        declare(module, callee, ranks, elements, params.size() + 1);
    if (failed(decl))
      return failure();
    Value out = op.getDpsInits().front();
    ZeroInit init = zeroInitBefore(op, out);
    std::optional<Epilogue> epilogue;
    if (init.zero && fuse) {
      epilogue = matchEpilogue(op, out, init.erase, channel.value_or(~0u),
                               inputs, out);
      // A grouped conv's epilogue usually reads its output as NCHW, the
      // collapse of (group, channel in group): there the channel dim is
      // oneDNN's (g * F + f), so per-channel operands (a folded batch norm
      // on a depthwise conv) fuse too.
      if (!epilogue && isa<linalg::Conv2DNgchwGfchwOp>(op.getOperation()))
        if (Value nchw = collapsedGroups(out))
          epilogue =
              matchEpilogue(op, nchw, init.erase, /*channel=*/1, inputs, out);
      // Expanding an NCHW output back needs a contiguous one.
      auto outputType = epilogue ? cast<MemRefType>(epilogue->output.getType())
                                 : MemRefType();
      if (outputType &&
          outputType.getRank() != cast<MemRefType>(out.getType()).getRank() &&
          !outputType.getLayout().isIdentity())
        epilogue.reset();
    }
    Value output = epilogue ? epilogue->output : out;

    // The program: flags, count, then kind, operand, alpha, beta.
    int64_t flags =
        isConstantWeights(weights) ? PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS : 0;
    if (winograd && allowsWinograd(op))
      flags |= PADDLE_ONEDNN_FLAG_WINOGRAD;
    SmallVector<int64_t> program{flags, 0};
    if (epilogue) {
      program[1] = epilogue->ops.size();
      for (const PostOp &p : epilogue->ops)
        program.append({p.kind, p.operand, llvm::bit_cast<int64_t>(p.alpha),
                        llvm::bit_cast<int64_t>(p.beta)});
    }
    MLIRContext *ctx = module.getContext();
    auto [programGlobal, state] = addProgramAndState(module, program);

    // A fused call goes where the generic was: its output may be defined
    // after the op (only ops without memory effects are in between).
    OpBuilder b(epilogue ? epilogue->generic.getOperation()
                         : op.getOperation());
    Location loc = op.getLoc();
    if (epilogue && epilogue->residual &&
        !sameBuffer(epilogue->residual, output))
      memref::CopyOp::create(b, loc, epilogue->residual, output);
    SmallVector<Value> args;
    SmallVector<Value> operands(inputs);
    // An NCHW epilogue output of a grouped conv: back to [N, G, F, H, W].
    auto outType = cast<MemRefType>(out.getType());
    if (cast<MemRefType>(output.getType()).getRank() != outType.getRank())
      operands.push_back(memref::ExpandShapeOp::create(
          b, loc, outType.getShape(), output, groupReassociation()));
    else
      operands.push_back(output);
    for (auto [v, rank, element] : llvm::zip(operands, ranks, elements))
      args.push_back(
          memref::CastOp::create(b, loc, dynamicType(ctx, rank, element), v));
    appendExtrasAndGlobals(b, loc, module, args,
                           epilogue ? ArrayRef<Value>(epilogue->operands)
                                    : ArrayRef<Value>(),
                           state, programGlobal);
    for (int64_t p : params)
      args.push_back(arith::ConstantIntOp::create(b, loc, p, 64));
    args.push_back(arith::ConstantIntOp::create(b, loc, init.zero ? 0 : 1, 64));
    func::CallOp::create(b, loc, *decl, args);
    op->erase();
    if (init.erase)
      init.erase->erase();
    if (epilogue)
      epilogue->generic->erase();
    return success();
  }

  /// Whether `op` is a fill of `buffer` with -inf (a max's identity).
  static bool isNegInfFillOf(Operation *op, Value buffer) {
    auto fill = dyn_cast<linalg::FillOp>(op);
    FloatAttr value;
    return fill && fill.hasPureBufferSemantics() &&
           fill.getOutputs().front() == buffer &&
           matchPattern(fill.getInputs().front(), m_Constant(&value)) &&
           value.getValue().isInfinity() && value.getValue().isNegative();
  }

  /// Replaces a max pooling (f32 NCHW buffers with a unit innermost
  /// stride, unit dilations) whose output a -inf fill initializes right
  /// before it (trace calls, allocations and ops without memory effects
  /// aside) by a call of the oneDNN pooling, where the cost model
  /// predicts it faster (our pooling is scalar loops) or with `force`. The
  /// lowering's -inf padding copy folds into the call's padding where it
  /// was written for the pool alone; the fill goes (the call writes every
  /// output element). Other poolings stay.
  LogicalResult replaceMaxPool(ModuleOp module, linalg::PoolingNchwMaxOp op) {
    Value input = op.getInputs()[0], window = op.getInputs()[1],
          output = op.getOutputs()[0];
    auto supported = [](Value v) {
      auto type = dyn_cast<MemRefType>(v.getType());
      return type && type.getRank() == 4 && type.getElementType().isF32() &&
             type.isLastDimUnitStride();
    };
    auto windowType = dyn_cast<MemRefType>(window.getType());
    if (!supported(input) || !supported(output) || !windowType ||
        !windowType.hasStaticShape() || windowType.getRank() != 2 ||
        !llvm::all_of(op.getDilations().getValues<APInt>(),
                      [](const APInt &d) { return d == 1; }))
      return success();
    Operation *fill = nullptr;
    for (Operation *prev = op->getPrevNode(); prev && !fill;
         prev = prev->getPrevNode()) {
      if (isNegInfFillOf(prev, output))
        fill = prev;
      else if (!isTraceCall(prev) && !isMemoryEffectFree(prev) &&
               !onlyAllocates(prev))
        break;
    }
    if (!fill)
      return success();
    std::optional<FoldablePad> pad = foldablePad(op, paddle::kMaxPoolPadAttr);
    double copyBytes = bytesOf(output); // the fill
    if (pad)
      copyBytes += bytesOf(pad->pad.getDpsInits()[0]);
    if (!isWorthLibraryCall(op, /*conv=*/false, Value(), copyBytes,
                            /*flopsPerIteration=*/1))
      return success();
    MLIRContext *ctx = module.getContext();
    Type i64 = IntegerType::get(ctx, 64);
    SmallVector<Type> argTypes(2, dynamicType(ctx, 4));
    argTypes.append(8, i64);
    FailureOr<func::FuncOp> decl = paddle::declareRuntimeFunction(
        module, kMaxPool2D, FunctionType::get(ctx, argTypes, {}));
    if (failed(decl))
      return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<Value> args;
    for (Value v : {pad ? pad->source : input, output})
      args.push_back(memref::CastOp::create(b, loc, dynamicType(ctx, 4), v));
    SmallVector<int64_t> params(windowType.getShape());
    for (const APInt &v : op.getStrides().getValues<APInt>())
      params.push_back(v.getSExtValue());
    std::array<int64_t, 4> padding{};
    if (pad)
      padding = pad->sizes;
    params.append(padding.begin(), padding.end());
    for (int64_t p : params)
      args.push_back(arith::ConstantIntOp::create(b, loc, p, 64));
    func::CallOp::create(b, loc, *decl, args);
    op->erase();
    fill->erase();
    if (pad)
      pad->pad.erase();
    return success();
  }

  /// The call's constant i64 operands from `first` on; nullopt where one
  /// is not a constant.
  static std::optional<SmallVector<int64_t>> constantParams(func::CallOp call,
                                                            unsigned first) {
    SmallVector<int64_t> params;
    for (Value v : call.getOperands().drop_front(first)) {
      std::optional<int64_t> c = getConstantIntValue(v);
      if (!c)
        return std::nullopt;
      params.push_back(*c);
    }
    return params;
  }

  static Value withoutCasts(Value v) {
    while (auto cast = v.getDefiningOp<memref::CastOp>())
      v = cast.getSource();
    return v;
  }

  /// The post-op program a conv call passes (operand 8, a constant
  /// global), or nullopt.
  std::optional<SmallVector<int64_t>> programOf(func::CallOp call) {
    auto get =
        withoutCasts(call.getOperand(8)).getDefiningOp<memref::GetGlobalOp>();
    auto global =
        get ? symbols->lookup<memref::GlobalOp>(get.getName()) : nullptr;
    auto value = global ? dyn_cast_or_null<DenseIntElementsAttr>(
                              global.getInitialValueAttr())
                        : nullptr;
    if (!value || !global.getConstant())
      return std::nullopt;
    SmallVector<int64_t> words;
    for (const APInt &v : value.getValues<APInt>())
      words.push_back(v.getSExtValue());
    if (words.size() < 2 || words[1] < 0 ||
        words.size() != size_t(2 + 4 * words[1]))
      return std::nullopt;
    return words;
  }

  /// Whether a program's post-ops are a bias (first) and eltwise kinds
  /// only, what a depthwise post-op allows on either side of it.
  static bool onlyBiasAndEltwise(ArrayRef<int64_t> program) {
    for (int64_t i = 0; i < program[1]; ++i) {
      int64_t kind = program[2 + 4 * i];
      if (kind == PADDLE_ONEDNN_POST_BIAS ? i != 0
                                          : kind > PADDLE_ONEDNN_POST_GELU_TANH)
        return false;
    }
    return true;
  }

  /// Erases the casts, reshapes, constants and global gets that `roots`
  /// come from where nothing uses them any more, and the globals nothing
  /// else refers to then (the program and state of an erased call).
  void eraseDeadViews(ModuleOp module, ArrayRef<Value> roots) {
    SmallVector<Operation *> worklist;
    for (Value v : roots)
      if (Operation *op = v.getDefiningOp())
        worklist.push_back(op);
    llvm::SmallPtrSet<Operation *, 16> erased;
    llvm::SetVector<StringAttr> globals;
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (erased.contains(op) || !op->use_empty() ||
          !isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
               memref::GetGlobalOp, arith::ConstantOp>(op))
        continue;
      if (auto get = dyn_cast<memref::GetGlobalOp>(op))
        globals.insert(get.getNameAttr().getAttr());
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          worklist.push_back(def);
      erased.insert(op);
      op->erase();
    }
    for (StringAttr name : globals) {
      auto global = symbols->lookup<memref::GlobalOp>(name);
      if (global && global != unused &&
          SymbolTable::symbolKnownUseEmpty(global, module))
        symbols->erase(global);
    }
  }

  /// Folds the depthwise 3x3 conv call `dw` into the 1x1 conv call that
  /// alone writes its input (PADDLE_ONEDNN_POST_DEPTHWISE), where both are
  /// of the forms onednn.h allows; otherwise leaves both.
  void foldDepthwise(ModuleOp module, func::CallOp dw) {
    // stride_h, stride_w, dilations, padding top, left, bottom, right,
    // accumulate.
    std::optional<SmallVector<int64_t>> dwParams = constantParams(dw, 9);
    if (!dwParams || dwParams->size() != 9)
      return;
    int64_t stride = (*dwParams)[0];
    if ((stride != 1 && stride != 2) ||
        ArrayRef<int64_t>(*dwParams) !=
            ArrayRef<int64_t>{stride, stride, 1, 1, 1, 1, 1, 1, 0})
      return;
    Value filter = withoutCasts(dw.getOperand(1));
    auto filterType = dyn_cast<MemRefType>(filter.getType());
    auto input =
        withoutCasts(dw.getOperand(0)).getDefiningOp<memref::ExpandShapeOp>();
    // The output: the NCHW buffer the grouped form expands, or a grouped
    // buffer of its own (collapsed below).
    Value output = withoutCasts(dw.getOperand(2));
    auto outputExpand = output.getDefiningOp<memref::ExpandShapeOp>();
    auto outputType = dyn_cast<MemRefType>(output.getType());
    if (!filterType || !filterType.hasStaticShape() ||
        !filterType.getLayout().isIdentity() || !input ||
        input.getReassociationIndices() != groupReassociation() || !outputType)
      return;
    if (outputExpand
            ? outputExpand.getReassociationIndices() != groupReassociation()
            : outputType.getRank() != 5 || outputType.getDimSize(2) != 1 ||
                  !outputType.getLayout().isIdentity())
      return;
    int64_t channels = filterType.getDimSize(0);
    if (filterType.getShape() != ArrayRef<int64_t>{channels, 1, 1, 3, 3})
      return;
    // The 1x1 result: a buffer of this function's own that the 1x1 call
    // writes and the depthwise call reads, and nothing else uses (memory
    // planning overlaps no other live buffer with it).
    Value middle = input.getSrc();
    if (!isOwnBuffer(middle))
      return;
    func::CallOp conv;
    for (Operation *user : middle.getUsers()) {
      if (user == input.getOperation() || isa<memref::DeallocOp>(user))
        continue;
      auto cast = dyn_cast<memref::CastOp>(user);
      auto call = cast && cast->hasOneUse()
                      ? dyn_cast<func::CallOp>(*cast->user_begin())
                      : func::CallOp();
      if (!call || conv || call.getCallee() != kConv2D ||
          call.getOperand(2) != cast.getResult())
        return;
      conv = call;
    }
    if (!conv || conv->getBlock() != dw->getBlock() ||
        !conv->isBeforeInBlock(dw) ||
        !llvm::all_of(input->getUsers(), [&](Operation *u) {
          return u->hasOneUse() && *u->user_begin() == dw;
        }))
      return;
    std::optional<SmallVector<int64_t>> convParams = constantParams(conv, 9);
    auto weightsType =
        dyn_cast<MemRefType>(withoutCasts(conv.getOperand(1)).getType());
    if (!convParams ||
        ArrayRef<int64_t>(*convParams) !=
            ArrayRef<int64_t>{1, 1, 1, 1, 0, 0, 0, 0, 0} ||
        !weightsType || weightsType.getRank() != 4 ||
        weightsType.getDimSize(0) != channels ||
        weightsType.getDimSize(2) != 1 || weightsType.getDimSize(3) != 1)
      return;
    std::optional<SmallVector<int64_t>> first = programOf(conv),
                                        second = programOf(dw);
    if (!first || !second || !onlyBiasAndEltwise(*first) ||
        !onlyBiasAndEltwise(*second) ||
        ((*first)[0] | (*second)[0]) & PADDLE_ONEDNN_FLAG_WINOGRAD)
      return;

    // The fused program: the 1x1 call's post-ops, the depthwise one, the
    // depthwise call's; extra operands in that order.
    MLIRContext *ctx = module.getContext();
    OpBuilder b(dw);
    Location loc = dw.getLoc();
    Type unrankedF32 = dynamicType(ctx, -1);
    SmallVector<Value> extras;
    SmallVector<int64_t> program{
        ((*first)[0] & PADDLE_ONEDNN_FLAG_CONSTANT_WEIGHTS) |
            (isConstantWeights(filter)
                 ? PADDLE_ONEDNN_FLAG_CONSTANT_DEPTHWISE_WEIGHTS
                 : 0),
        (*first)[1] + 1 + (*second)[1]};
    auto append = [&](ArrayRef<int64_t> words, func::CallOp call) {
      for (int64_t i = 0; i < words[1]; ++i) {
        SmallVector<int64_t> op(words.slice(2 + 4 * i, 4));
        if (op[0] == PADDLE_ONEDNN_POST_BIAS) {
          extras.push_back(call.getOperand(3 + op[1]));
          op[1] = extras.size() - 1;
        }
        program.append(op);
      }
    };
    append(*first, conv);
    extras.push_back(memref::CastOp::create(b, loc, unrankedF32, filter));
    program.append({PADDLE_ONEDNN_POST_DEPTHWISE, int64_t(extras.size() - 1),
                    llvm::bit_cast<int64_t>(double(stride)), 0});
    append(*second, dw);
    // At most a bias on either side and the filter.
    assert(extras.size() <= PADDLE_ONEDNN_MAX_OPERANDS);
    // One state word serves the 1x1 weights and the depthwise filter.
    auto [programGlobal, state] = addProgramAndState(module, program);
    Value nchw = outputExpand ? outputExpand.getSrc()
                              : memref::CollapseShapeOp::create(
                                    b, loc, output, groupReassociation());
    SmallVector<Value> args{
        conv.getOperand(0), conv.getOperand(1),
        memref::CastOp::create(b, loc, dynamicType(ctx, 4), nchw)};
    appendExtrasAndGlobals(b, loc, module, args, extras, state, programGlobal);
    for (int64_t p : *convParams)
      args.push_back(arith::ConstantIntOp::create(b, loc, p, 64));
    func::CallOp::create(b, loc, conv.getCallee(), conv.getResultTypes(), args);
    SmallVector<Value> dead(dw.getOperands());
    dead.append(conv.getOperands().begin() + 2, conv.getOperands().end());
    dw.erase();
    conv.erase();
    eraseDeadViews(module, dead);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<paddle::DeviceSpec> resolved =
        paddle::resolveDeviceSpec(device);
    if (!resolved) {
      module.emitError() << "paddle-use-onednn: "
                         << llvm::toString(resolved.takeError());
      return signalPassFailure();
    }
    spec = std::move(*resolved);
    SymbolTable table(module);
    symbols = &table;
    unused = {};
    SmallVector<linalg::LinalgOp> candidates;
    // Only the convolutions, matmuls and max poolings: a rewrite erases the
    // fill, padding and epilogue generic around its op, which must not be
    // visited later.
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op->getParentOfType<func::FuncOp>() &&
          (isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp,
               linalg::PoolingNchwMaxOp>(op) ||
           matchMatmul(op)))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates) {
      if (auto pool = dyn_cast<linalg::PoolingNchwMaxOp>(op.getOperation())) {
        if (failed(replaceMaxPool(module, pool)))
          return signalPassFailure();
        continue;
      }
      bool conv = isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp>(op);
      std::optional<MatmulForm> matmul;
      if (!conv && !(matmul = matchMatmul(op)))
        continue;
      SmallVector<MemRefType> types = supportedOperands(op);
      if (types.empty())
        continue;
      // bf16 inputs: the `_bf16` kernel (onednn.h).
      auto kernel = [&](StringRef name) {
        return (name + (isBF16Kernel(types) ? kBF16Suffix : "")).str();
      };
      LogicalResult result = success();
      if (matmul) {
        auto transposes = absorbableTransposes(op);
        double copyBytes = 0;
        for (auto &entry : transposes)
          copyBytes += bytesOf(entry.second.getInit());
        if (!isWorthLibraryCall(op, /*conv=*/false, op.getDpsInputs()[1],
                                copyBytes))
          continue;
        if (!transposes.empty()) {
          op = absorbTransposes(op, transposes);
          matmul = matchMatmul(op);
          types = supportedOperands(op);
          if (!matmul || types.empty())
            return signalPassFailure();
        }
        // Per-channel operands follow N, the output's last logical dim.
        unsigned rank = types[2].getRank();
        int64_t n =
            ((matmul->maps[2] >> (kMapBits * (matmul->batch.size() + 1))) &
             15) -
            1;
        (void)rank;
        result = replace(module, op, kernel(kMatmul),
                         {matmul->maps[0], matmul->maps[1], matmul->maps[2]},
                         static_cast<unsigned>(n), op.getDpsInputs()[1],
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
        std::optional<FoldablePad> pad = foldablePad(op, paddle::kZeroPadAttr);
        if (!isWorthLibraryCall(op, /*conv=*/true, op.getDpsInputs()[1],
                                pad ? bytesOf(pad->pad.getDpsInits()[0]) : 0)) {
          if (pad && pad->source.getDefiningOp<memref::ExpandShapeOp>())
            pad->source.getDefiningOp()->erase();
          continue;
        }
        SmallVector<int64_t> params;
        for (DenseIntElementsAttr attr : {strides, dilations})
          for (const APInt &v : attr.getValues<APInt>())
            params.push_back(v.getSExtValue());
        std::array<int64_t, 4> padding{};
        if (pad)
          padding = pad->sizes;
        params.append(padding.begin(), padding.end());
        SmallVector<Value> inputs(op.getDpsInputs());
        if (pad)
          inputs[0] = pad->source;
        // Grouped convs spread channels over two dims: per-channel
        // operands of the [N, G, F, H, W] output follow the group dim
        // where F is 1 (depthwise), and none otherwise; replace() also
        // tries the NCHW collapse.
        std::optional<unsigned> channel = 1;
        if (grouped && types[2].getDimSize(2) != 1)
          channel = std::nullopt;
        result = replace(module, op, kernel(grouped ? kConv2DGrouped : kConv2D),
                         params, channel, op.getDpsInputs()[1],
                         /*unranked=*/false, inputs);
        if (succeeded(result) && pad)
          pad->pad.erase();
      }
      if (failed(result))
        return signalPassFailure();
    }
    if (fuseDepthwise) {
      SmallVector<func::CallOp> depthwise;
      module.walk([&](func::CallOp call) {
        if (call.getCallee() == kConv2DGrouped)
          depthwise.push_back(call);
      });
      for (func::CallOp call : depthwise)
        foldDepthwise(module, call);
      // Its declaration, where every call folded.
      // (Declared outside `symbols`, as every runtime function is.)
      auto decl = dyn_cast_or_null<func::FuncOp>(
          SymbolTable::lookupSymbolIn(module, kConv2DGrouped));
      if (decl && SymbolTable::symbolKnownUseEmpty(decl, module))
        decl.erase();
    }
    if (channelsLast) {
      MLIRContext *ctx = module.getContext();
      auto reorder = [&] {
        return paddle::declareRuntimeFunction(
            module, kReorder,
            FunctionType::get(ctx, {dynamicType(ctx, 4), dynamicType(ctx, 4)},
                              {}));
      };
      SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
      for (func::FuncOp func : funcs)
        if (!func.isExternal() && failed(storeChannelsLast(func, reorder)))
          return signalPassFailure();
    }
  }
};

} // namespace
