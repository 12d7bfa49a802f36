//===- Passes.h - SPMD partitioning passes -----------------------*- C++
//-*-===//

#ifndef PADDLE_SHARDING_PASSES_H
#define PADDLE_SHARDING_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace paddle {

#define GEN_PASS_DECL
#include "paddle/Sharding/Passes.h.inc"

/// Whether `module` holds a `shard.grid`: it is to be partitioned.
bool isShardedModule(Operation *module);

/// paddle-auto-shard{marked-only}, sharding-propagation,
/// paddle-complete-sharding, shard-partition, paddle-lower-collectives: a
/// module with user shardings to one SPMD program per device (the
/// `paddle-spmd-pipeline`).
void buildSpmdPipeline(OpPassManager &pm);

#define GEN_PASS_REGISTRATION
#include "paddle/Sharding/Passes.h.inc"

} // namespace paddle
} // namespace mlir

#endif // PADDLE_SHARDING_PASSES_H
