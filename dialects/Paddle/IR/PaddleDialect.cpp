//===- PaddleDialect.cpp - paddle dialect registration --------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::paddle;

#include "dialects/Paddle/IR/PaddleDialect.cpp.inc"
#include "dialects/Paddle/IR/PaddleEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Paddle/IR/PaddleAttrs.cpp.inc"

void PaddleDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Paddle/IR/PaddleAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Paddle/IR/PaddleOps.cpp.inc"
      >();
}

Operation *PaddleDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

// The op classes are defined once, here; their hand-written methods live in
// one file per category (ElementwiseOps.cpp, ShapeOps.cpp, ...).
#define GET_OP_CLASSES
#include "dialects/Paddle/IR/PaddleOps.cpp.inc"
