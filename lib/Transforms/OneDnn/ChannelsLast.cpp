//===- ChannelsLast.cpp - conv activations stored channels-last -----------===//
//
// After paddle-use-onednn has replaced convolutions and max poolings by
// library calls, the activations only those calls (and a few layout-agnostic
// ops) use can be stored channels-last (NHWC), the layout oneDNN's
// convolutions pick for themselves, so that a conv chain runs without a
// reorder on each call's input and output (storeChannelsLast).
//
//===----------------------------------------------------------------------===//

#include "OneDnnMatch.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;

namespace mlir::paddle::onednn {

/// The strides of `shape`, a [N, C, H, W] or grouped [N, G, F, H, W] view
/// of an activation stored channels-last (N, H, W, then C = G * F).
static SmallVector<int64_t> channelsLastStrides(ArrayRef<int64_t> shape) {
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
static bool followsLayout(linalg::GenericOp generic, OpOperand &use) {
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
static SmallVector<Value> layoutOperands(linalg::GenericOp generic) {
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
static void genericChannelsLast(linalg::GenericOp generic) {
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

} // namespace mlir::paddle::onednn
