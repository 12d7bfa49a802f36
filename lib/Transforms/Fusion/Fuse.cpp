//===- Fuse.cpp - group paddle ops into fused kernels ---------------------===//
//
// paddle-fuse decides which ops run as one kernel and records each decision
// as a `paddle.fusion` op; how a group becomes loops is paddle-lower-fusion's
// business. The decision is XLA-style producer/consumer fusion: ops are
// visited from the last to the first, and an op joins the group of its
// users when all of them are in that one group, the kinds combine into
// something the lowering can fuse, and the cost model says the memory
// traffic saved pays for any recomputation.
//
// Visiting consumers first keeps every group convex for free: when an op is
// visited, every member of its users' group comes after it, so no member
// can lie on a path into the op's operands.
//
//===----------------------------------------------------------------------===//

#include "paddle/CostModel/CostModel.h"
#include "paddle/CostModel/DeviceSpec.h"
#include "paddle/Transforms/Passes.h"

#include "dialects/Paddle/IR/PaddleOps.h"
#include "dialects/Paddle/IR/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "paddle-fuse"

namespace mlir::paddle {
#define GEN_PASS_DEF_FUSEPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

namespace {

/// Constants up to this many elements are copied into the groups that read
/// them (so elementwise fusion can fold them); larger ones are inputs.
constexpr int64_t kMaxClonedConstantElements = 64;

enum class Role { None, Elementwise, Reduction, Contraction };

Role roleOf(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return Role::None;
  if (isa<MatmulOp, Conv2DOp>(op))
    return Role::Contraction;
  if (isa<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp, ReduceMeanOp,
          SoftmaxOp, LogSoftmaxOp, LayerNormOp>(op))
    return Role::Reduction;
  // Unary ops carry the Elementwise trait; binary ones broadcast (NumPy
  // rules), which the trait does not allow, so they are listed.
  if (op->hasTrait<OpTrait::Elementwise>() ||
      isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, RemOp, AndOp,
          OrOp, XorOp, CompareOp, SelectOp, CastOp, BroadcastToOp>(op))
    return Role::Elementwise;
  return Role::None;
}

bool isSmallConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  auto type = cast<RankedTensorType>(constant.getType());
  return type.hasStaticShape() &&
         type.getNumElements() <= kMaxClonedConstantElements;
}

std::optional<double> numElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return double(type.getNumElements());
}

struct Group {
  SmallVector<Operation *> ops; // last op first (the visiting order)
  int contractions = 0;
  int reductions = 0;
  /// The shape of the reduced input of the group's reductions.
  RankedTensorType reducedShape;
};

struct FusePass : paddle::impl::FusePassBase<FusePass> {
  using Base::Base;

  void runOnOperation() override;

private:
  bool canJoin(Operation *op, Role role, Group &group,
               ArrayRef<Operation *> users) const;
  bool isProfitable(Operation *op, ArrayRef<Operation *> users) const;
  void materialize(Group &group);

  std::optional<DeviceSpec> spec;
  /// The target `spec` was read from.
  TargetAttr specTarget;
};

} // namespace

bool FusePass::canJoin(Operation *op, Role role, Group &group,
                       ArrayRef<Operation *> users) const {
  // matmul/conv read their operands from memory: no prologue.
  for (Operation *user : users)
    if (roleOf(user) == Role::Contraction)
      return false;
  switch (role) {
  case Role::Contraction:
    // The epilogue of one contraction: elementwise ops only.
    return group.contractions == 0 && group.reductions == 0;
  case Role::Reduction: {
    if (group.contractions != 0)
      return false;
    if (group.reductions == 0)
      return true;
    // Row-wise work over the same rows, which one tile loop can share.
    auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    return input && input == group.reducedShape;
  }
  case Role::Elementwise:
    return true;
  case Role::None:
    return false;
  }
  llvm_unreachable("unknown role");
}

