//===- Location.h - Locations as text for messages --------------*- C++ -*-===//
//
// Messages that reach users (runtime checks, pass errors, kernel names in
// traces) name the source position of an op as "file:line:col".
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_SUPPORT_LOCATION_H
#define PADDLE_SUPPORT_LOCATION_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::paddle {

/// "file:line:col" of the first file location inside `loc` (fused, named
/// and call-site locations are searched), or "" when it has none.
inline std::string fileLineCol(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
              ":" + Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

/// fileLineCol(loc), or the printed location when it holds no file one.
inline std::string describeLocation(Location loc) {
  std::string text = fileLineCol(loc);
  if (text.empty()) {
    llvm::raw_string_ostream os(text);
    loc.print(os);
  }
  return text;
}

} // namespace mlir::paddle

#endif // PADDLE_SUPPORT_LOCATION_H
