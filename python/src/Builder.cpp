//===- Builder.cpp - building functions from Python -----------------------===//
//
// Module.add_function, FunctionBuilder and Value: the tracer and the
// importers build IR through these, op by op, with each op verified as it is
// added so that an error points at the user's line that created it.
//
//===----------------------------------------------------------------------===//

#include "Core.h"

#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

using namespace mlir;

namespace paddle_py {

mlir::Value PaddleValue::get() const {
  if (epoch != owner->epoch)
    throw std::runtime_error(
        "this Value belongs to IR that has been transformed since it was "
        "created (run_passes or erase_function); build with fresh values");
  return value;
}

namespace {

/// Builds the body of one func.func; closed by ret().
struct FunctionBuilder {
  ModuleRef owner;
  func::FuncOp func;
  std::string name;
  uint64_t epoch;
  bool closed = false;

  MLIRContext *ctx() { return owner->ctx(); }

  /// The function, or RuntimeError when it can no longer be built.
  func::FuncOp get() {
    if (closed)
      throw std::runtime_error("function '" + name +
                               "' is complete: ret() was called");
    if (epoch != owner->epoch)
      throw std::runtime_error("function '" + name +
                               "' belongs to IR that has been transformed "
                               "since (run_passes or erase_function)");
    return func;
  }

  OpBuilder builder() {
    return OpBuilder::atBlockEnd(&get().getBody().front());
  }

  PaddleValue wrap(Value v) { return PaddleValue{v, owner, owner->epoch}; }

  /// The IR values of `operands`, each checked to be a live value of this
  /// function (a value of another function would make invalid IR).
  SmallVector<Value> unwrap(const std::vector<PaddleValue> &operands,
                            const std::string &what) {
    func::FuncOp f = get();
    SmallVector<Value> values;
    for (size_t i = 0; i < operands.size(); ++i) {
      Value v = operands[i].get();
      Region *region = v.getParentRegion();
      if (operands[i].owner != owner || !region ||
          !f->isAncestor(region->getParentOp()))
        throw py::value_error(what + ": operand " + std::to_string(i) +
                              " is not a value of function '" + name + "'");
      values.push_back(v);
    }
    return values;
  }

  [[noreturn]] void failAt(Location loc, const std::string &what,
                           const std::string &message) {
    throw MLIRError{what, {{"error", formatLocation(loc), message}}};
  }

  /// Verifies a copy of `state` with placeholder (none-typed) results and
  /// raises MLIRError when the op's operands or attributes are wrong.
  static void checkProbe(RegisteredOperationName info,
                         const OperationState &state,
                         DiagnosticCapture &capture, const std::string &what) {
    unsigned results = 1;
    if (info.hasTrait<OpTrait::ZeroResults>())
      results = 0;
    else if (info.hasTrait<OpTrait::NResults<2>::Impl>())
      results = 2;
    else if (info.hasTrait<OpTrait::NResults<3>::Impl>())
      results = 3;
    OperationState probeState(state.location, info);
    probeState.addOperands(state.operands);
    probeState.addAttributes(state.attributes);
    probeState.addTypes(
        SmallVector<Type>(results, NoneType::get(state.location.getContext())));
    Operation *probe = Operation::create(probeState);
    bool ok = succeeded(mlir::verify(probe));
    probe->destroy();
    if (ok)
      return;
    std::vector<Diagnostic> diagnostics = capture.take();
    // ODS checks, in order: operand count (traits), then attributes and
    // operands (OpInvariants), then results. The first error decides.
    for (const Diagnostic &d : diagnostics) {
      if (d.severity != "error")
        continue;
      llvm::StringRef message(d.message);
      if (message.contains("requires attribute") ||
          message.contains("failed to satisfy constraint") ||
          message.contains("operand #") || message.contains("operands, but"))
        throw MLIRError{what, {d}};
      break;
    }
  }

