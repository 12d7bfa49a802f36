//===- Jit.cpp - compile a paddle module and call it in process -----------===//

#include "paddle/Execution/Jit.h"
#include "paddle/Pipelines/Pipelines.h"
#include "paddle_runtime/async.h"

#include "mlir/Analysis/CFGLoopInfo.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"

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

/// A SectionMemoryManager that deregisters the unwind tables (.eh_frame) it
/// registered before it frees their memory. RTDyldObjectLinkingLayer
/// deregisters them when it removes an object, but drops the memory manager
/// without that where an object's emission fails after registration. A
/// table left registered over freed memory is read by libgcc's unwinder at
/// the next C++ exception anywhere in the process: a crash in
/// _Unwind_Find_FDE long after the compile, as a full pytest run showed.
/// Deregistering twice is harmless (the list is emptied).
class FrameSafeMemoryManager : public llvm::SectionMemoryManager {
public:
  ~FrameSafeMemoryManager() override { deregisterEHFrames(); }
};

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

//===----------------------------------------------------------------------===//
// Compiling on several threads
//===----------------------------------------------------------------------===//
//
// LLVM optimizes and generates code for one module on one thread. The
// lowered module is split into parts, each translated into its own
// LLVMContext and compiled by its own LLJIT task, at once.
//
// A part is a set of units. A unit is a set of private functions that call
// one another (a kernel's dispatch function, its compute functions and its
// coroutine), so inlining among them is unchanged; each entry function is
// a unit alone. Units go to the least loaded part, largest first, by their
// estimated compile cost. Every part defines the private constant globals
// it uses (its own copy); any other global is defined by the part of the
// first function using it. A symbol used across parts gets external
// linkage where it is defined and a declaration elsewhere. The JIT's code
// model is large, so references between parts are absolute. Loop-free
// entry functions of a few thousand ops or more are one more part,
// neither optimized nor compiled by the optimizing code generator.

namespace {
struct Partitioning {
  /// The parts compiled optimized, on as many threads.
  unsigned parts = 1;
  /// Whether the loop-free entry functions are a part of their own, part
  /// number `parts`, compiled unoptimized.
  bool unoptimizedPart = false;
  /// The part defining each function and each global but private
  /// constants.
  llvm::StringMap<unsigned> owner;
  /// The symbols used by another part than the one defining them.
  llvm::StringSet<> shared;
  /// Loop-free entry functions, compiled unoptimized (optnone).
  llvm::StringSet<> unoptimized;

  unsigned modules() const { return parts + (unoptimizedPart ? 1 : 0); }
};
} // namespace

/// The identifier of the LLVM module of the unoptimized part, which the
/// JIT neither optimizes nor compiles with the optimizing code generator.
static constexpr llvm::StringLiteral kUnoptimizedModule =
    "paddle-unoptimized-part";

/// The functions a module needs at least for it to be worth splitting: below
/// this, starting a compile thread costs more than it saves.
static constexpr unsigned kMinFunctionsToSplit = 8;

/// The ops of loop-free entry functions from which they are a part of
/// their own, compiled by LLVM's unoptimized code generator.
static constexpr uint64_t kMinOpsForUnoptimizedPart = 4096;

/// The most parts by default: every part is a translation of the whole
/// module before it drops what other parts define.
static constexpr unsigned kMaxDefaultParts = 8;

static bool isEntry(LLVM::LLVMFuncOp f) {
  return f.getLinkage() != LLVM::Linkage::Private &&
         f.getLinkage() != LLVM::Linkage::Internal;
}

namespace {
/// What partitioning needs to know of a function, from one loop analysis.
struct FunctionEstimate {
  /// An entry function without loops is glue: memref descriptors and calls
  /// of the kernels, the runtime and oneDNN, once per call. It is compiled
  /// unoptimized (optnone, which also selects LLVM's fast instruction
  /// selector). BERT-base's has 52,000 LLVM instructions: compiled on one
  /// thread, LLVM took 6.2-6.4 s at -O3 and 3.0-3.2 s with it unoptimized,
  /// with the same outputs bit for bit and the same latency (103-105 ms).
  bool unoptimized = false;
  /// A guess at what LLVM's optimizer and code generator spend on the
  /// function, for balancing parts: the ops left after SROA and
  /// instcombine, where an op in a loop counts 8 (a loop gets vectorized
  /// and unrolled) and an op of an unoptimized function 1/8.
  uint64_t cost = 0;
  /// The function's ops.
  uint64_t ops = 0;
};
} // namespace

