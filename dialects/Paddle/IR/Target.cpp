//===- Target.cpp - the target a module is compiled for -------------------===//

#include "dialects/Paddle/IR/Target.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::paddle;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A JSON value as an attribute: objects become dictionaries, arrays arrays,
/// integers i64 and other numbers f64.
Attribute toAttribute(MLIRContext *context, const llvm::json::Value &value) {
  Builder b(context);
  if (const llvm::json::Object *object = value.getAsObject()) {
    NamedAttrList entries;
    for (const auto &[key, member] : *object)
      entries.append(key, toAttribute(context, member));
    return entries.getDictionary(context);
  }
  if (const llvm::json::Array *array = value.getAsArray())
    return b.getArrayAttr(llvm::map_to_vector(
        *array, [&](const auto &v) { return toAttribute(context, v); }));
  if (std::optional<llvm::StringRef> s = value.getAsString())
    return b.getStringAttr(*s);
  if (std::optional<bool> flag = value.getAsBoolean())
    return b.getBoolAttr(*flag);
  if (std::optional<int64_t> i = value.getAsInteger())
    return b.getI64IntegerAttr(*i);
  if (std::optional<double> d = value.getAsNumber())
    return b.getF64FloatAttr(*d);
  return UnitAttr::get(context);
}

/// The reverse of toAttribute; an attribute that has no JSON form is an
/// error naming its path.
llvm::Expected<llvm::json::Value> toJson(Attribute attr,
                                         const std::string &path) {
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute entry : dict) {
      auto member =
          toJson(entry.getValue(), path + "." + entry.getName().str());
      if (!member)
        return member.takeError();
      object[entry.getName().getValue()] = std::move(*member);
    }
    return llvm::json::Value(std::move(object));
  }
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array elements;
    for (auto [i, element] : llvm::enumerate(array)) {
      auto member = toJson(element, path + "[" + std::to_string(i) + "]");
      if (!member)
        return member.takeError();
      elements.push_back(std::move(*member));
    }
    return llvm::json::Value(std::move(elements));
  }
  if (auto s = dyn_cast<StringAttr>(attr))
    return llvm::json::Value(s.getValue().str());
  if (auto flag = dyn_cast<BoolAttr>(attr))
    return llvm::json::Value(flag.getValue());
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (i.getValue().getSignificantBits() > 64)
      return makeError(path + ": integer does not fit in 64 bits");
    return llvm::json::Value(i.getValue().getSExtValue());
  }
  if (auto f = dyn_cast<FloatAttr>(attr))
    return llvm::json::Value(f.getValueAsDouble());
  return makeError(path + ": expected a dictionary, array, string, integer "
                          "or float attribute");
}

llvm::Expected<DeviceSpec> specFromAttribute(DictionaryAttr spec) {
  auto json = toJson(spec, "$");
  if (!json)
    return json.takeError();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << *json;
  return parseDeviceSpec(text, "#paddle.target spec");
}

/// "a, b or c" of an enum's names.
template <typename Enum, typename Stringify>
std::string listNames(uint64_t maxValue, Stringify stringify) {
  std::string names;
  for (uint64_t i = 0; i <= maxValue; ++i) {
    if (i)
      names += i == maxValue ? " or " : ", ";
    names += stringify(static_cast<Enum>(i)).str();
  }
  return names;
}

bool isVectorWidth(int64_t bits) {
  return bits == 128 || bits == 256 || bits == 512;
}

} // namespace

TargetAttr TargetAttr::get(MLIRContext *context, const DeviceSpec &spec,
                           int64_t vectorBits, LibraryChoice library,
                           Precision precision) {
  // serializeDeviceSpec writes valid JSON; the notes stay in the file.
  llvm::json::Value json =
      cantFail(llvm::json::parse(serializeDeviceSpec(spec)));
  llvm::json::Object &object = *json.getAsObject();
  object.erase("notes");
  object.erase("source");
  auto dict = cast<DictionaryAttr>(
      toAttribute(context, llvm::json::Value(std::move(object))));
  return get(context, spec.name, vectorBits, library, precision, dict);
}

DeviceSpec TargetAttr::getDeviceSpec() const {
  llvm::Expected<DeviceSpec> spec = specFromAttribute(getSpec());
  if (!spec)
    llvm::report_fatal_error(llvm::Twine("unverified #paddle.target: ") +
                             llvm::toString(spec.takeError()));
  return std::move(*spec);
}