  std::vector<PaddleValue>
  op(const std::string &opName, const std::vector<PaddleValue> &operands,
     const std::optional<py::dict> &attributes,
     const std::optional<std::vector<std::string>> &types,
     const py::object &pyLoc) {
    MLIRContext *c = ctx();
    Location loc = toLocation(c, pyLoc);
    std::string what = "cannot build '" + opName + "'";
    SmallVector<Value> values = unwrap(operands, what);
    std::optional<RegisteredOperationName> info =
        RegisteredOperationName::lookup(opName, c);
    if (!info)
      failAt(loc, what, "unknown operation '" + opName + "'");

    NamedAttrList attrs;
    if (attributes)
      for (auto item : *attributes) {
        std::string key = py::cast<std::string>(item.first);
        attrs.append(key,
                     parseAttrOrThrow(c, py::cast<std::string>(item.second),
                                      what + ": attribute '" + key + "'"));
      }

    DiagnosticCapture capture(c);
    // Inherent attributes of the wrong kind would otherwise be dropped
    // silently when moved into the op's properties.
    if (failed(info->verifyInherentAttrs(attrs,
                                         [&] { return mlir::emitError(loc); })))
      capture.fail(what);

    if (!info->hasTrait<OpTrait::ZeroRegions>())
      failAt(loc, what,
             "'" + opName + "' has regions, which op() cannot build");
    OperationState state(loc, *info);
    state.addOperands(values);
    state.addAttributes(attrs);
    if (types) {
      for (size_t i = 0; i < types->size(); ++i)
        state.addTypes(parseTypeOrThrow(
            c, (*types)[i], what + ": result " + std::to_string(i)));
    } else {
      auto *infer = info->getInterface<InferTypeOpInterface>();
      if (!infer)
        failAt(loc, what,
               "'" + opName +
                   "' does not infer its result types; pass result_types");
      // Inference assumes the op is well formed (operand count, required
      // attributes, operand types): the ODS verifier checks those first.
      // Verify a detached probe with placeholder results; an error about
      // anything but those placeholders is the user's.
      checkProbe(*info, state, capture, what);
      // Inference reads inherent attributes from the op's properties: the
      // probe converts the attributes into them.
      Operation *probe = Operation::create(state);
      SmallVector<Type> inferred;
      LogicalResult result = infer->inferReturnTypes(
          c, loc, probe->getOperands(), probe->getRawDictionaryAttrs(),
          probe->getPropertiesStorage(), probe->getRegions(), inferred);
      probe->destroy();
      if (failed(result))
        capture.fail(what);
      state.addTypes(inferred);
    }

    OpBuilder b = builder();
    Operation *op = b.create(state);
    if (failed(mlir::verify(op))) {
      op->erase();
      capture.fail(what);
    }
    std::vector<PaddleValue> results;
    for (Value v : op->getResults())
      results.push_back(wrap(v));
    return results;
  }

  PaddleValue constant(const py::object &object, const py::object &pyLoc) {
    MLIRContext *c = ctx();
    Location loc = toLocation(c, pyLoc);
    auto array = py::array::ensure(object, py::array::c_style);
    if (!array)
      throw py::type_error("constant: expected an array-like value");
    py::dtype dtype = array.dtype();
    if (!py::cast<bool>(dtype.attr("isnative")))
      array = py::array::ensure(
          array.attr("astype")(dtype.attr("newbyteorder")("=")),
          py::array::c_style);
    Type element;
    // pybind11 2.10 reads the descriptor struct, whose layout changed in
    // numpy 2: ask Python instead.
    char kind = py::cast<std::string>(dtype.attr("kind"))[0];
    size_t size = py::cast<size_t>(dtype.attr("itemsize"));
    if (kind == 'f' && size == 4)
      element = Float32Type::get(c);
    else if (kind == 'f' && size == 8)
      element = Float64Type::get(c);
    else if (kind == 'f' && size == 2)
      element = Float16Type::get(c);
    else if (kind == 'b')
      element = IntegerType::get(c, 1);
    else if (kind == 'i' && (size == 1 || size == 4 || size == 8))
      element = IntegerType::get(c, size * 8);
    else
      throw py::type_error("constant: unsupported dtype " +
                           py::cast<std::string>(py::str(dtype)) +
                           " (supported: float32, float64, float16, bool, "
                           "int8, int32, int64)");
    SmallVector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    auto type = RankedTensorType::get(shape, element);
    const char *data = static_cast<const char *>(array.data());
    size_t count = array.size();
    DenseElementsAttr value;
    if (kind == 'b') {
      // MLIR packs i1 elements as bits; numpy stores one byte per bool.
      SmallVector<bool> bits(data, data + count);
      value = DenseElementsAttr::get(type, ArrayRef<bool>(bits));
    } else {
      value = DenseElementsAttr::getFromRawBuffer(
          type, ArrayRef<char>(data, count * size));
    }
    OpBuilder b = builder();
    auto op = mlir::paddle::ConstantOp::create(b, loc, value);
    return wrap(op.getResult());
  }

