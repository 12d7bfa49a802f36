//===- PaddleOps.h - paddle dialect ------------------------------*- C++
//-*-===//

#ifndef PADDLE_DIALECT_PADDLE_IR_PADDLEOPS_H
#define PADDLE_DIALECT_PADDLE_IR_PADDLEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Paddle/IR/TypeInference.h"

namespace mlir::paddle {
struct DeviceSpec;
} // namespace mlir::paddle

// The attributes before the dialect, whose helpers for its discardable
// attributes (paddle.target, ...) use their classes.
#include "dialects/Paddle/IR/PaddleEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/Paddle/IR/PaddleAttrs.h.inc"

#include "dialects/Paddle/IR/PaddleDialect.h.inc"
#include "dialects/Paddle/IR/PaddleInterfaces.h.inc"

namespace mlir::paddle {
/// Every operand and result type of the op fits in memory arithmetic
/// (verifyTensorSizes); Paddle_Op gives it to every paddle op.
template <typename ConcreteType>
class SizedTensors
    : public ::mlir::OpTrait::TraitBase<ConcreteType, SizedTensors> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyTensorSizes(op);
  }
};
} // namespace mlir::paddle

#define GET_OP_CLASSES
#include "dialects/Paddle/IR/PaddleOps.h.inc"

#endif // PADDLE_DIALECT_PADDLE_IR_PADDLEOPS_H
