//===- Aot.cpp - ahead-of-time compilation to artifacts -------------------===//
//
// What paddle-compile does, as a library (Aot.h): lower with the CPU
// pipeline, translate to LLVM IR, optimize and emit an object for the host,
// then generate the C glue (typed entry points, signature tables, the
// weights loader) and link it with the static runtime into a .so or an
// executable. Every file goes through paddle::OutputFile: published
// together at the end, never half-written.
//
//===----------------------------------------------------------------------===//

#include "paddle/Execution/Aot.h"
#include "SidecarWeights.h"
#include "paddle/Execution/OutputFile.h"
#include "paddle/Execution/Signature.h"
#include "paddle/Transforms/Donation.h"
#include "paddle_runtime/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <cstring>
#include <list>
#include <sys/stat.h>

using namespace mlir;
using namespace mlir::paddle;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

constexpr llvm::StringLiteral kImplPrefix = "paddle_impl_";
constexpr llvm::StringLiteral kImportPrefix = "paddle_import_";

bool isCIdentifier(StringRef name) {
  if (name.empty() || !(isalpha(name[0]) || name[0] == '_'))
    return false;
  return llvm::all_of(name, [](char c) { return isalnum(c) || c == '_'; });
}

/// The default prefix of exported names: the output's name without a
/// "lib" prefix and extensions, as a C identifier, then '_' ("libmlp.so"
/// -> "mlp_"). A function named after a libc symbol (malloc) or `main`
/// would otherwise be exported under that name and interpose it in every
/// program linked with the library.
std::string defaultSymbolPrefix(StringRef output) {
  StringRef stem = llvm::sys::path::filename(output);
  stem = stem.take_front(stem.find('.'));
  if (stem.starts_with("lib") && stem.size() > 3)
    stem = stem.drop_front(3);
  std::string prefix;
  for (char c : stem)
    prefix += isalnum((unsigned char)c) ? c : '_';
  if (prefix.empty() || isdigit((unsigned char)prefix[0]))
    prefix.insert(0, "model");
  return prefix + "_";
}

