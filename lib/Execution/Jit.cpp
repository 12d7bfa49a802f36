//===- Jit.cpp - compile a paddle module and call it in process -----------===//

#include "paddle/Execution/Jit.h"
#include "paddle/Pipelines/Pipelines.h"
#include "paddle_runtime/async.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/TargetSelect.h"

#include <cstring>
#include <new>

using namespace mlir;
using namespace mlir::paddle;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Constant globals of at least this many bytes (the weights) stay out of
/// the LLVM module: the code reads them from one ConstantStorage. In the
/// module, each would be copied by translation, instruction selection, the
/// object file and the linker, and 100 MB of weights made those copies a
/// large part of compile time. Smaller constants stay, where LLVM can fold
/// loads from them.
static constexpr uint64_t kExternalConstantBytes = 4096;

/// One block of memory holding the constants that left the module.
/// (Transparent huge pages were tried for it: with the kernel's default
/// `defrag=madvise` the request stalled in compaction, 0.2-0.35 s on
/// ResNet-50, against 0.04 s for the copy into plain pages.)
class JitModule::ConstantStorage {
public:
  /// Room for `bytes`, aligned to `alignment` (a power of two).
  ConstantStorage(uint64_t bytes, uint64_t alignment)
      : alignment_(alignment), data_(static_cast<char *>(::operator new(
                                   bytes, std::align_val_t(alignment)))) {}
  ~ConstantStorage() { ::operator delete(data_, std::align_val_t(alignment_)); }
  ConstantStorage(const ConstantStorage &) = delete;
  ConstantStorage &operator=(const ConstantStorage &) = delete;

  char *data() { return data_; }

private:
  uint64_t alignment_;
  char *data_;
};

namespace {
/// A constant global whose bytes move to the ConstantStorage.
struct ExternalConstant {
  LLVM::GlobalOp global;
  ArrayRef<char> bytes;
  uint64_t offset;
};
} // namespace

/// The bytes of `global` when it is a constant defined in this module whose
/// initializer is a dense array of at least kExternalConstantBytes laid out
/// as in memory; empty otherwise.
static ArrayRef<char> getExternalizableBytes(LLVM::GlobalOp global) {
  if (!global.getConstant() || (global.getLinkage() != LLVM::Linkage::Private &&
                                global.getLinkage() != LLVM::Linkage::Internal))
    return {};
  auto value = dyn_cast_or_null<DenseElementsAttr>(global.getValueOrNull());
  if (!value || value.isSplat())
    return {};
  // Whole-byte scalars only: the raw data of i1 is bit-packed.
  Type element = value.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return {};
  ArrayRef<char> raw = value.getRawData();
  uint64_t bytes =
      value.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
  if (raw.size() != bytes || bytes < kExternalConstantBytes)
    return {};
  return raw;
}

JitModule::JitModule() = default;

JitModule::~JitModule() {
  // Workers may still be running the tail of a coroutine of this module
  // (after completing the token its caller awaited): let them leave the
  // code before it is unmapped.
  paddle_async_wait_idle();
}

llvm::Expected<std::unique_ptr<JitModule>>
JitModule::create(ModuleOp module, const JitOptions &jitOptions) {
  unsigned optLevel = jitOptions.optLevel;
  std::unique_ptr<JitModule> jit(new JitModule());
  auto functions = collectSignatures(module);
  if (!functions)
    return functions.takeError();
  jit->functions_ = std::move(*functions);

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
    CpuPipelineOptions pipelineOptions;
    pipelineOptions.instrumentKernels = jitOptions.instrumentKernels;
    pipelineOptions.tileAndVectorize = jitOptions.tileAndVectorize;
    pipelineOptions.library = jitOptions.library;
    pipelineOptions.precision = jitOptions.precision;
    pipelineOptions.fuse = jitOptions.fuse;
    buildCpuPipeline(pm, pipelineOptions);
    if (failed(pm.run(module)))
      return makeError("lowering with paddle-cpu-pipeline failed:\n" +
                       diagnostics);
  }

  // Kernel names leave the module before translation to LLVM IR.
  jit->kernelNames_ = takeKernelNames(module);

  // So do the large constants: each becomes an external declaration that
  // resolves to its copy in the ConstantStorage.
  std::vector<ExternalConstant> constants;
  uint64_t storageBytes = 0, maxAlignment = 16;
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    ArrayRef<char> bytes = getExternalizableBytes(global);
    if (bytes.empty())
      continue;
    uint64_t alignment = llvm::PowerOf2Ceil(
        std::max<uint64_t>(global.getAlignment().value_or(0), 16));
    maxAlignment = std::max(maxAlignment, alignment);
    uint64_t offset = llvm::alignTo(storageBytes, alignment);
    constants.push_back({global, bytes, offset});
    storageBytes = offset + bytes.size();
    jit->constantBytes_ += bytes.size();
  }
  if (!constants.empty()) {
    jit->constants_ =
        std::make_unique<ConstantStorage>(storageBytes, maxAlignment);
    for (ExternalConstant &c : constants) {
      std::memcpy(jit->constants_->data() + c.offset, c.bytes.data(),
                  c.bytes.size());
      c.global.removeValueAttr();
      c.global.setLinkage(LLVM::Linkage::External);
      c.global.removeUnnamedAddrAttr();
      c.global.setDsoLocal(false);
    }
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

  // `options.transformer` is a function_ref: the function must outlive
  // create().
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(optLevel, 0, targetMachine->get());
  ExecutionEngineOptions options;
  options.transformer = optimize;
  options.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(optLevel);
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto engine =
      ExecutionEngine::create(module, options, std::move(*targetMachine));
  if (!engine)
    return engine.takeError();
  jit->engine_ = std::move(*engine);
  // The constants, and the runtime functions compiled code calls
  // (runtime.h lists them).
  jit->engine_->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (ExternalConstant &c : constants)
      symbols[interner(c.global.getSymName())] = {
          llvm::orc::ExecutorAddr::fromPtr(jit->constants_->data() + c.offset),
          llvm::JITSymbolFlags::Exported};
    int32_t count = 0;
    const paddle_runtime_symbol_t *table = paddle_runtime_symbols(&count);
    for (int32_t i = 0; i < count; ++i)
      // A null address is a function of a library this host does not link
      // (symbols.cpp); code calling it fails to link with its name.
      if (table[i].address)
        symbols[interner(table[i].name)] = {
            llvm::orc::ExecutorAddr::fromPtr(table[i].address),
            llvm::JITSymbolFlags::Exported};
    return symbols;
  });

  for (JitFunction &f : jit->functions_) {
    auto entry = jit->engine_->lookupPacked(f.name);
    if (!entry)
      return entry.takeError();
    f.entry = *entry;
    f.signature = f.view();
  }
  return jit;
}

llvm::Expected<paddle_executable_t>
JitModule::toExecutable(std::unique_ptr<JitModule> module) {
  std::vector<paddle_exported_function_t> table;
  for (const JitFunction &f : module->functions_)
    table.push_back({&f.signature, f.entry});
  std::vector<const char *> names;
  for (const std::string &name : module->kernelNames_)
    names.push_back(name.c_str());
  paddle_executable_t executable = nullptr;
  paddle_status_t status = paddle_executable_create(
      table.data(), table.size(), names.data(), names.size(),
      [](void *jit) { delete static_cast<JitModule *>(jit); }, module.get(),
      &executable);
  if (status) {
    std::string message = paddle_status_message(status);
    paddle_status_free(status);
    return makeError(message);
  }
  module.release(); // now owned by the executable
  return executable;
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
