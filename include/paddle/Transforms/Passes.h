//===- Passes.h - paddle transformation passes -------------------*- C++
//-*-===//

#ifndef PADDLE_TRANSFORMS_PASSES_H
#define PADDLE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::paddle {

#define GEN_PASS_DECL
#include "paddle/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "paddle/Transforms/Passes.h.inc"

} // namespace mlir::paddle

#endif // PADDLE_TRANSFORMS_PASSES_H
