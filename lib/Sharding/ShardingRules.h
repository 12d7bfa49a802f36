//===- ShardingRules.h - how each paddle op's dims can be split -*- C++ -*-===//
//
// A sharding rule describes a paddle op as a loop nest, the way linalg
// does: its loops (parallel, or a reduction of some kind) and, for every
// tensor operand and result, which loop each dim runs along. A dim that
// runs along no loop (a softmax's normalized dim, a broadcast size-1 dim, a
// convolution's spatial dims, a sliced dim) cannot be split: it is whole on
// every device. One generic ShardingInterface model (ShardingInterfaceImpl)
// derives propagation and partition from the rule, so a new op needs only
// its rule.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_LIB_SHARDING_SHARDINGRULES_H
#define PADDLE_LIB_SHARDING_SHARDINGRULES_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Operation.h"

namespace mlir::paddle {

struct ShardingRule {
  /// A tensor dim that runs along no loop: never split.
  static constexpr int64_t kWhole = -1;

  SmallVector<utils::IteratorType> loops;
  /// Per loop; meaningful for reduction loops only.
  SmallVector<shard::ReductionKind> kinds;
  /// For each operand, then each result: per dim, its loop or kWhole.
  /// Empty for a value that is not a ranked tensor.
  SmallVector<SmallVector<int64_t>> dims;

  int64_t addLoop(utils::IteratorType type = utils::IteratorType::parallel,
                  shard::ReductionKind kind = shard::ReductionKind::Sum) {
    loops.push_back(type);
    kinds.push_back(kind);
    return loops.size() - 1;
  }
};

/// The rule of `op` (a paddle op). Ops without a useful split (constants,
/// random numbers) have rules whose dims are all whole: they are computed
/// whole on every device and sliced where a user needs a part.
ShardingRule getShardingRule(Operation *op);

} // namespace mlir::paddle

#endif // PADDLE_LIB_SHARDING_SHARDINGRULES_H
