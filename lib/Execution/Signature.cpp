//===- Signature.cpp - runtime signatures of a module's functions ---------===//

#include "paddle/Execution/Signature.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Donation.h"

#include <cstring>

#include "paddle/Sharding/Passes.h"
#include "paddle/Support/RuntimeDtype.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::paddle;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
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
  spec.dtype = toRuntimeDtype(t.getElementType());
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

/// The split of a tensor of rank `rank` that `attr` (paddle.sharding)
/// describes, for a mesh of `meshRank` axes.
static llvm::Expected<paddle_tensor_sharding_t>
toSharding(Attribute attr, int64_t rank, size_t meshRank, StringRef function,
           StringRef what, unsigned index) {
  paddle_tensor_sharding_t s;
  std::memset(s.split, -1, sizeof s.split);
  auto dims = dyn_cast_or_null<ArrayAttr>(attr);
  auto bad = [&](const llvm::Twine &why) {
    return makeError("function '" + function + "': " + what + " " +
                     llvm::Twine(index) + ": " + why);
  };
  if (!dims)
    return bad("has no paddle.sharding (how the mesh splits it)");
  if (static_cast<int64_t>(dims.size()) > rank)
    return bad("paddle.sharding lists more dims than the tensor has");
  for (auto [d, axesAttr] : llvm::enumerate(dims)) {
    ArrayRef<int64_t> axes = cast<DenseI64ArrayAttr>(axesAttr).asArrayRef();
    if (axes.size() > PADDLE_MAX_MESH_RANK)
      return bad("dim " + llvm::Twine(d) + " is split over too many axes");
    for (auto [k, a] : llvm::enumerate(axes)) {
      if (a < 0 || a >= static_cast<int64_t>(meshRank))
        return bad("dim " + llvm::Twine(d) + " names mesh axis " +
                   llvm::Twine(a) + " of a " + llvm::Twine(meshRank) +
                   "-axis mesh");
      s.split[d][k] = static_cast<int8_t>(a);
    }
  }
  return s;
}

llvm::Error mlir::paddle::partitionForMesh(ModuleOp module) {
  if (!isShardedModule(module))
    return llvm::Error::success();
  // A device's inputs are blocks of the caller's arrays that the runtime
  // packs: a result written into one in place would be lost.
  dropDonationRequests(module);
  PassManager pm(module.getContext());
  pm.addPass(createPartitionPass());
  if (failed(pm.run(module)))
    return makeError("partitioning for the device mesh failed");
  return llvm::Error::success();
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
    if (auto mesh = func->getAttrOfType<DenseI64ArrayAttr>(
            PaddleDialect::MeshAttrHelper::getNameStr())) {
      if (mesh.empty() || mesh.size() > PADDLE_MAX_MESH_RANK)
        return makeError("function '" + f.name + "': its mesh has " +
                         llvm::Twine(mesh.size()) + " axes (1 to " +
                         llvm::Twine(PADDLE_MAX_MESH_RANK) + " supported)");
      f.mesh.assign(mesh.asArrayRef().begin(), mesh.asArrayRef().end());
      StringRef key = PaddleDialect::ShardingAttrHelper::getNameStr();
      for (unsigned i = 0; i < type.getNumInputs(); ++i) {
        auto s = toSharding(func.getArgAttr(i, key), f.inputs[i].rank,
                            f.mesh.size(), f.name, "argument", i);
        if (!s)
          return s.takeError();
        f.inputShardings.push_back(*s);
      }
      for (unsigned i = 0; i < type.getNumResults(); ++i) {
        if (!returned.test(i))
          continue;
        auto s = toSharding(func.getResultAttr(i, key),
                            cast<RankedTensorType>(type.getResult(i)).getRank(),
                            f.mesh.size(), f.name, "result", i);
        if (!s)
          return s.takeError();
        f.outputShardings.push_back(*s);
      }
    }
    functions.push_back(std::move(f));
  }
  if (functions.empty())
    return makeError("the module has no public function to run");
  return functions;
}

void mlir::paddle::dropSpmdSignatureAttributes(ModuleOp module) {
  StringRef mesh = PaddleDialect::MeshAttrHelper::getNameStr();
  StringRef sharding = PaddleDialect::ShardingAttrHelper::getNameStr();
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func->removeAttr(mesh))
      continue;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.removeArgAttr(i, sharding);
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      func.removeResultAttr(i, StringAttr::get(func.getContext(), sharding));
  }
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