static FunctionEstimate estimateFunction(LLVM::LLVMFuncOp f) {
  Region &body = f.getBody();
  DominanceInfo dominance(f);
  std::optional<CFGLoopInfo> loops;
  if (!body.hasOneBlock())
    loops.emplace(dominance.getDomTree(&body));
  FunctionEstimate estimate;
  for (Block &block : body) {
    uint64_t weight = loops && loops->getLoopFor(&block) ? 64 : 8;
    for (Operation &op : block) {
      ++estimate.ops;
      if (!isa<LLVM::InsertValueOp, LLVM::ExtractValueOp, LLVM::ConstantOp,
               LLVM::PoisonOp, LLVM::UndefOp, LLVM::AddressOfOp>(op))
        estimate.cost += weight;
    }
  }
  estimate.unoptimized =
      isEntry(f) && (!loops || loops->getTopLevelLoops().empty());
  if (estimate.unoptimized)
    estimate.cost /= 64;
  return estimate;
}

/// The symbols `op`'s body refers to.
static llvm::SetVector<StringAttr> referencedSymbols(Operation *op) {
  llvm::SetVector<StringAttr> refs;
  op->walk([&](Operation *inner) {
    for (NamedAttribute attr : inner->getAttrs())
      attr.getValue().walk(
          [&](SymbolRefAttr ref) { refs.insert(ref.getRootReference()); });
  });
  return refs;
}

