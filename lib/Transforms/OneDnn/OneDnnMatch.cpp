//===- OneDnnMatch.cpp - what paddle-use-onednn can hand to oneDNN -------===//
//
// The matching half of paddle-use-onednn: which linalg ops and operands the
// runtime's kernels take (matchMatmul, supportedOperands), where buffers may
// alias (planned workspace views, allocations, globals), how an op's output
// starts (zeroInitBefore), and which copies before an op the call makes
// unnecessary (writtenOnlyFor). Nothing here changes the IR; the pass
// (UseOneDnn.cpp) decides and rewrites.
//
//===----------------------------------------------------------------------===//

#include "OneDnnMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <cstdint>

using namespace mlir;

namespace mlir::paddle::onednn {

/// The kernel `callee` runs, without the `_bf16` of a bf16 variant.
static StringRef kernelOf(StringRef callee) {
  return callee.ends_with(kBF16Suffix) ? callee.drop_back(kBF16Suffix.size())
                                       : callee;
}

/// The operand a call of one of the kernels writes (its output): operand 2
/// of the matmul and the convolutions, operand 1 of the pooling and the
/// reorder; -1 for any other call.
static int libraryOutput(func::CallOp call) {
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

/// oneDNN's limit on dims (DNNL_MAX_NDIMS).
static constexpr int64_t kMaxDims = 12;

/// Whether `op`'s body is `out + in0 * in1` (f32, either operand order),
/// or the same on both inputs extended from bf16 to f32 (a bf16 x bf16 ->
/// f32 contraction).
static bool hasMatmulBody(linalg::LinalgOp op) {
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
Type dynamicType(MLIRContext *ctx, int64_t rank, Type element) {
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

static bool isZeroFillOf(Operation *op, Value buffer) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  return fill && fill.getOutputs().front() == buffer &&
         matchPattern(fill.getInputs().front(), m_AnyZeroFloat());
}

/// Whether `op` may write memory aliasing `buffer` (unknown effects: yes).
static bool mayWrite(Operation *op, Value buffer) {
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
static bool mayAccess(Operation *op, Value buffer) {
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
static bool isKnownZero(Value buffer, Operation *at) {
  for (Operation *prev = at->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (isZeroFillOf(prev, buffer))
      return true;
    if (mayWrite(prev, buffer))
      return false;
  }
  return false;
}

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
// Grouped convs and buffers of the function's own.
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Copies written for an op alone, which a library call reads through.
//===----------------------------------------------------------------------===//

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
  if (!isa_and_nonnull<memref::AllocOp, memref::ViewOp>(buffer.getDefiningOp()))
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

} // namespace mlir::paddle::onednn
