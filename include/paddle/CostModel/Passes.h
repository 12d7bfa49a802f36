//===- Passes.h - cost model passes ------------------------------*- C++
//-*-===//

#ifndef PADDLE_COSTMODEL_PASSES_H
#define PADDLE_COSTMODEL_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::paddle {

struct TargetChanges;

#define GEN_PASS_DECL
#include "paddle/CostModel/Passes.h.inc"

/// paddle-set-target with `changes` (Target.h) as its options.
std::unique_ptr<Pass> createSetTargetPass(const TargetChanges &changes);

#define GEN_PASS_REGISTRATION
#include "paddle/CostModel/Passes.h.inc"

} // namespace mlir::paddle

#endif // PADDLE_COSTMODEL_PASSES_H