/// True for an existing path that is not a regular file (a device node, a
/// FIFO), which gets no sibling files.
bool isSpecialFile(StringRef path) {
  struct stat st;
  return stat(path.str().c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

/// Why `prefix` cannot start exported names, or "" when it can.
std::string symbolPrefixProblem(StringRef prefix) {
  if (!isCIdentifier(prefix))
    return "is not the start of a C identifier (letters, digits and '_', "
           "not starting with a digit)";
  if (prefix.starts_with("paddle_") || prefix.starts_with("_"))
    return "is reserved: names starting with 'paddle_' or '_' belong to the "
           "runtime and the C implementation";
  return "";
}

const char *dtypeEnum(paddle_dtype_t d) {
  switch (d) {
  case PADDLE_F32:
    return "PADDLE_F32";
  case PADDLE_F16:
    return "PADDLE_F16";
  case PADDLE_BF16:
    return "PADDLE_BF16";
  case PADDLE_F64:
    return "PADDLE_F64";
  case PADDLE_I1:
    return "PADDLE_I1";
  case PADDLE_I8:
    return "PADDLE_I8";
  case PADDLE_I32:
    return "PADDLE_I32";
  case PADDLE_I64:
    return "PADDLE_I64";
  default:
    return "PADDLE_DTYPE_INVALID";
  }
}

std::string typeComment(const paddle_tensor_spec_t &s) {
  std::string t = "tensor<";
  for (int32_t d = 0; d < s.rank; ++d)
    t += (s.shape[d] == PADDLE_DYNAMIC_DIM ? std::string("?")
                                           : std::to_string(s.shape[d])) +
         "x";
  return t + paddle_dtype_name(s.dtype) + ">";
}

std::string specList(const std::vector<paddle_tensor_spec_t> &specs) {
  std::string out;
  for (const auto &s : specs) {
    out += "  {" + std::string(dtypeEnum(s.dtype)) + ", " +
           std::to_string(s.rank) + ", {";
    for (int32_t d = 0; d < s.rank; ++d)
      out += (d ? ", " : "") + std::to_string(s.shape[d]);
    out += "}},\n";
  }
  return out;
}

/// C initializers of `splits`, every dim of every entry spelled out (an
/// omitted one would read as mesh axis 0), then an unsplit entry so that
/// the array is never empty.
std::string shardingList(std::vector<paddle_tensor_sharding_t> splits) {
  splits.push_back({});
  std::memset(&splits.back(), -1, sizeof splits.back());
  std::string out;
  for (const auto &s : splits) {
    out += "  {{";
    for (int d = 0; d < PADDLE_MAX_RANK; ++d) {
      out += d ? ", {" : "{";
      for (int k = 0; k < PADDLE_MAX_MESH_RANK; ++k)
        out += (k ? ", " : "") + std::to_string(s.split[d][k]);
      out += "}";
    }
    out += "}},\n";
  }
  return out;
}

size_t words(const paddle_tensor_spec_t &s) { return 3 + 2 * (size_t)s.rank; }

/// The typed declaration of one function's entry point.
std::string entryDeclaration(const FunctionSignature &f, StringRef prefix) {
  std::string d = "paddle_status_t " + prefix.str() + f.name + "(";
  for (size_t i = 0; i < f.inputs.size(); ++i)
    d += "const paddle_tensor_t *arg" + std::to_string(i) + ", ";
  for (size_t i = 0; i < f.outputs.size(); ++i)
    d += "paddle_tensor_t *result" + std::to_string(i) + ", ";
  if (f.inputs.empty() && f.outputs.empty())
    d += "void";
  else
    d.resize(d.size() - 2);
  return d + ")";
}

/// Glue of a module with --weights sidecar: loads the weights file once,
/// before the first call, into the slots of the module's weights table.
/// `<loadWeights>(path)` loads from `path` instead (NULL: the default,
/// `<this executable or .so>.weights`); a failed load is kept and ends every
/// call with its error until a load succeeds.
std::string weightsGlueSource(bool executable, StringRef loadWeights) {
  std::string table = (kWeightsTable + kLocalSuffix).str(),
              count = (kWeightsCount + kLocalSuffix).str(),
              fingerprint = (kWeightsFingerprint + kLocalSuffix).str();
  std::string hidden = " __attribute__((visibility(\"hidden\")))";
  std::string c =
      "extern const paddle_weight_slot_t " + table + "[]" + hidden +
      ";\n"
      "extern const int32_t " +
      count + hidden +
      ";\n"
      "extern const uint64_t " +
      fingerprint + hidden +
      ";\n\n"
      "static pthread_mutex_t paddle_weights_mutex = "
      "PTHREAD_MUTEX_INITIALIZER;\n"
      "/* 0: not tried yet, 1: loaded, 2: failed (error below). */\n"
      "static atomic_int paddle_weights_state;\n"
      "static paddle_status_code_t paddle_weights_error_code;\n"
      "static char paddle_weights_error[1024];\n\n";
  // Where the artifact is: the executable itself, or the .so holding this
  // code (dladdr on a static variable, which no other module can interpose),
  // whatever the program that loaded it is.
  if (executable)
    c += "static int paddle_weights_default_path(char *path, size_t size) {\n"
         "  ssize_t n = readlink(\"/proc/self/exe\", path, size - 16);\n"
         "  if (n <= 0) return 0;\n"
         "  memcpy(path + n, \".weights\", 9);\n"
         "  return 1;\n}\n\n";
  else
    c += "static int paddle_weights_default_path(char *path, size_t size) {\n"
         "  Dl_info info;\n"
         "  if (!dladdr((void *)&paddle_weights_state, &info) ||\n"
         "      !info.dli_fname) return 0;\n"
         "  return snprintf(path, size, \"%s.weights\", info.dli_fname) < "
         "(int)size;\n}\n\n";
  c += "/* Called with the mutex held. */\n"
       "static paddle_status_t paddle_weights_load_locked(const char *path) "
       "{\n"
       "  char fallback[PATH_MAX + 16];\n"
       "  paddle_status_t s;\n"
       "  if (!path && !paddle_weights_default_path(fallback, sizeof "
       "fallback))\n"
       "    s = paddle_status_create(PADDLE_NOT_FOUND, \"cannot locate this "
       "module to find its weights file\");\n"
       "  else\n"
       "    s = paddle_weights_load(path ? path : fallback, " +
       fingerprint + ", " + table + ", " + count +
       ");\n"
       "  if (!s) {\n"
       "    atomic_store_explicit(&paddle_weights_state, 1, "
       "memory_order_release);\n"
       "    return NULL;\n  }\n"
       "  paddle_weights_error_code = paddle_status_code(s);\n"
       "  snprintf(paddle_weights_error, sizeof paddle_weights_error, "
       "\"%s\", paddle_status_message(s));\n"
       "  atomic_store_explicit(&paddle_weights_state, 2, "
       "memory_order_relaxed);\n"
       "  return s;\n}\n\n";
  c += std::string(executable ? "static " : "") + "paddle_status_t " +
       loadWeights.str() +
       "(const char *path) {\n"
       "  paddle_status_t s;\n"
       "  pthread_mutex_lock(&paddle_weights_mutex);\n"
       "  if (atomic_load(&paddle_weights_state) == 1)\n"
       "    s = paddle_status_create(PADDLE_INVALID_ARGUMENT, \"the weights "
       "of this module are already loaded\");\n"
       "  else\n"
       "    s = paddle_weights_load_locked(path);\n"
       "  pthread_mutex_unlock(&paddle_weights_mutex);\n"
       "  return s;\n}\n\n"
       "/* Before each call: loads the default file the first time; ends the "
       "call\n   (through paddle_invoke) with the load's error. */\n"
       "static void paddle_weights_require(void) {\n"
       "  char message[sizeof paddle_weights_error];\n"
       "  paddle_status_code_t code;\n"
       "  if (atomic_load_explicit(&paddle_weights_state, "
       "memory_order_acquire) == 1)\n"
       "    return;\n"
       "  pthread_mutex_lock(&paddle_weights_mutex);\n"
       "  if (atomic_load(&paddle_weights_state) == 0)\n"
       "    paddle_status_free(paddle_weights_load_locked(NULL));\n"
       "  int loaded = atomic_load(&paddle_weights_state) == 1;\n"
       "  code = paddle_weights_error_code;\n"
       "  memcpy(message, paddle_weights_error, sizeof message);\n"
       "  pthread_mutex_unlock(&paddle_weights_mutex);\n"
       "  if (!loaded)\n"
       "    PADDLE_GLUE_FAIL(code, message);\n}\n\n";
  return c;
}

/// C glue compiled with the object: packed wrappers over the C-interface
/// functions, signature tables, typed entry points, and the runtime
/// functions compiled code calls.
std::string glueSource(ArrayRef<FunctionSignature> functions,
                       ArrayRef<std::string> imports,
                       ArrayRef<std::string> kernelNames, bool withMain,
                       bool sidecar, StringRef prefix) {
  // The glue's own names are numbered, not derived from the functions'
  // names; only the typed entry points and signatures of a library are
  // exported, under `prefix`.
  std::string loadWeights =
      withMain ? "paddle_load_weights" : prefix.str() + "load_weights";
  std::string c = "/* Generated by paddle-compile. */\n";
  if (sidecar)
    c += "#define _GNU_SOURCE /* dladdr */\n"
         "#include <dlfcn.h>\n#include <limits.h>\n#include <pthread.h>\n"
         "#include <stdatomic.h>\n#include <stdio.h>\n#include <unistd.h>\n";
  c += "#include \"paddle_runtime/runtime.h\"\n"
       "#include <string.h>\n\n";
  // The glue ends calls with errors through paddle_runtime_fail; in a
  // library that goes through an import slot like compiled code's calls,
  // so the loading runtime's paddle_invoke sees the failure.
  if (withMain)
    c += "#define PADDLE_GLUE_FAIL paddle_runtime_fail\n\n";
  else
    c += "__attribute__((visibility(\"hidden\"))) void "
         "*paddle_glue_import_fail = (void *)paddle_runtime_fail;\n"
         "#define PADDLE_GLUE_FAIL ((void (*)(paddle_status_code_t, const "
         "char *))paddle_glue_import_fail)\n\n";
  if (sidecar)
    c += weightsGlueSource(withMain, loadWeights);
  for (size_t index = 0; index < functions.size(); ++index) {
    const FunctionSignature &f = functions[index];
    std::string id = std::to_string(index);
    std::string packed = "paddle_packed_" + id;
    std::string signature = withMain ? "paddle_signature_" + id
                                     : prefix.str() + f.name + "_signature";
    size_t nIn = f.inputs.size(), nOut = f.outputs.size(), at = 0, total = 0;
    for (const auto &o : f.outputs)
      total += words(o);
    std::string ciface = "_mlir_ciface_" + kImplPrefix.str() + f.name;
    c += "extern void " + ciface + "(";
    std::vector<std::string> params;
    if (nOut)
      params.push_back("void *");
    for (size_t i = 0; i < nIn; ++i)
      params.push_back("void *");
    c += params.empty() ? "void" : llvm::join(params, ", ");
    c += ");\n";
    c += "static void " + packed + "(void **args) {\n";
    if (sidecar)
      c += "  paddle_weights_require();\n";
    std::vector<std::string> callArgs;
    if (nOut) {
      c += "  int64_t res[" + std::to_string(total) + "];\n";
      callArgs.push_back("res");
    }
    for (size_t i = 0; i < nIn; ++i) {
      size_t n = words(f.inputs[i]);
      std::string v = "in" + std::to_string(i);
      c += "  int64_t " + v + "[" + std::to_string(n) + "];\n";
      c += "  for (int k = 0; k < " + std::to_string(n) + "; ++k) " + v +
           "[k] = *(int64_t *)args[" + std::to_string(at) + " + k];\n";
      at += n;
      callArgs.push_back(v);
    }
    c += "  " + ciface + "(" + llvm::join(callArgs, ", ") + ");\n";
    if (nOut)
      c += "  memcpy(args[" + std::to_string(at) + "], res, sizeof res);\n";
    c += "}\n";
    c += "static const paddle_tensor_spec_t paddle_inputs_" + id + "[] = {\n" +
         specList(f.inputs) + "  {PADDLE_DTYPE_INVALID, 0, {0}}};\n";
    c += "static const paddle_tensor_spec_t paddle_outputs_" + id + "[] = {\n" +
         specList(f.outputs) + "  {PADDLE_DTYPE_INVALID, 0, {0}}};\n";
    std::string spmd = "NULL";
    if (!f.mesh.empty()) {
      spmd = "&paddle_spmd_" + id;
      c += "static const paddle_tensor_sharding_t paddle_input_splits_" + id +
           "[] = {\n" + shardingList(f.inputShardings) + "};\n";
      c += "static const paddle_tensor_sharding_t paddle_output_splits_" + id +
           "[] = {\n" + shardingList(f.outputShardings) + "};\n";
      c += "static const paddle_spmd_signature_t paddle_spmd_" + id + " = {" +
           std::to_string(f.mesh.size()) + ", {";
      for (int64_t size : f.mesh)
        c += std::to_string(size) + ", ";
      c += "}, paddle_input_splits_" + id + ", paddle_output_splits_" + id +
           "};\n";
    }
    c += std::string(withMain ? "static " : "") +
         "const paddle_function_signature_t " + signature + " = {\"" + f.name +
         "\", " + std::to_string(nIn) + ", paddle_inputs_" + id + ", " +
         std::to_string(nOut) + ", paddle_outputs_" + id + ", " + spmd + "};\n";
    // Typed entry points are for programs that link a library; an
    // executable has its own main (and a model function may be `main`).
    if (withMain)
      continue;
    c += entryDeclaration(f, prefix) + " {\n";
    c += "  paddle_tensor_t in[" + std::to_string(std::max<size_t>(nIn, 1)) +
         "];\n";
    for (size_t i = 0; i < nIn; ++i)
      c += "  in[" + std::to_string(i) + "] = *arg" + std::to_string(i) + ";\n";
    c += "  paddle_tensor_t out[" + std::to_string(std::max<size_t>(nOut, 1)) +
         "];\n";
    c += "  paddle_status_t s = paddle_invoke(" + packed + ", &" + signature +
         ", in, " + std::to_string(nIn) + ", out);\n  if (s) return s;\n";
    for (size_t i = 0; i < nOut; ++i)
      c += "  *result" + std::to_string(i) + " = out[" + std::to_string(i) +
           "];\n";
    c += "  return 0;\n}\n\n";
  }
  c += "const paddle_exported_function_t paddle_module_functions[] = {\n";
  for (size_t index = 0; index < functions.size(); ++index) {
    const FunctionSignature &f = functions[index];
    std::string id = std::to_string(index);
    c += "  {&" +
         (withMain ? "paddle_signature_" + id
                   : prefix.str() + f.name + "_signature") +
         ", paddle_packed_" + id + "},\n";
  }
  c += "};\nconst int32_t paddle_module_function_count = " +
       std::to_string(functions.size()) + ";\n";
  // What paddle_executable_load checks and binds (runtime.h).
  c += "const int32_t paddle_module_abi_version = "
       "PADDLE_RUNTIME_ABI_VERSION;\n";
  for (const std::string &name : imports)
    c += "extern void *" + kImportPrefix.str() + name + ";\n";
  c += "const paddle_module_import_t paddle_module_imports[] = {\n";
  for (const std::string &name : imports)
    c += "  {\"" + name + "\", &" + kImportPrefix.str() + name + "},\n";
  if (!withMain)
    c += "  {\"paddle_runtime_fail\", &paddle_glue_import_fail},\n";
  c += "  {0, 0}};\nconst int32_t paddle_module_import_count = " +
       std::to_string(imports.size() + (withMain ? 0 : 1)) + ";\n";
  // Kernel names of an instrumented module, by id, for traces.
  c += "const char *const paddle_module_kernel_names[] = {\n";
  for (const std::string &name : kernelNames) {
    std::string escaped;
    for (char ch : name)
      escaped += (ch == '"' || ch == '\\') ? std::string("\\") + ch
                                           : std::string(1, ch);
    c += "  \"" + escaped + "\",\n";
  }
  c += "  0};\nconst int32_t paddle_module_kernel_count = " +
       std::to_string(kernelNames.size()) + ";\n";
  if (withMain)
    c += "\nint main(int argc, char **argv) {\n  return paddle_cli_main(argc, "
         "argv, paddle_module_functions, paddle_module_function_count, " +
         std::string(sidecar ? loadWeights : "NULL") +
         ", paddle_module_kernel_names, paddle_module_kernel_count);\n}\n";
  return c;
}

std::string headerSource(ArrayRef<FunctionSignature> functions, StringRef guard,
                         bool sidecar, StringRef prefix) {
  std::string h = "/* Generated by paddle-compile: the entry points of " +
                  guard.str() + ". Link with the shared object. */\n";
  std::string macro = "PADDLE_MODEL_";
  for (char c : guard)
    macro += isalnum(c) ? toupper(c) : '_';
  h += "#ifndef " + macro + "_H\n#define " + macro +
       "_H\n\n"
       "#include \"paddle_runtime/runtime.h\"\n\n#ifdef __cplusplus\nextern "
       "\"C\" {\n#endif\n\n";
  for (const auto &f : functions) {
    h += "/* The module's function '" + f.name + "': " + f.name + "(";
    for (size_t i = 0; i < f.inputs.size(); ++i)
      h += (i ? ", " : "") + typeComment(f.inputs[i]);
    h += ") -> (";
    for (size_t i = 0; i < f.outputs.size(); ++i)
      h += (i ? ", " : "") + typeComment(f.outputs[i]);
    h += ")\n   Results are allocated; free them with paddle_tensor_free. */\n";
    h += entryDeclaration(f, prefix) + ";\n";
    h += "extern const paddle_function_signature_t " + prefix.str() + f.name +
         "_signature;\n\n";
  }
  if (sidecar)
    h +=
        "/* The weights of this module are in a file (paddle-compile --weights "
        "sidecar),\n   by default the .so's path + \".weights\", loaded and "
        "checked before the first\n   call (whose status reports a failure). "
        "Call this first to load them from\n   `path` instead (NULL: the "
        "default). Fails once weights are loaded. */\n"
        "paddle_status_t " +
        prefix.str() +
        "load_weights(const char *path);\n"
        "extern const uint64_t " +
        kWeightsFingerprint.str() + ";\n\n";
  h += "extern const paddle_exported_function_t paddle_module_functions[];\n"
       "extern const int32_t paddle_module_function_count;\n\n"
       "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return h;
}

/// In a shared object, compiled code calls the runtime through one pointer
/// slot per function (`paddle_import_<name>`, initially the runtime linked
/// into the library), so that paddle_executable_load can point a loaded
/// module at the loading process's runtime. Returns the imported names.
std::vector<std::string>
callRuntimeThroughSlots(llvm::Module &module,
                        const paddle_runtime_symbol_t *symbols, int32_t count) {
  std::vector<std::string> imports;
  auto *ptrType = llvm::PointerType::getUnqual(module.getContext());
  for (int32_t i = 0; i < count; ++i) {
    llvm::Function *decl = module.getFunction(symbols[i].runtime_name);
    if (!decl || !decl->isDeclaration() ||
        llvm::is_contained(imports, symbols[i].runtime_name))
      continue;
    auto *slot =
        new llvm::GlobalVariable(module, ptrType, /*isConstant=*/false,
                                 llvm::GlobalValue::ExternalLinkage, decl,
                                 kImportPrefix + symbols[i].runtime_name);
    slot->setVisibility(llvm::GlobalValue::HiddenVisibility);
    for (llvm::Use &use : llvm::make_early_inc_range(decl->uses())) {
      auto *call = dyn_cast<llvm::CallBase>(use.getUser());
      if (!call || !call->isCallee(&use))
        continue;
      llvm::IRBuilder<> b(call);
      call->setCalledOperand(b.CreateLoad(ptrType, slot));
    }
    imports.push_back(symbols[i].runtime_name);
  }
  return imports;
}

/// Runs a program, failing with its name and exit status.
llvm::Error runProgram(StringRef name, ArrayRef<std::string> args) {
  auto path = llvm::sys::findProgramByName(name);
  if (!path)
    return llvm::createStringError(path.getError(),
                                   "'%s' is needed to link and was not found "
                                   "on PATH",
                                   name.str().c_str());
  std::vector<StringRef> argv{*path};
  for (const auto &a : args)
    argv.push_back(a);
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*path, argv, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s failed (exit %d) %s", name.str().c_str(),
                                   rc, message.c_str());
  return llvm::Error::success();
}

} // namespace

