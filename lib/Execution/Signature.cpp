//===- Signature.cpp - runtime signatures of a module's functions ---------===//

#include "paddle/Execution/Signature.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Donation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::paddle;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static paddle_dtype_t toDtype(Type t) {
  if (t.isF32())
    return PADDLE_F32;
  if (t.isF16())
    return PADDLE_F16;
  if (t.isBF16())
    return PADDLE_BF16;
  if (t.isF64())
    return PADDLE_F64;
  if (t.isInteger(1))
    return PADDLE_I1;
  if (t.isInteger(8))
    return PADDLE_I8;
  if (t.isInteger(32))
    return PADDLE_I32;
  if (t.isInteger(64))
    return PADDLE_I64;
  return PADDLE_DTYPE_INVALID;
}

static llvm::Expected<paddle_tensor_spec_t>
toSpec(Type type, StringRef function, StringRef what, unsigned index) {
  auto t = dyn_cast<RankedTensorType>(type);
  std::string typeStr;
  llvm::raw_string_ostream os(typeStr);
  os << type;
  if (!t)
    return makeError("function '" + function + "': " + what + " " +
                     llvm::Twine(index) + " has type " + typeStr +
                     ", expected a ranked tensor");
  paddle_tensor_spec_t spec{};
  spec.dtype = toDtype(t.getElementType());
  if (spec.dtype == PADDLE_DTYPE_INVALID)
    return makeError("function '" + function + "': " + what + " " +
                     llvm::Twine(index) + " has unsupported element type in " +
                     typeStr);
  if (t.getRank() > PADDLE_MAX_RANK)
    return makeError("function '" + function + "': " + what + " " +
                     llvm::Twine(index) + " has rank above " +
                     llvm::Twine(PADDLE_MAX_RANK));
  spec.rank = t.getRank();
  for (int64_t d = 0; d < t.getRank(); ++d)
    spec.shape[d] = t.isDynamicDim(d) ? PADDLE_DYNAMIC_DIM : t.getDimSize(d);
  return spec;
}

llvm::Expected<std::vector<FunctionSignature>>
mlir::paddle::collectSignatures(ModuleOp module) {
  std::vector<FunctionSignature> functions;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    FunctionSignature f;
    f.name = func.getName().str();
    FunctionType type = func.getFunctionType();
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      auto spec = toSpec(t, f.name, "argument", i);
      if (!spec)
        return spec.takeError();
      f.inputs.push_back(*spec);
    }
    std::string donationError;
    auto donated = getDonatedArguments(func, [&](const llvm::Twine &message) {
      donationError = message.str();
    });
    if (failed(donated))
      return makeError(donationError);
    llvm::BitVector returned(type.getNumResults(), true);
    for (const DonatedArgument &d : *donated) {
      f.aliases.push_back({d.argument, d.result});
      returned.reset(d.result);
    }
    for (auto [i, t] : llvm::enumerate(type.getResults())) {
      auto spec = toSpec(t, f.name, "result", i);
      if (!spec)
        return spec.takeError();
      if (returned.test(i))
        f.outputs.push_back(*spec);
    }
    functions.push_back(std::move(f));
  }
  if (functions.empty())
    return makeError("the module has no public function to run");
  return functions;
}

std::vector<std::string> mlir::paddle::takeKernelNames(ModuleOp module) {
  std::vector<std::string> names;
  if (auto attr = module->getAttrOfType<ArrayAttr>(
          paddle::PaddleDialect::KernelNamesAttrHelper::getNameStr())) {
    for (Attribute name : attr)
      names.push_back(cast<StringAttr>(name).str());
    module->removeAttr(
        paddle::PaddleDialect::KernelNamesAttrHelper::getNameStr());
  }
  return names;
}