  std::vector<PaddleValue> inlineCall(PaddleModule &source,
                                      const std::string &callee,
                                      const std::vector<PaddleValue> &operands,
                                      const py::object &pyLoc) {
    MLIRContext *c = ctx();
    std::string what = "cannot inline '" + callee + "'";
    if (source.context != owner->context)
      throw py::value_error(what + ": the module belongs to another Context");
    auto f = llvm::dyn_cast_or_null<func::FuncOp>(
        SymbolTable::lookupSymbolIn(source.get(), callee));
    if (!f)
      throw py::value_error(what + ": no such function in the module");
    if (f == get())
      throw py::value_error(what + ": a function cannot inline itself");
    if (f.isDeclaration())
      throw py::value_error(what + ": it is a declaration without a body");
    if (!f.getBody().hasOneBlock())
      throw py::value_error(what + ": its body has several blocks");
    SmallVector<Value> values = unwrap(operands, what);
    if (values.size() != f.getNumArguments())
      throw py::value_error(
          what + ": it takes " + std::to_string(f.getNumArguments()) +
          " arguments, " + std::to_string(values.size()) + " given");
    IRMapping mapping;
    for (auto [i, arg] : llvm::enumerate(f.getArguments())) {
      if (arg.getType() != values[i].getType())
        throw py::value_error(what + ": argument " + std::to_string(i) +
                              " has type " + typeToString(arg.getType()) +
                              ", the operand " +
                              typeToString(values[i].getType()));
      mapping.map(arg, values[i]);
    }
    // With a location, the inlined ops say where they were called from.
    std::optional<Location> callSite;
    if (!pyLoc.is_none())
      callSite = toLocation(c, pyLoc);
    OpBuilder b = builder();
    Block &body = f.getBody().front();
    for (Operation &op : body.without_terminator()) {
      Operation *clone = b.clone(op, mapping);
      if (callSite)
        clone->walk([&](Operation *nested) {
          nested->setLoc(CallSiteLoc::get(nested->getLoc(), *callSite));
        });
    }
    std::vector<PaddleValue> results;
    for (Value v : body.getTerminator()->getOperands())
      results.push_back(wrap(mapping.lookupOrDefault(v)));
    return results;
  }