bool FusePass::isProfitable(Operation *op, ArrayRef<Operation *> users) const {
  Value result = op->getResult(0);
  std::optional<double> produced = numElements(result);
  // Recomputation only happens for elementwise producers read broadcast:
  // reductions and contractions are computed once per tile.
  double extraFlops = 0;
  OpCost cost;
  if (roleOf(op) == Role::Elementwise) {
    cost = estimateOp(op);
    for (Operation *user : users) {
      auto userType = cast<RankedTensorType>(user->getResult(0).getType());
      if (userType.getShape() ==
          cast<RankedTensorType>(result.getType()).getShape())
        continue;
      std::optional<double> consumed = numElements(user->getResult(0));
      // Without static sizes the recomputation cannot be bounded.
      if (!produced || !consumed || !cost.known)
        return false;
      if (*consumed > *produced)
        extraFlops += cost.flops * (*consumed / *produced - 1);
    }
  }
  if (extraFlops == 0)
    return true;
  // Saved: the result written once and read by every user.
  double savedBytes =
      *produced *
      (getElementTypeOrSelf(result.getType()).getIntOrFloatBitWidth() / 8.0) *
      (1 + users.size());
  double extraSeconds = extraFlops / spec->peakFlops(cost.computeType);
  double savedSeconds = savedBytes / bandwidthFor(savedBytes, *spec);
  LLVM_DEBUG(llvm::dbgs() << "fuse " << op->getName() << ": recompute "
                          << extraSeconds << " s vs traffic " << savedSeconds
                          << " s\n");
  return extraSeconds <= savedSeconds;
}

/// Replaces the members of `group` by one paddle.fusion op placed at the
/// group's last op (whose result is the group's only result).
void FusePass::materialize(Group &group) {
  SmallVector<Operation *> ops(llvm::reverse(group.ops)); // program order
  Operation *root = ops.back();
  llvm::SmallPtrSet<Operation *, 8> members(ops.begin(), ops.end());

  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> constants;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && members.contains(def))
        continue;
      if (isSmallConstant(operand))
        constants.insert(def);
      else
        inputs.insert(operand);
    }

  StringRef kind = "elementwise";
  for (Operation *op : ops) {
    if (isa<Conv2DOp>(op))
      kind = "conv";
    else if (isa<MatmulOp>(op))
      kind = "matmul";
    else if (isa<SoftmaxOp, LogSoftmaxOp>(op) && kind != "layer_norm")
      kind = "softmax";
    else if (isa<LayerNormOp>(op))
      kind = "layer_norm";
    else if (roleOf(op) == Role::Reduction && kind == "elementwise")
      kind = "reduction";
  }

  OpBuilder builder(root);
  auto fusion =
      FusionOp::create(builder, root->getLoc(), root->getResultTypes(), kind,
                       inputs.getArrayRef());
  Block *body = builder.createBlock(&fusion.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *constant : constants)
    builder.clone(*constant, mapping);
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  YieldOp::create(builder, root->getLoc(),
                  llvm::map_to_vector(root->getResults(), [&](Value v) {
                    return mapping.lookup(v);
                  }));
  root->replaceAllUsesWith(fusion->getResults());
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  for (Operation *constant : constants)
    if (constant->use_empty())
      constant->erase();
}

void FusePass::runOnOperation() {
  func::FuncOp func = getOperation();
  // The spec is parsed once per target this pass instance sees.
  TargetAttr target = getTargetOrDefault(func);
  if (target != specTarget) {
    spec = target.getDeviceSpec();
    specTarget = target;
  }

  for (Block &block : func.getBody()) {
    std::vector<Group> groups;
    DenseMap<Operation *, size_t> groupOf;
    for (Operation &opRef : llvm::reverse(block)) {
      Operation *op = &opRef;
      Role role = roleOf(op);
      if (role == Role::None)
        continue;
      SmallVector<Operation *> users(op->getUsers());
      // Join the users' group when they all belong to one group.
      std::optional<size_t> target;
      bool single = !users.empty();
      for (Operation *user : users) {
        auto it = groupOf.find(user);
        if (it == groupOf.end() || (target && *target != it->second)) {
          single = false;
          break;
        }
        target = it->second;
      }
      // Uses by one op count once (x * x).
      llvm::SetVector<Operation *> distinctUsers(users.begin(), users.end());
      if (single &&
          canJoin(op, role, groups[*target], distinctUsers.getArrayRef()) &&
          isProfitable(op, distinctUsers.getArrayRef())) {
        Group &group = groups[*target];
        group.ops.push_back(op);
        groupOf[op] = *target;
        if (role == Role::Contraction)
          ++group.contractions;
        if (role == Role::Reduction && group.reductions++ == 0)
          group.reducedShape =
              dyn_cast<RankedTensorType>(op->getOperand(0).getType());
        continue;
      }
      Group group;
      group.ops.push_back(op);
      group.contractions = role == Role::Contraction;
      group.reductions = role == Role::Reduction;
      if (role == Role::Reduction)
        group.reducedShape =
            dyn_cast<RankedTensorType>(op->getOperand(0).getType());
      groupOf[op] = groups.size();
      groups.push_back(std::move(group));
    }
    for (Group &group : groups)
      if (group.ops.size() > 1)
        materialize(group);
  }
}
