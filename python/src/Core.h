//===- Core.h - shared pieces of the paddle_mlir._core extension -*- C++
//-*-===//
//
// The objects the Python bindings hand out (Context, Module, Value), the
// diagnostic capture that turns MLIR diagnostics into Python exceptions, and
// the entry points each source file uses to add its bindings.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_PYTHON_CORE_H
#define PADDLE_PYTHON_CORE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace paddle_py {

namespace py = pybind11;

/// One diagnostic as Python sees it.
struct Diagnostic {
  std::string severity; // "error", "warning", "note", "remark"
  std::string location; // "file:line:col", or "" when unknown
  std::string message;
  /// `location: severity: message` (or `severity: message` without one).
  std::string format() const;
};

/// Raised as paddle_mlir._core.MLIRError: parsing, verification or a pass
/// failed. `what` is the headline; the diagnostics follow it in the text.
struct MLIRError {
  std::string what;
  std::vector<Diagnostic> diagnostics;
  std::string message() const;
};

/// Collects every diagnostic emitted in `context` while alive, so that none
/// reaches stderr and a failure can report them all in its exception.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(mlir::MLIRContext *context);
  std::vector<Diagnostic> take() { return std::move(diagnostics); }
  /// Throws MLIRError with `what` and the diagnostics collected so far.
  [[noreturn]] void fail(const std::string &what);

private:
  std::vector<Diagnostic> diagnostics;
  mlir::ScopedDiagnosticHandler handler;
};

/// `file:line:col` of the first file location inside `loc`, or "".
std::string formatLocation(mlir::Location loc);

/// An MLIRContext with every dialect our pipelines use, loaded.
struct PaddleContext {
  PaddleContext();
  mlir::MLIRContext context;
};
using ContextRef = std::shared_ptr<PaddleContext>;

/// A module owned by Python. `epoch` counts the transformations that may
/// erase IR (pass pipelines, erase_function): Values and FunctionBuilders
/// created before one are stale and refuse to touch the IR, which may be
/// gone, rather than crash.
struct PaddleModule {
  PaddleModule(ContextRef context, mlir::OwningOpRef<mlir::ModuleOp> module)
      : context(std::move(context)), module(std::move(module)) {}
  ContextRef context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  uint64_t epoch = 0;
  /// Functions removed by erase_function: kept (detached) so that Values
  /// into them stay valid memory until the module dies.
  std::vector<mlir::OwningOpRef<mlir::Operation *>> graveyard;

  mlir::ModuleOp get() { return *module; }
  mlir::MLIRContext *ctx() { return &context->context; }
};
using ModuleRef = std::shared_ptr<PaddleModule>;

/// An SSA value of a module being built.
struct PaddleValue {
  mlir::Value value;
  ModuleRef owner;
  uint64_t epoch;
  /// The value, or a RuntimeError when the module was transformed since.
  mlir::Value get() const;
};

/// A `(file, line, col)` tuple or None as an MLIR location.
mlir::Location toLocation(mlir::MLIRContext *ctx, const py::object &loc);
/// Parses an MLIR type / attribute; MLIRError naming `what` otherwise.
mlir::Type parseTypeOrThrow(mlir::MLIRContext *ctx, const std::string &text,
                            const std::string &what);
mlir::Attribute parseAttrOrThrow(mlir::MLIRContext *ctx,
                                 const std::string &text,
                                 const std::string &what);
/// The MLIR element type name of a tensor type ("f32", "i1", ...).
std::string typeToString(mlir::Type type);

void bindModule(py::module_ &m);
void bindBuilder(py::module_ &m);
void bindExecution(py::module_ &m);

} // namespace paddle_py

#endif // PADDLE_PYTHON_CORE_H
