//===- PaddleDialect.cpp - paddle dialect registration --------------------===//

#include "dialects/Paddle/IR/GradientUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::paddle;

#include "dialects/Paddle/IR/PaddleDialect.cpp.inc"
#include "dialects/Paddle/IR/PaddleEnums.cpp.inc"
#include "dialects/Paddle/IR/PaddleInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Paddle/IR/PaddleAttrs.cpp.inc"

namespace {
/// Every paddle op is a pure tensor computation (paddle.fusion's region is
/// isolated and only holds such ops), so calls of functions made of paddle
/// ops may be inlined (paddle-autodiff asks for
/// `--inline` before it differentiates a function that makes calls).
struct PaddleInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void PaddleDialect::initialize() {
  addInterfaces<PaddleInlinerInterface>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Paddle/IR/PaddleAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Paddle/IR/PaddleOps.cpp.inc"
      >();
  // Gradient rules (paddle-autodiff), one file per category of ops.
  MLIRContext *ctx = getContext();
  attachElementwiseGradients(ctx);
  attachShapeGradients(ctx);
  attachReductionGradients(ctx);
  attachNNGradients(ctx);
  attachNormalizationGradients(ctx);
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