  void ret(const std::vector<PaddleValue> &operands, const py::object &pyLoc) {
    MLIRContext *c = ctx();
    Location loc = toLocation(c, pyLoc);
    std::string what = "cannot return from '" + name + "'";
    SmallVector<Value> values = unwrap(operands, what);
    func::FuncOp f = get();
    FunctionType oldType = f.getFunctionType();
    OpBuilder b = builder();
    auto op = func::ReturnOp::create(b, loc, values);
    f.setFunctionType(FunctionType::get(c, oldType.getInputs(),
                                        TypeRange(ValueRange(values))));
    DiagnosticCapture capture(c);
    if (failed(mlir::verify(f))) {
      op->erase();
      f.setFunctionType(oldType);
      capture.fail(what + ": function '" + name + "' does not verify");
    }
    closed = true;
  }
};

} // namespace

void bindBuilder(py::module_ &m) {
  py::class_<PaddleValue>(m, "Value", "An SSA value of a module being built")
      .def_property_readonly(
          "type",
          [](const PaddleValue &v) { return typeToString(v.get().getType()); })
      .def_property_readonly(
          "shape",
          [](const PaddleValue &v) -> py::object {
            auto t = llvm::dyn_cast<RankedTensorType>(v.get().getType());
            if (!t)
              return py::none();
            py::list dims;
            for (int64_t d : t.getShape())
              dims.append(ShapedType::isDynamic(d) ? py::object(py::none())
                                                   : py::object(py::int_(d)));
            return py::tuple(dims);
          })
      .def_property_readonly("dtype",
                             [](const PaddleValue &v) {
                               Type t = v.get().getType();
                               if (auto shaped = llvm::dyn_cast<ShapedType>(t))
                                 t = shaped.getElementType();
                               return typeToString(t);
                             })
      .def_property_readonly("rank",
                             [](const PaddleValue &v) -> py::object {
                               auto t = llvm::dyn_cast<RankedTensorType>(
                                   v.get().getType());
                               if (!t)
                                 return py::none();
                               return py::int_(t.getRank());
                             })
      .def("__eq__",
           [](const PaddleValue &a, const py::object &b) {
             if (!py::isinstance<PaddleValue>(b))
               return false;
             return a.value == py::cast<const PaddleValue &>(b).value;
           })
      .def("__hash__",
           [](const PaddleValue &v) {
             return std::hash<const void *>()(v.value.getAsOpaquePointer());
           })
      .def("__repr__", [](const PaddleValue &v) {
        if (v.epoch != v.owner->epoch)
          return std::string("<Value (stale)>");
        return "<Value " + typeToString(v.value.getType()) + ">";
      });

  py::class_<FunctionBuilder>(m, "FunctionBuilder",
                              "Appends ops to one function; see "
                              "Module.add_function")
      .def_readonly("name", &FunctionBuilder::name)
      .def_property_readonly("args",
                             [](FunctionBuilder &fb) {
                               std::vector<PaddleValue> args;
                               for (Value a : fb.get().getArguments())
                                 args.push_back(fb.wrap(a));
                               return args;
                             })
      .def("op", &FunctionBuilder::op, py::arg("name"),
           py::arg("operands") = std::vector<PaddleValue>(),
           py::arg("attributes") = py::none(),
           py::arg("result_types") = py::none(), py::arg("loc") = py::none())
      .def("constant", &FunctionBuilder::constant, py::arg("array"),
           py::arg("loc") = py::none())
      .def("inline_call", &FunctionBuilder::inlineCall, py::arg("module"),
           py::arg("func_name"), py::arg("operands"),
           py::arg("loc") = py::none())
      .def("ret", &FunctionBuilder::ret, py::arg("values"),
           py::arg("loc") = py::none());

  auto module = py::reinterpret_borrow<py::class_<PaddleModule, ModuleRef>>(
      m.attr("Module"));
  module.def(
      "add_function",
      [](const ModuleRef &self, const std::string &name,
         const std::vector<std::string> &argTypes,
         const std::string &visibility, const py::object &pyLoc) {
        MLIRContext *c = self->ctx();
        // MLIR would build it, but print `@<<INVALID EMPTY SYMBOL>>`, which
        // no parser reads back.
        if (name.empty())
          throw py::value_error("a function name must not be empty");
        if (SymbolTable::lookupSymbolIn(self->get(), name))
          throw py::value_error("the module already has a symbol '" + name +
                                "'");
        std::optional<SymbolTable::Visibility> vis;
        if (visibility == "public")
          vis = SymbolTable::Visibility::Public;
        else if (visibility == "private")
          vis = SymbolTable::Visibility::Private;
        else
          throw py::value_error("visibility must be 'public' or 'private', "
                                "not '" +
                                visibility + "'");
        SmallVector<Type> args;
        for (size_t i = 0; i < argTypes.size(); ++i)
          args.push_back(parseTypeOrThrow(c, argTypes[i],
                                          "function '" + name + "': argument " +
                                              std::to_string(i)));
        Location loc = toLocation(c, pyLoc);
        OpBuilder b = OpBuilder::atBlockEnd(self->get().getBody());
        auto f =
            func::FuncOp::create(b, loc, name, FunctionType::get(c, args, {}));
        f.addEntryBlock();
        SymbolTable::setSymbolVisibility(f, *vis);
        return FunctionBuilder{self, f, name, self->epoch};
      },
      py::arg("name"), py::arg("arg_types"), py::arg("visibility") = "public",
      py::arg("loc") = py::none());
}

} // namespace paddle_py