static Partitioning partitionModule(ModuleOp module, unsigned maxParts) {
  Partitioning result;
  SmallVector<LLVM::LLVMFuncOp> funcs;
  llvm::DenseMap<StringAttr, unsigned> funcIndex;
  for (auto f : module.getOps<LLVM::LLVMFuncOp>())
    if (!f.isExternal()) {
      funcIndex[f.getSymNameAttr()] = funcs.size();
      funcs.push_back(f);
    }
  std::vector<FunctionEstimate> estimates;
  for (LLVM::LLVMFuncOp f : funcs) {
    estimates.push_back(estimateFunction(f));
    if (estimates.back().unoptimized)
      result.unoptimized.insert(f.getSymName());
  }
  // Loop-free entries big enough get a part of their own, compiled by
  // LLVM's unoptimized code generator: an optnone function still gets the
  // -O3 one's greedy register allocator, quadratic in its calls (llc on the
  // entry of a 4,000-op chain: 7.8 s, against 1.7 s at -O0). A part costs
  // a translation and a target machine, 2-3 ms. (The JIT's entries only:
  // the lowering keeps private functions' LLVM linkage external, not
  // their visibility.)
  auto inUnoptimizedPart = [&](unsigned i) {
    return estimates[i].unoptimized && !funcs[i].isPrivate();
  };
  unsigned numUnoptimizedPart = 0;
  uint64_t unoptimizedOps = 0;
  for (unsigned i = 0; i < funcs.size(); ++i)
    if (inUnoptimizedPart(i)) {
      ++numUnoptimizedPart;
      unoptimizedOps += estimates[i].ops;
    }
  result.unoptimizedPart = numUnoptimizedPart < funcs.size() &&
                           unoptimizedOps >= kMinOpsForUnoptimizedPart;
  bool split = maxParts >= 2 && funcs.size() >= kMinFunctionsToSplit;
  if (!split && !result.unoptimizedPart)
    return result;

  // Units: private functions joined along their calls.
  llvm::EquivalenceClasses<unsigned> units;
  std::vector<llvm::SetVector<StringAttr>> refs(funcs.size());
  for (auto [i, f] : llvm::enumerate(funcs)) {
    refs[i] = referencedSymbols(f);
    if (result.unoptimizedPart && inUnoptimizedPart(i))
      continue;
    units.insert(i);
    if (isEntry(f))
      continue;
    for (StringAttr ref : refs[i]) {
      auto it = funcIndex.find(ref);
      if (it != funcIndex.end() && !isEntry(funcs[it->second]))
        units.unionSets(i, it->second);
    }
  }
  SmallVector<std::pair<uint64_t, unsigned>> unitSizes; // (size, leader)
  for (auto it = units.begin(); it != units.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    uint64_t total = 0;
    for (auto member = units.member_begin(**it); member != units.member_end();
         ++member)
      total += estimates[*member].cost;
    unitSizes.push_back({total, (*it)->getData()});
  }
  llvm::sort(unitSizes, [](auto a, auto b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  result.parts = split ? std::min<unsigned>(maxParts, unitSizes.size()) : 1;
  std::vector<uint64_t> load(result.parts, 0);
  llvm::DenseMap<unsigned, unsigned> partOfLeader;
  for (auto [unitSize, leader] : unitSizes) {
    unsigned part = std::min_element(load.begin(), load.end()) - load.begin();
    load[part] += unitSize;
    partOfLeader[leader] = part;
  }
  for (auto [i, f] : llvm::enumerate(funcs))
    result.owner[f.getSymName()] = units.contains(i)
                                       ? partOfLeader[units.getLeaderValue(i)]
                                       : result.parts;

  // Other globals than private constants go with their first user (part 0
  // when no function uses them).
  llvm::StringSet<> ownedGlobals;
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    bool defined = global.getValueOrNull() || !global.getInitializer().empty();
    bool local = global.getLinkage() == LLVM::Linkage::Private ||
                 global.getLinkage() == LLVM::Linkage::Internal;
    if (defined && !(global.getConstant() && local))
      ownedGlobals.insert(global.getSymName());
  }
  for (auto [i, f] : llvm::enumerate(funcs))
    for (StringAttr ref : refs[i])
      if (ownedGlobals.contains(ref.getValue()))
        result.owner.try_emplace(ref.getValue(),
                                 result.owner.lookup(f.getSymName()));
  for (const auto &global : ownedGlobals)
    result.owner.try_emplace(global.getKey(), 0);

  for (auto [i, f] : llvm::enumerate(funcs)) {
    unsigned part = result.owner.lookup(f.getSymName());
    for (StringAttr ref : refs[i]) {
      auto it = result.owner.find(ref.getValue());
      if (it != result.owner.end() && it->second != part)
        result.shared.insert(ref.getValue());
    }
  }
  return result;
}

namespace {
/// While alive, the functions of `module` that part `part` does not define
/// are declarations, so that translating the module translates the part's
/// own function bodies only: translating every body for every part cost
/// time and memory in proportion to the parts (three translations of the
/// 200,000-op entry of a 10,000-op chain).
class OtherPartsDeclared {
public:
  OtherPartsDeclared(ModuleOp module, const Partitioning &p, unsigned part) {
    for (auto f : module.getOps<LLVM::LLVMFuncOp>()) {
      auto it = p.owner.find(f.getSymName());
      if (f.isExternal() || it == p.owner.end() || it->second == part)
        continue;
      Taken &taken = bodies.emplace_back();
      taken.func = f;
      taken.linkage = f.getLinkage();
      taken.body = std::make_unique<Region>();
      taken.body->takeBody(f.getBody());
      // A declaration's linkage is external (restrictToPart sets it so).
      f.setLinkage(LLVM::Linkage::External);
    }
  }
  ~OtherPartsDeclared() {
    for (Taken &taken : bodies) {
      taken.func.getBody().takeBody(*taken.body);
      taken.func.setLinkage(taken.linkage);
    }
  }

private:
  struct Taken {
    LLVM::LLVMFuncOp func;
    LLVM::Linkage linkage;
    std::unique_ptr<Region> body;
  };
  SmallVector<Taken> bodies;
};
} // namespace

/// Keeps in `m` (a translation of the module) the definitions of part
/// `part`; the others become declarations.
static void restrictToPart(llvm::Module &m, const Partitioning &p,
                           unsigned part) {
  auto fix = [&](llvm::GlobalObject &value, auto dropDefinition) {
    auto it = p.owner.find(value.getName());
    if (it == p.owner.end())
      return; // a private constant: every part keeps its copy
    if (it->second != part) {
      dropDefinition();
      value.setComdat(nullptr);
      value.setLinkage(llvm::GlobalValue::ExternalLinkage);
    } else if (p.shared.contains(value.getName())) {
      value.setLinkage(llvm::GlobalValue::ExternalLinkage);
    }
  };
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      fix(f, [&] { f.deleteBody(); });
  for (llvm::GlobalVariable &g : m.globals())
    if (!g.isDeclaration())
      fix(g, [&] { g.setInitializer(nullptr); });
}

/// Adds `_mlir_<name>(void **args)` for entry function `f`, the packed form
/// JitFunction::entry calls: args holds a pointer to each argument, then one
/// to where the result goes.
static void addPackedEntry(llvm::Function &f) {
  llvm::LLVMContext &ctx = f.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), b.getPtrTy(), false);
  auto *packed =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                             "_mlir_" + f.getName(), f.getParent());
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", packed));
  llvm::Value *args = packed->getArg(0);
  auto slot = [&](unsigned i) {
    llvm::Value *address = b.CreateConstGEP1_64(b.getPtrTy(), args, i);
    return b.CreateLoad(b.getPtrTy(), address);
  };
  SmallVector<llvm::Value *> values;
  for (llvm::Argument &arg : f.args())
    values.push_back(b.CreateLoad(arg.getType(), slot(arg.getArgNo())));
  llvm::CallInst *call = b.CreateCall(&f, values);
  if (!call->getType()->isVoidTy())
    b.CreateStore(call, slot(f.arg_size()));
  b.CreateRetVoid();
}

