//===- Jit.cpp - compile a paddle module and call it in process -----------===//

#include "paddle/Execution/Jit.h"
#include "paddle/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

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

JitModule::~JitModule() = default;

llvm::Expected<std::unique_ptr<JitModule>>
JitModule::create(ModuleOp module, unsigned optLevel) {
  std::unique_ptr<JitModule> jit(new JitModule());
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    JitFunction f;
    f.name = func.getName().str();
    FunctionType type = func.getFunctionType();
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      auto spec = toSpec(t, f.name, "argument", i);
      if (!spec)
        return spec.takeError();
      f.inputs.push_back(*spec);
    }
    for (auto [i, t] : llvm::enumerate(type.getResults())) {
      auto spec = toSpec(t, f.name, "result", i);
      if (!spec)
        return spec.takeError();
      f.outputs.push_back(*spec);
    }
    jit->functions_.push_back(std::move(f));
  }
  if (jit->functions_.empty())
    return makeError("the module has no public function to run");

  // Lower, collecting diagnostics into the error message.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diagnostics);
      os << d.getLocation() << ": " << d << "\n";
      for (Diagnostic &note : d.getNotes())
        os << note.getLocation() << ": note: " << note << "\n";
      return success();
    });
    PassManager pm(module.getContext());
    buildCpuPipeline(pm);
    if (failed(pm.run(module)))
      return makeError("lowering with paddle-cpu-pipeline failed:\n" +
                       diagnostics);
  }

  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;

  // Optimize and generate code for this CPU: without a target machine the
  // LLVM optimizer has no cost model and leaves loops scalar.
  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return tmBuilder.takeError();
  tmBuilder->setCodeGenOptLevel(static_cast<llvm::CodeGenOptLevel>(optLevel));
  auto targetMachine = tmBuilder->createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();

  ExecutionEngineOptions options;
  options.transformer =
      makeOptimizingTransformer(optLevel, 0, targetMachine->get());
  options.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(optLevel);
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto engine =
      ExecutionEngine::create(module, options, std::move(*targetMachine));
  if (!engine)
    return engine.takeError();
  jit->engine_ = std::move(*engine);
  // The runtime functions compiled code calls: failed run-time checks, and
  // strided copies (upstream's memrefCopy).
  jit->engine_->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("paddle_runtime_check_failed")] = {
        llvm::orc::ExecutorAddr::fromPtr(&paddle_runtime_check_failed),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&paddle_memref_copy),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });

  for (JitFunction &f : jit->functions_) {
    auto entry = jit->engine_->lookupPacked(f.name);
    if (!entry)
      return entry.takeError();
    f.entry = *entry;
    f.signature.name = f.name.c_str();
    f.signature.num_inputs = f.inputs.size();
    f.signature.inputs = f.inputs.data();
    f.signature.num_outputs = f.outputs.size();
    f.signature.outputs = f.outputs.data();
  }
  return jit;
}

llvm::Expected<const JitFunction *>
JitModule::lookup(llvm::StringRef name) const {
  std::string names;
  for (const JitFunction &f : functions_) {
    if (!names.empty())
      names += ", ";
    names += f.name;
  }
  if (name.empty()) {
    if (functions_.size() == 1)
      return &functions_.front();
    return makeError("the module has several public functions (" + names +
                     "); choose one with --function");
  }
  for (const JitFunction &f : functions_)
    if (f.name == name)
      return &f;
  return makeError("no public function '" + name +
                   "' in the module (it has: " + names + ")");
}
