//===- BuiltinSpecs.cpp - the device specs compiled into the tools --------===//
//
// specs/devices/*.json and specs/clusters/*.json, embedded at build time
// (EmbedSpecs.cmake), looked up by file name.
//
//===----------------------------------------------------------------------===//

#include "paddle/CostModel/DeviceSpec.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir::paddle;

namespace {
struct BuiltinSpec {
  const char *name;
  const char *json;
};
const BuiltinSpec kBuiltinSpecs[] = {
#include "BuiltinDeviceSpecs.inc"
};
const BuiltinSpec kBuiltinClusters[] = {
#include "BuiltinClusterSpecs.inc"
};
} // namespace

std::vector<std::string> mlir::paddle::builtinDeviceNames() {
  std::vector<std::string> names;
  for (const BuiltinSpec &spec : kBuiltinSpecs)
    names.push_back(spec.name);
  return names;
}

llvm::Expected<DeviceSpec>
mlir::paddle::resolveDeviceSpec(llvm::StringRef nameOrPath) {
  for (const BuiltinSpec &spec : kBuiltinSpecs)
    if (nameOrPath == spec.name)
      return parseDeviceSpec(spec.json,
                             ("built-in spec '" + nameOrPath + "'").str());
  // A path has a separator or a .json suffix; anything else was meant as a
  // built-in name, and the error lists them.
  if (!nameOrPath.contains('/') && !nameOrPath.ends_with(".json"))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown device '" + nameOrPath +
                                       "': not a built-in spec (" +
                                       llvm::join(builtinDeviceNames(), ", ") +
                                       ") nor a path to a .json file");
  return loadDeviceSpec(nameOrPath);
}

std::vector<std::string> mlir::paddle::builtinClusterNames() {
  std::vector<std::string> names;
  for (const BuiltinSpec &spec : kBuiltinClusters)
    names.push_back(spec.name);
  return names;
}

llvm::Expected<ClusterSpec>
mlir::paddle::resolveClusterSpec(llvm::StringRef nameOrPath) {
  for (const BuiltinSpec &spec : kBuiltinClusters)
    if (nameOrPath == spec.name)
      return parseClusterSpec(spec.json,
                              ("built-in cluster '" + nameOrPath + "'").str());
  if (!nameOrPath.contains('/') && !nameOrPath.ends_with(".json"))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown cluster '" + nameOrPath +
                                       "': not a built-in spec (" +
                                       llvm::join(builtinClusterNames(), ", ") +
                                       ") nor a path to a .json file");
  return loadClusterSpec(nameOrPath);
}
