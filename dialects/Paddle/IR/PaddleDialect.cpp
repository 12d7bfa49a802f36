//===- PaddleDialect.cpp - paddle dialect registration --------------------===//

#include "dialects/Paddle/IR/GradientUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/IR/BuiltinOps.h"
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

namespace {
/// A declared attribute (discardableAttrs in PaddleBase.td): its name, the
/// check of its value and what the check expects.
struct DeclaredAttr {
  llvm::StringRef name;
  bool (*isValid)(Attribute);
  llvm::StringRef expected;
};

template <typename Helper, typename T>
DeclaredAttr declare(llvm::StringRef expected) {
  return {Helper::getNameStr(), [](Attribute a) { return isa<T>(a); },
          expected};
}

/// The attributes on operations; `paddle.aliasing_output` is the one on
/// function arguments.
const DeclaredAttr *lookupDeclared(llvm::StringRef name) {
  using D = PaddleDialect;
  static const DeclaredAttr attrs[] = {
      declare<D::TargetAttrHelper, TargetAttr>("a #paddle.target"),
      declare<D::ZeroPadAttrHelper, DenseI64ArrayAttr>("an array<i64>"),
      declare<D::MaxPoolPadAttrHelper, DenseI64ArrayAttr>("an array<i64>"),
      declare<D::MinTaskSizeAttrHelper, IntegerAttr>("an integer"),
      declare<D::PartAttrHelper, UnitAttr>("a unit attribute"),
      declare<D::KernelNamesAttrHelper, ArrayAttr>("an array"),
      declare<D::MemoryAttrHelper, DictionaryAttr>("a dictionary"),
      declare<D::BufferAttrHelper, DictionaryAttr>("a dictionary"),
      declare<D::UnplannedAttrHelper, StringAttr>("a string"),
      declare<D::VjpOfAttrHelper, FlatSymbolRefAttr>("a flat symbol reference"),
      declare<D::WrtAttrHelper, DenseI64ArrayAttr>("an array<i64>"),
      declare<D::DonatedResultsAttrHelper, DenseI64ArrayAttr>("an array<i64>"),
      declare<D::MeshAttrHelper, DenseI64ArrayAttr>("an array<i64>"),
      declare<D::AutoShardAttrHelper, UnitAttr>("a unit attribute"),
      declare<D::PlanAttrHelper, DictionaryAttr>("a dictionary"),
      {D::AliasingOutputAttrHelper::getNameStr(),
       [](Attribute a) {
         auto index = dyn_cast<IntegerAttr>(a);
         return index && index.getType().isInteger(64);
       },
       "an i64 result index"},
      {D::ShardingAttrHelper::getNameStr(),
       [](Attribute a) {
         auto dims = dyn_cast<ArrayAttr>(a);
         return dims && llvm::all_of(dims, [](Attribute d) {
                  return isa<DenseI64ArrayAttr>(d);
                });
       },
       "an array of array<i64> (per dim, the mesh axes)"},
  };
  for (const DeclaredAttr &attr : attrs)
    if (attr.name == name)
      return &attr;
  return nullptr;
}

enum class Place { Operation, Argument, Result };

/// `attr`'s name is a declared attribute of a place `where` allows and its
/// value has the declared type.
LogicalResult verifyDeclared(NamedAttribute attr, Place where,
                             llvm::function_ref<InFlightDiagnostic()> error) {
  llvm::StringRef name = attr.getName().getValue();
  const DeclaredAttr *declared = lookupDeclared(name);
  if (!declared)
    return error() << "unknown attribute '" << name
                   << "' (the paddle.* attributes are declared in "
                      "PaddleBase.td)";
  bool argument = name == PaddleDialect::AliasingOutputAttrHelper::getNameStr();
  bool value = name == PaddleDialect::ShardingAttrHelper::getNameStr();
  bool allowed = argument ? where == Place::Argument
                 : value  ? where != Place::Operation
                          : where == Place::Operation;
  if (!allowed)
    return error() << "'" << name << "' belongs on "
                   << (argument ? "a function argument"
                       : value  ? "a function argument or result"
                                : "an operation");
  if (!declared->isValid(attr.getValue()))
    return error() << "'" << name << "' must be " << declared->expected
                   << ", got " << attr.getValue();
  return success();
}
} // namespace

LogicalResult PaddleDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  if (failed(verifyDeclared(attr, Place::Operation,
                            [&] { return op->emitError(); })))
    return failure();
  if (attr.getName() == TargetAttrHelper::getNameStr() && !isa<ModuleOp>(op))
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' belongs on a module, not on '" << op->getName()
                           << "'";
  return success();
}

LogicalResult PaddleDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                      unsigned,
                                                      NamedAttribute attr) {
  return verifyDeclared(attr, Place::Argument, [&] { return op->emitError(); });
}

LogicalResult PaddleDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned, unsigned,
                                                         NamedAttribute attr) {
  return verifyDeclared(attr, Place::Result, [&] { return op->emitError(); });
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
