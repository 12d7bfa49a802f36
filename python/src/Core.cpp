//===- Core.cpp - the paddle_mlir._core extension: context and errors ----===//
//
// The module entry point: registers every pass once at import, defines
// Context and MLIRError, and adds the bindings of Module.cpp, Builder.cpp
// and Execution.cpp.
//
//===----------------------------------------------------------------------===//

#include "Core.h"

#include "paddle/InitAll.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/numpy.h>

namespace paddle_py {

std::string Diagnostic::format() const {
  std::string text = location.empty() ? "" : location + ": ";
  return text + severity + ": " + message;
}

std::string MLIRError::message() const {
  std::string text = what;
  for (const Diagnostic &d : diagnostics)
    text += "\n" + d.format();
  return text;
}

std::string formatLocation(mlir::Location loc) {
  std::string text;
  loc->walk([&](mlir::Location l) {
    if (auto file = llvm::dyn_cast<mlir::FileLineColRange>(l)) {
      text = (file.getFilename().str() + ":" +
              std::to_string(file.getStartLine()) + ":" +
              std::to_string(file.getStartColumn()));
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return text;
}

static const char *severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

static Diagnostic convert(mlir::Diagnostic &diag) {
  return {severityName(diag.getSeverity()), formatLocation(diag.getLocation()),
          diag.str()};
}

DiagnosticCapture::DiagnosticCapture(mlir::MLIRContext *context)
    : handler(context, [this](mlir::Diagnostic &diag) {
        // Never throw here: this runs inside MLIR, built without exceptions.
        diagnostics.push_back(convert(diag));
        for (mlir::Diagnostic &note : diag.getNotes())
          diagnostics.push_back(convert(note));
        return mlir::success();
      }) {}

void DiagnosticCapture::fail(const std::string &what) {
  throw MLIRError{what, take()};
}

mlir::Location toLocation(mlir::MLIRContext *ctx, const py::object &loc) {
  if (loc.is_none())
    return mlir::UnknownLoc::get(ctx);
  auto tuple = py::cast<py::tuple>(loc);
  if (tuple.size() != 3)
    throw py::type_error("loc must be (file, line, col) or None");
  return mlir::FileLineColLoc::get(ctx, py::cast<std::string>(tuple[0]),
                                   py::cast<unsigned>(tuple[1]),
                                   py::cast<unsigned>(tuple[2]));
}

mlir::Type parseTypeOrThrow(mlir::MLIRContext *ctx, const std::string &text,
                            const std::string &what) {
  DiagnosticCapture capture(ctx);
  mlir::Type type = mlir::parseType(text, ctx);
  if (!type)
    capture.fail(what + ": invalid type '" + text + "'");
  return type;
}

mlir::Attribute parseAttrOrThrow(mlir::MLIRContext *ctx,
                                 const std::string &text,
                                 const std::string &what) {
  DiagnosticCapture capture(ctx);
  mlir::Attribute attr = mlir::parseAttribute(text, ctx);
  if (!attr)
    capture.fail(what + ": invalid attribute '" + text + "'");
  return attr;
}

std::string typeToString(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

static mlir::DialectRegistry makeRegistry() {
  mlir::DialectRegistry registry;
  mlir::paddle::registerAllDialects(registry);
  return registry;
}

PaddleContext::PaddleContext() : context(makeRegistry()) {
  context.loadAllAvailableDialects();
}

} // namespace paddle_py

using namespace paddle_py;

PYBIND11_MODULE(_core, m) {
  m.doc() = "Paddle-MLIR: build, transform, compile and run paddle modules";

  // pybind11 fills its numpy API table in a function-local static on first
  // use, importing numpy.core.multiarray inside the initializer. That import
  // runs Python code, which may hand the GIL to another thread; if that
  // thread then needs the table, it waits on the static's guard while
  // holding the GIL, and neither can go on. Filling the table here, while
  // the import lock keeps other threads out, means no first call races.
  py::detail::npy_api::get();

  // Pass pipelines given as text name passes through the global registry.
  static bool registered = [] {
    mlir::paddle::registerAllPasses();
    return true;
  }();
  (void)registered;

  static py::object mlirError =
      py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
          "paddle_mlir._core.MLIRError",
          "Parsing, verification or a pass failed. The message holds every "
          "diagnostic as 'file:line:col: error: text'; `diagnostics` lists "
          "them as (severity, location, message) tuples.",
          PyExc_Exception, nullptr));
  m.attr("MLIRError") = mlirError;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const MLIRError &e) {
      // Messages quote the input, which may be any bytes (a corrupt
      // bytecode file's names): invalid UTF-8 is replaced, never an error.
      auto text = [](const std::string &s) {
        return py::reinterpret_steal<py::str>(
            PyUnicode_DecodeUTF8(s.data(), (Py_ssize_t)s.size(), "replace"));
      };
      py::list diags;
      for (const Diagnostic &d : e.diagnostics)
        diags.append(py::make_tuple(text(d.severity), text(d.location),
                                    text(d.message)));
      py::object exc = mlirError(text(e.message()));
      exc.attr("diagnostics") = diags;
      PyErr_SetObject(mlirError.ptr(), exc.ptr());
    }
  });

  py::class_<PaddleContext, ContextRef>(
      m, "Context",
      "An MLIRContext with the paddle dialect "
      "and every dialect the pipelines use")
      .def(py::init([] { return std::make_shared<PaddleContext>(); }));

  bindModule(m);
  bindBuilder(m);
  bindExecution(m);
}