namespace {
/// Compiles each part with a target machine of its own (a TargetMachine
/// caches subtargets unsynchronized), the unoptimized part with LLVM's
/// unoptimized code generator (fast instruction selection and register
/// allocation).
class PartCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
public:
  explicit PartCompiler(llvm::orc::JITTargetMachineBuilder tmBuilder)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(
            tmBuilder.getOptions())),
        tmBuilder(std::move(tmBuilder)) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
  operator()(llvm::Module &m) override {
    llvm::orc::JITTargetMachineBuilder builder = tmBuilder;
    if (m.getModuleIdentifier() == kUnoptimizedModule)
      builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
    auto targetMachine = builder.createTargetMachine();
    if (!targetMachine)
      return targetMachine.takeError();
    return llvm::orc::SimpleCompiler(**targetMachine)(m);
  }

private:
  llvm::orc::JITTargetMachineBuilder tmBuilder;
};
} // namespace

JitModule::JitModule() = default;

JitModule::~JitModule() {
  // Workers may still be running the tail of a coroutine of this module
  // (after completing the token its caller awaited): let them leave the
  // code before it is unmapped.
  paddle_async_wait_idle();
}

llvm::Expected<std::unique_ptr<JitModule>>
JitModule::create(ModuleOp module, const CompileOptions &compile,
                  const JitOptions &jitOptions) {
  unsigned optLevel = jitOptions.optLevel;
  std::unique_ptr<JitModule> jit(new JitModule());
  // Partition, lower and translate, collecting diagnostics into the error
  // message.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    for (Diagnostic &note : d.getNotes())
      os << note.getLocation() << ": note: " << note << "\n";
    return success();
  });
  if (llvm::Error error = partitionForMesh(module)) {
    llvm::consumeError(std::move(error));
    return makeError("partitioning for the device mesh failed:\n" +
                     diagnostics);
  }
  auto functions = collectSignatures(module);
  if (!functions)
    return functions.takeError();
  jit->functions_ = std::move(*functions);
  dropSpmdSignatureAttributes(module);
  {
    PassManager pm(module.getContext());
    if (jitOptions.passManagerFlags && failed(applyPassManagerCLOptions(pm)))
      return makeError("bad pass manager options");
    CompileOptions pipelineOptions(compile);
    // The constants moved out of the module below are never translated:
    // flattening them would only copy them.
    pipelineOptions.flattenMaxBytes = kExternalConstantBytes - 1;
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
  auto dataLayout = tmBuilder->getDefaultDataLayoutForTarget();
  if (!dataLayout)
    return dataLayout.takeError();

  Partitioning partitioning = partitionModule(
      module,
      jitOptions.compileThreads
          ? jitOptions.compileThreads
          : std::min(kMaxDefaultParts,
                     llvm::hardware_concurrency().compute_thread_count()));
  jit->compileParts_ = partitioning.parts;
  llvm::orc::LLJITBuilder builder;
  builder.setJITTargetMachineBuilder(*tmBuilder)
      .setDataLayout(*dataLayout)
      // Nothing here has static constructors to run.
      .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
      .setLinkProcessSymbolsByDefault(true)
      .setObjectLinkingLayerCreator(
          [](llvm::orc::ExecutionSession &session)
              -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
            return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                session, [](const llvm::MemoryBuffer &) {
                  return std::make_unique<FrameSafeMemoryManager>();
                });
          });
  if (partitioning.parts > 1)
    builder.setNumCompileThreads(partitioning.parts);
  builder.setCompileFunctionCreator(
      [](llvm::orc::JITTargetMachineBuilder tmBuilder)
          -> llvm::Expected<
              std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
        return std::make_unique<PartCompiler>(std::move(tmBuilder));
      });
  auto lljit = builder.create();
  if (!lljit)
    return lljit.takeError();
  jit->lljit_ = std::move(*lljit);

  // Each part is optimized on the thread compiling it, with a target
  // machine of its own (a TargetMachine caches subtargets unsynchronized).
  jit->lljit_->getIRTransformLayer().setTransform(
      [tmBuilder = *tmBuilder,
       optLevel](llvm::orc::ThreadSafeModule tsm,
                 llvm::orc::MaterializationResponsibility &)
          -> llvm::Expected<llvm::orc::ThreadSafeModule> {
        if (tsm.withModuleDo([](llvm::Module &m) {
              return m.getModuleIdentifier() == kUnoptimizedModule;
            }))
          return std::move(tsm);
        // A copy per call: the transform runs on several threads.
        llvm::orc::JITTargetMachineBuilder builder = tmBuilder;
        auto targetMachine = builder.createTargetMachine();
        if (!targetMachine)
          return targetMachine.takeError();
        auto optimize =
            makeOptimizingTransformer(optLevel, 0, targetMachine->get());
        if (llvm::Error e =
                tsm.withModuleDo([&](llvm::Module &m) { return optimize(&m); }))
          return std::move(e);
        return std::move(tsm);
      });

  llvm::StringSet<> entryNames;
  for (const JitFunction &f : jit->functions_)
    entryNames.insert(f.name);
  for (unsigned part = 0; part < partitioning.modules(); ++part) {
    auto context = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> llvmModule;
    {
      std::optional<OtherPartsDeclared> declared;
      if (partitioning.modules() > 1)
        declared.emplace(module, partitioning, part);
      llvmModule = translateModuleToLLVMIR(module, *context);
    }
    if (!llvmModule)
      return makeError("cannot translate the lowered module to LLVM IR:\n" +
                       diagnostics);
    llvmModule->setDataLayout(*dataLayout);
    llvmModule->setTargetTriple(tmBuilder->getTargetTriple());
    if (partitioning.modules() > 1)
      restrictToPart(*llvmModule, partitioning, part);
    if (part == partitioning.parts)
      llvmModule->setModuleIdentifier(kUnoptimizedModule);
    SmallVector<llvm::Function *> entries;
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration() && entryNames.contains(f.getName()))
        entries.push_back(&f);
    for (llvm::Function *f : entries)
      addPackedEntry(*f);
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration() &&
          partitioning.unoptimized.contains(f.getName())) {
        f.addFnAttr(llvm::Attribute::OptimizeNone);
        f.addFnAttr(llvm::Attribute::NoInline);
      }
    if (llvm::Error e = jit->lljit_->addIRModule(llvm::orc::ThreadSafeModule(
            std::move(llvmModule), std::move(context))))
      return std::move(e);
  }

  // The constants, and the runtime functions compiled code calls
  // (runtime.h lists them).
  llvm::orc::JITDylib &mainDylib = jit->lljit_->getMainJITDylib();
  llvm::orc::MangleAndInterner interner(jit->lljit_->getExecutionSession(),
                                        *dataLayout);
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
  if (llvm::Error e =
          mainDylib.define(llvm::orc::absoluteSymbols(std::move(symbols))))
    return std::move(e);

  // One lookup of every entry point and every symbol one part takes from
  // another, so all parts compile at once (looking up the entries alone, a
  // part would start only when linking another asks for its symbols).
  llvm::orc::SymbolLookupSet lookupSet;
  for (const JitFunction &f : jit->functions_)
    lookupSet.add(interner("_mlir_" + f.name));
  for (const auto &shared : partitioning.shared)
    lookupSet.add(interner(shared.getKey()));
  auto found = jit->lljit_->getExecutionSession().lookup(
      llvm::orc::makeJITDylibSearchOrder(&mainDylib), std::move(lookupSet));
  if (!found) {
    // The message may refer to strings the JIT owns: copy it out.
    return makeError(llvm::toString(found.takeError()));
  }
  for (JitFunction &f : jit->functions_) {
    f.entry = (*found)[interner("_mlir_" + f.name)]
                  .getAddress()
                  .toPtr<void (*)(void **)>();
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