LogicalResult
TargetAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                   llvm::StringRef device, int64_t vectorBits,
                   LibraryChoice library, Precision precision,
                   DictionaryAttr spec) {
  if (!isVectorWidth(vectorBits))
    return emitError() << "vector_bits must be 128, 256 or 512; got "
                       << vectorBits;
  llvm::Expected<DeviceSpec> parsed = specFromAttribute(spec);
  if (!parsed)
    return emitError() << llvm::toString(parsed.takeError());
  if (parsed->name != device)
    return emitError() << "device \"" << device
                       << "\" differs from the spec's name \"" << parsed->name
                       << "\"";
  return success();
}

int64_t mlir::paddle::getHostVectorBits() {
  // Once per process: the query reads the CPU's features anew each time
  // (0.1 ms).
  static const int64_t bits =
      llvm::sys::getHostCPUFeatures().lookup("avx512f") ? 512 : 256;
  return bits;
}

TargetAttr mlir::paddle::getDefaultTarget(MLIRContext *context) {
  // Once per process: this machine's calibrated spec where
  // `paddle-calibrate --install` measured this CPU, else the built-in
  // default (part of the build and tested: resolving it cannot fail).
  static const DeviceSpec spec = [] {
    if (std::optional<DeviceSpec> host = loadInstalledHostSpec())
      return std::move(*host);
    return cantFail(resolveDeviceSpec(kDefaultDevice));
  }();
  return TargetAttr::get(context, spec, getHostVectorBits(),
                         LibraryChoice::Auto, Precision::F32);
}

TargetAttr mlir::paddle::lookupTarget(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  for (; module; module = module->getParentOfType<ModuleOp>())
    if (auto target = module->getAttrOfType<TargetAttr>(
            PaddleDialect::TargetAttrHelper::getNameStr()))
      return target;
  return {};
}

TargetAttr mlir::paddle::getTargetOrDefault(Operation *op) {
  if (TargetAttr target = lookupTarget(op))
    return target;
  return getDefaultTarget(op->getContext());
}

TargetAttr mlir::paddle::getOrAttachTarget(ModuleOp module) {
  if (TargetAttr target = lookupTarget(module))
    return target;
  TargetAttr target = getDefaultTarget(module.getContext());
  module->setAttr(PaddleDialect::TargetAttrHelper::getNameStr(), target);
  return target;
}

/// The checks of every field but the device, which needs resolving.
static llvm::Error checkFields(const TargetChanges &changes) {
  if (!changes.library.empty() && !symbolizeLibraryChoice(changes.library))
    return makeError("library must be " +
                     listNames<LibraryChoice>(getMaxEnumValForLibraryChoice(),
                                              stringifyLibraryChoice) +
                     "; got '" + changes.library + "'");
  if (!changes.precision.empty() && !symbolizePrecision(changes.precision))
    return makeError(
        "precision must be " +
        listNames<Precision>(getMaxEnumValForPrecision(), stringifyPrecision) +
        "; got '" + changes.precision + "'");
  if (changes.vectorBits != 0 && !isVectorWidth(changes.vectorBits))
    return makeError("vector-bits must be 128, 256 or 512; got " +
                     llvm::Twine(changes.vectorBits));
  return llvm::Error::success();
}

static llvm::Expected<DeviceSpec> resolveDevice(llvm::StringRef device) {
  llvm::Expected<DeviceSpec> spec = resolveDeviceSpec(device);
  if (!spec)
    return makeError("device: " + llvm::toString(spec.takeError()));
  return spec;
}

llvm::Error mlir::paddle::checkTargetChanges(const TargetChanges &changes) {
  if (llvm::Error error = checkFields(changes))
    return error;
  if (!changes.device.empty()) {
    llvm::Expected<DeviceSpec> spec = resolveDevice(changes.device);
    if (!spec)
      return spec.takeError();
  }
  return llvm::Error::success();
}

llvm::Expected<TargetAttr>
mlir::paddle::applyTargetChanges(TargetAttr base,
                                 const TargetChanges &changes) {
  if (llvm::Error error = checkFields(changes))
    return std::move(error);
  llvm::Expected<DeviceSpec> spec =
      changes.device.empty() ? llvm::Expected<DeviceSpec>(base.getDeviceSpec())
                             : resolveDevice(changes.device);
  if (!spec)
    return spec.takeError();
  return TargetAttr::get(
      base.getContext(), *spec,
      changes.vectorBits ? changes.vectorBits : base.getVectorBits(),
      changes.library.empty() ? base.getLibrary()
                              : *symbolizeLibraryChoice(changes.library),
      changes.precision.empty() ? base.getPrecision()
                                : *symbolizePrecision(changes.precision));
}