std::optional<ArtifactKind>
mlir::paddle::parseArtifactKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ArtifactKind>>(name)
      .Case("so", ArtifactKind::SharedLibrary)
      .Case("exe", ArtifactKind::Executable)
      .Case("obj", ArtifactKind::Object)
      .Case("mlir", ArtifactKind::Mlir)
      .Default(std::nullopt);
}

llvm::Error mlir::paddle::checkAotOptions(const AotOptions &options,
                                          llvm::StringRef outputPath) {
  if (!options.sidecarWeights)
    return llvm::Error::success();
  if (options.kind == ArtifactKind::Mlir)
    return makeError("--weights sidecar needs --emit so, exe or obj (the "
                     "weights file is written with the compiled artifact)");
  if (options.sidecarThreshold == 0)
    return makeError("--sidecar-threshold must be at least 1 byte");
  if (isSpecialFile(outputPath))
    return makeError("--weights sidecar writes OUT.weights next to the "
                     "output; '" +
                     outputPath + "' is not a regular file");
  return llvm::Error::success();
}

llvm::Error mlir::paddle::compileAheadOfTime(ModuleOp module,
                                             const CompileOptions &compile,
                                             const AotOptions &options,
                                             llvm::StringRef outputPath) {
  if (llvm::Error error = checkAotOptions(options, outputPath))
    return error;
  ArtifactKind kind = options.kind;
  MLIRContext *context = module.getContext();
  // Artifacts return every result: buffer donation (an in-place update of an
  // argument) is a JIT calling convention the exported C signatures do not
  // describe, so AOT compilation drops the requests.
  dropDonationRequests(module);

  if (llvm::Error error = partitionForMesh(module))
    return std::move(error);
  auto functions = collectSignatures(module);
  if (!functions)
    return functions.takeError();
  dropSpmdSignatureAttributes(module);
  if (kind == ArtifactKind::SharedLibrary || kind == ArtifactKind::Executable)
    for (const auto &f : *functions)
      if (!isCIdentifier(f.name))
        return makeError(
            "function '" + f.name +
            "' is not a C identifier (letters, digits and '_', not "
            "starting with a digit), so it cannot be exported; "
            "rename it");
  std::string prefix = options.symbolPrefix ? *options.symbolPrefix
                                            : defaultSymbolPrefix(outputPath);
  if (kind == ArtifactKind::SharedLibrary) {
    std::string problem = symbolPrefixProblem(prefix);
    if (!problem.empty())
      return makeError(
          "symbol prefix '" + prefix + "' " + problem +
          (options.symbolPrefix
               ? ""
               : " (it comes from the output's name; choose one with "
                 "--symbol-prefix)"));
  }

  // C-interface wrappers (descriptors passed by pointer) for every public
  // function: the glue calls those, independent of LLVM's struct ABI. The
  // compiled functions move to `paddle_impl_<name>` so that `<name>` is free
  // for the typed entry point.
  SymbolTable symbols(module);
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (!func.isPublic() || func.isExternal())
      continue;
    func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  UnitAttr::get(context));
    auto newName = StringAttr::get(context, kImplPrefix + func.getName());
    if (symbols.lookup(newName))
      return makeError("the module defines '" + newName.getValue() +
                       "', a name reserved for the compiled function '" +
                       func.getName() + "'");
    if (failed(symbols.replaceAllSymbolUses(func, newName, module)))
      return makeError("cannot rename function '" + func.getName() + "'");
    symbols.setSymbolName(func, newName);
  }
  PassManager pm(context);
  if (options.passManagerFlags && failed(applyPassManagerCLOptions(pm)))
    return makeError("bad pass manager options");
  buildCpuPipeline(pm, compile);
  if (failed(pm.run(module)))
    return makeError("lowering with paddle-cpu-pipeline failed");
  std::vector<std::string> kernelNames = takeKernelNames(module);

  if (kind == ArtifactKind::Mlir) {
    if (auto err = writeOutputFile(
            outputPath, [&](llvm::raw_ostream &os) { module.print(os); }))
      return err;
    return llvm::Error::success();
  }

  // LLVM IR, optimized and compiled for this CPU (as the JIT does).
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return tmBuilder.takeError();
  tmBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  tmBuilder->setRelocationModel(llvm::Reloc::PIC_);
  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return tm.takeError();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  // Calls into the runtime go to its exported names (memrefCopy ->
  // paddle_memref_copy, ...), as the JIT binds them.
  int32_t symbolCount = 0;
  const paddle_runtime_symbol_t *runtimeSymbols =
      paddle_runtime_symbols(&symbolCount);
  for (int32_t i = 0; i < symbolCount; ++i) {
    StringRef name = runtimeSymbols[i].name;
    if (name == runtimeSymbols[i].runtime_name)
      continue;
    if (llvm::Function *decl = llvmModule->getFunction(name)) {
      if (!decl->isDeclaration())
        return makeError("the module defines '" + name +
                         "', a name reserved for the runtime");
      // Several names may be one runtime function (the SPMD collectives
      // declared per element type): calls go to the first declaration.
      if (llvm::Function *first =
              llvmModule->getFunction(runtimeSymbols[i].runtime_name)) {
        if (first->getFunctionType() != decl->getFunctionType())
          return makeError("'" + name + "' and '" +
                           runtimeSymbols[i].runtime_name +
                           "' are one runtime function of two types");
        decl->replaceAllUsesWith(first);
        decl->eraseFromParent();
        continue;
      }
      decl->setName(runtimeSymbols[i].runtime_name);
    }
  }
  // Code that calls the oneDNN kernels (paddle-use-onednn) links their
  // library and oneDNN; other artifacts do not depend on oneDNN.
  bool usesOneDnn = llvm::any_of(llvmModule->functions(), [](auto &f) {
    return f.isDeclaration() &&
           f.getName().starts_with("_mlir_ciface_paddle_onednn_");
  });
  std::vector<std::string> imports;
  if (kind == ArtifactKind::SharedLibrary)
    imports = callRuntimeThroughSlots(*llvmModule, runtimeSymbols, symbolCount);
  llvmModule->setDataLayout((*tm)->createDataLayout());
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  if (auto err = makeOptimizingTransformer(3, 0, tm->get())(llvmModule.get()))
    return err;
  // After optimization, so the code is the embedded build's; only the bytes
  // of the large constants now come from the file.
  SidecarWeights sidecarWeights;
  if (options.sidecarWeights)
    sidecarWeights =
        moveWeightsToSidecar(*llvmModule, options.sidecarThreshold);
  // Every file this writes is a OutputFile: the artifact, its
  // weights file and its header are published together at the end, and
  // the intermediate files live in $TMPDIR (never next to an output that
  // may be a device node); all of them go on an error or a signal.
  std::list<OutputFile> published;
  auto output = [&](StringRef path) -> llvm::Expected<OutputFile *> {
    llvm::Expected<OutputFile> file = OutputFile::create(path);
    if (!file)
      return file.takeError();
    published.push_back(std::move(*file));
    return &published.back();
  };
  // The weights file goes first: an artifact never appears without it.
  if (options.sidecarWeights) {
    auto weightsFile = output((outputPath + ".weights").str());
    if (!weightsFile)
      return weightsFile.takeError();
    (*weightsFile)->os() << sidecarWeights.file;
  }

  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream bos(object);
    llvm::legacy::PassManager codegen;
    if ((*tm)->addPassesToEmitFile(codegen, bos, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
      return makeError("this target cannot emit object files");
    codegen.run(*llvmModule);
  }
  auto publishAll = [&]() -> llvm::Error {
    for (OutputFile &file : published)
      if (llvm::Error err = file.commit())
        return err;
    return llvm::Error::success();
  };
  if (kind == ArtifactKind::Object) {
    auto objFile = output(outputPath);
    if (!objFile)
      return objFile.takeError();
    (*objFile)->os() << llvm::StringRef(object.data(), object.size());
    if (llvm::Error err = publishAll())
      return err;
    return llvm::Error::success();
  }

  // Glue + link, through intermediate files in $TMPDIR.
  auto objFile = OutputFile::scratch(".o");
  auto glueFile = OutputFile::scratch(".c");
  auto glueObj = OutputFile::scratch(".o");
  if (!objFile || !glueFile || !glueObj) {
    llvm::Error err = llvm::joinErrors(
        objFile.takeError(),
        llvm::joinErrors(glueFile.takeError(), glueObj.takeError()));
    return err;
  }
  objFile->os() << llvm::StringRef(object.data(), object.size());
  objFile->os().flush();
  glueFile->os() << glueSource(*functions, imports, kernelNames,
                               kind == ArtifactKind::Executable,
                               options.sidecarWeights, prefix);
  glueFile->os().flush();
  auto artifact = output(outputPath);
  if (!artifact)
    return artifact.takeError();
  std::string objPath = objFile->tempPath().str(),
              gluePath = glueFile->tempPath().str(),
              glueObjPath = glueObj->tempPath().str(),
              linkedPath = (*artifact)->tempPath().str();
  std::vector<std::string> ccArgs{"-O2",
                                  "-fPIC",
                                  "-c",
                                  gluePath,
                                  "-o",
                                  glueObjPath,
                                  "-I" PADDLE_RUNTIME_INCLUDE_DIR};
  std::vector<std::string> linkArgs{
      objPath, glueObjPath, PADDLE_RUNTIME_LIBRARY, "-lm", "-o", linkedPath};
  if (kind == ArtifactKind::SharedLibrary) {
    // A library exports the whole runtime C API (sessions, .npy, ...) for
    // the programs that embed it, and binds its own references locally.
    linkArgs = {"-shared",
                "-Wl,-Bsymbolic",
                objPath,
                glueObjPath,
                "-Wl,--whole-archive",
                PADDLE_RUNTIME_LIBRARY,
                "-Wl,--no-whole-archive",
                "-lm",
                "-o",
                linkedPath};
  }
  if (usesOneDnn) {
    // Before the runtime, which the oneDNN kernels call; OpenMP because
    // they set its thread count.
    auto runtimeAt = llvm::find(linkArgs, PADDLE_RUNTIME_LIBRARY);
    linkArgs.insert(kind == ArtifactKind::SharedLibrary ? runtimeAt - 1
                                                        : runtimeAt,
                    PADDLE_RUNTIME_ONEDNN_LIBRARY);
    linkArgs.insert(linkArgs.end() - 3, {PADDLE_DNNL_LIBRARY, "-fopenmp"});
  }
  bool spmd = llvm::any_of(
      *functions, [](const FunctionSignature &f) { return !f.mesh.empty(); });
  if (spmd && kind == ArtifactKind::Executable) {
    // An SPMD program runs one device per process under mpirun: the
    // command line refers to MPI weakly (runtime/src/cli.cpp), so the MPI
    // backend is linked whole, with MPI itself after it.
    std::vector<std::string> mpi = {"-Wl,--whole-archive",
                                    PADDLE_RUNTIME_MPI_LIBRARY,
                                    "-Wl,--no-whole-archive"};
    for (StringRef lib : llvm::split(StringRef(PADDLE_MPI_LIBRARIES), ';'))
      if (!lib.empty())
        mpi.push_back(lib.str());
    linkArgs.insert(llvm::find(linkArgs, PADDLE_RUNTIME_LIBRARY), mpi.begin(),
                    mpi.end());
  }
  if (llvm::Error err = runProgram("cc", ccArgs))
    return err;
  if (llvm::Error err = runProgram("c++", linkArgs))
    return err;
  // A header goes next to a library file; not next to a device node.
  if (kind == ArtifactKind::SharedLibrary && !isSpecialFile(outputPath)) {
    llvm::SmallString<256> header(outputPath);
    llvm::sys::path::replace_extension(header, ".h");
    auto headerFile = output(header);
    if (!headerFile)
      return headerFile.takeError();
    (*headerFile)->os() << headerSource(*functions,
                                        llvm::sys::path::filename(outputPath),
                                        options.sidecarWeights, prefix);
  }
  if (llvm::Error err = publishAll())
    return err;
  return llvm::Error::success();
}
