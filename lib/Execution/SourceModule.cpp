//===- SourceModule.cpp - load an untrusted module file -------------------===//
//
// Module files come from users, so the parser never sees them unchecked:
//  - Reading: a regular file is mapped; a stream ("-", a FIFO) is read up
//    to kMaxStreamBytes; a directory or a device node is refused. An
//    endless input (/dev/zero) therefore costs nothing.
//  - Text: MLIR's parser recurses once per nesting level ((, [, {, <), and
//    about 10,000 levels overflow a thread's stack. The nesting is counted
//    first and bounded.
//  - Bytecode: the upstream reader trusts counts and offsets it reads (a
//    mutated file can abort it, crash it, make it loop, or make it write
//    out of bounds and go on). The envelope (magic, version, section table)
//    is checked here; then the reader runs in a child process with a time
//    and memory budget, which writes the module again with the bytecode
//    writer. This process parses only that output.
//
//===----------------------------------------------------------------------===//

#include "paddle/Execution/SourceModule.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Bytecode/Encoding.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::paddle;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A stream has no size to check: at most this much of it is read.
constexpr uint64_t kMaxStreamBytes = 2ull << 30;

/// Why a text module nests deeper than kMaxNesting, or "" when it does not.
/// Counts (, [, { and < outside strings and comments on a stack; "->",
/// "<=" and ">=" are not brackets, and a closer that does not match the
/// innermost opener is ignored, so the count is at least the depth the
/// parser will recurse to for every input it accepts.
std::string nestingProblem(llvm::StringRef text, llvm::StringRef name) {
  std::vector<char> stack;
  unsigned line = 1, column = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      continue;
    }
    if (c == '/' && i + 1 < e && text[i + 1] == '/') {
      while (i + 1 < e && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if (c == '"') {
      for (++i; i < e && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line, column = 0;
      }
      continue;
    }
    char next = i + 1 < e ? text[i + 1] : 0;
    char prev = i > 0 ? text[i - 1] : 0;
    if (c == '(' || c == '[' || c == '{' || (c == '<' && next != '=')) {
      stack.push_back(c);
      if (stack.size() > SourceModule::kMaxNesting)
        return (name + ":" + llvm::Twine(line) + ":" + llvm::Twine(column) +
                ": the module nests more than " +
                llvm::Twine(SourceModule::kMaxNesting) +
                " levels deep (brackets, regions, attributes), more than the "
                "parser can take")
            .str();
      continue;
    }
    if (c == '>' && (prev == '-' || next == '='))
      continue;
    char open = c == ')'   ? '('
                : c == ']' ? '['
                : c == '}' ? '{'
                : c == '>' ? '<'
                           : 0;
    if (open && !stack.empty() && stack.back() == open)
      stack.pop_back();
  }
  return "";
}

/// Reads an MLIR bytecode varint at `p` (the "prefix varint" of
/// mlir/Bytecode/Encoding.h: the trailing zeros of the first byte count the
/// bytes that follow; a zero byte means eight).
bool readVarInt(const uint8_t *&p, const uint8_t *end, uint64_t &value) {
  if (p >= end)
    return false;
  uint8_t first = *p;
  unsigned more = first == 0 ? 8 : __builtin_ctz(first);
  if ((uint64_t)(end - p) < 1 + (uint64_t)more)
    return false;
  if (more == 0) {
    value = first >> 1;
    ++p;
    return true;
  }
  uint64_t bits = 0;
  for (unsigned b = 0; b < more; ++b)
    bits |= (uint64_t)p[1 + b] << (8 * b);
  value = more == 8 ? bits : ((bits << 8 | first) >> (more + 1));
  p += 1 + more;
  return true;
}

/// Checks the bytecode envelope: magic, version, producer and that the
/// sections tile the file exactly, each known and present once.
llvm::Error checkBytecodeEnvelope(llvm::StringRef bytes, llvm::StringRef name) {
  auto bad = [&](const llvm::Twine &what) {
    return error("'" + name + "' is not valid MLIR bytecode: " + what);
  };
  const uint8_t *p = reinterpret_cast<const uint8_t *>(bytes.data());
  const uint8_t *begin = p, *end = p + bytes.size();
  p += 4; // the magic, checked by the caller
  uint64_t version = 0;
  if (!readVarInt(p, end, version))
    return bad("truncated version");
  if (version > bytecode::kVersion)
    return bad("version " + llvm::Twine(version) +
               " is newer than this reader's (" +
               llvm::Twine((int)bytecode::kVersion) + ")");
  const uint8_t *producerEnd =
      static_cast<const uint8_t *>(memchr(p, 0, (size_t)(end - p)));
  if (!producerEnd)
    return bad("the producer string is not terminated");
  p = producerEnd + 1;
  bool seen[bytecode::Section::kNumSections] = {};
  while (p < end) {
    size_t at = p - begin;
    uint8_t idAndAligned = *p++;
    unsigned id = idAndAligned & 0x7f;
    uint64_t length = 0;
    if (!readVarInt(p, end, length))
      return bad("truncated section header at byte " + llvm::Twine(at));
    if (id >= bytecode::Section::kNumSections)
      return bad("unknown section id " + llvm::Twine(id) + " at byte " +
                 llvm::Twine(at));
    if (seen[id])
      return bad("section " + llvm::Twine(id) + " appears twice (byte " +
                 llvm::Twine(at) + ")");
    seen[id] = true;
    if (idAndAligned & 0x80) {
      uint64_t alignment = 0;
      if (!readVarInt(p, end, alignment) || alignment == 0 ||
          (alignment & (alignment - 1)) || alignment > (1u << 16))
        return bad("bad alignment of section " + llvm::Twine(id));
      uint64_t padding = 0;
      while (p < end && *p == bytecode::kAlignmentByte && padding < alignment)
        ++p, ++padding;
    }
    if (length > (uint64_t)(end - p))
      return bad("section " + llvm::Twine(id) + " at byte " + llvm::Twine(at) +
                 " is " + llvm::Twine(length) +
                 " bytes long, past the end of "
                 "the file");
    p += length;
  }
  for (unsigned id :
       {bytecode::Section::kString, bytecode::Section::kDialect,
        bytecode::Section::kAttrType, bytecode::Section::kAttrTypeOffset,
        bytecode::Section::kIR})
    if (!seen[id])
      return bad("missing section " + llvm::Twine(id));
  return llvm::Error::success();
}

// How the child ends besides a crash: codes that no runtime (a sanitizer's
// report exits 1) or default signal action gives.
constexpr int kChildParseError = 86, kChildWriteError = 87;

/// Reads `bytes` with the upstream reader in a child process, with a
/// budget of time and memory, and returns the module as the child wrote it
/// again with the bytecode writer. The reader trusts the counts and
/// offsets of a file: a corrupt one can make it abort, crash, loop, or
/// write out of bounds and go on (found by fuzzing); none of that reaches
/// this process, which reads only the writer's well-formed output. A parse
/// or verification error comes back as the child's diagnostics.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBytecodeInChild(llvm::StringRef bytes, llvm::StringRef name,
                    const DialectRegistry &registry) {
  // A budget of time: 5 s, plus 1 s per 8 MiB (reading and writing BERT-base,
  // 340 MB, takes about 1 s).
  unsigned seconds = 5 + (unsigned)(bytes.size() >> 23);
  int pipeFds[2];
  if (pipe2(pipeFds, O_CLOEXEC) != 0)
    return error("cannot read '" + name + "': " + strerror(errno));
  int output = memfd_create("paddle-bytecode", MFD_CLOEXEC);
  if (output < 0) {
    int e = errno;
    close(pipeFds[0]);
    close(pipeFds[1]);
    return error("cannot read '" + name + "': " + strerror(e));
  }
  // Memory: what the process has mapped now plus a budget for the module.
  uint64_t budget = (2ull << 30) + 32 * (uint64_t)bytes.size();
  pid_t child = fork();
  if (child < 0) {
    int e = errno;
    close(pipeFds[0]);
    close(pipeFds[1]);
    close(output);
    return error("cannot read '" + name + "': " + strerror(e));
  }
  if (child == 0) {
    // Only this thread exists here: no threads for the context, no LLVM
    // crash handlers (a crash is the answer), stderr to the parent.
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP})
      signal(sig, SIG_DFL);
    // Also the limit of a CPU loop without the parent (SIGKILL at the hard
    // limit, whatever handlers the host installed).
    struct rlimit cpu = {seconds, seconds + 1};
    setrlimit(RLIMIT_CPU, &cpu);
    dup2(pipeFds[1], STDERR_FILENO);
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0) {
      long pages = 0, pageSize = sysconf(_SC_PAGESIZE);
      if (FILE *statm = fopen("/proc/self/statm", "r")) {
        if (fscanf(statm, "%ld", &pages) != 1)
          pages = 0;
        fclose(statm);
      }
      rlim_t limit = (rlim_t)pages * (rlim_t)pageSize + budget;
      if (as.rlim_max == RLIM_INFINITY || limit < as.rlim_max) {
        as.rlim_cur = limit;
        setrlimit(RLIMIT_AS, &as);
      }
    }
    DialectRegistry copy;
    registry.appendTo(copy);
    MLIRContext context(copy, MLIRContext::Threading::DISABLED);
    context.getDiagEngine().registerHandler([](Diagnostic &d) {
      llvm::raw_fd_ostream err(STDERR_FILENO, /*shouldClose=*/false);
      auto print = [&](Diagnostic &one, llvm::StringRef severity) {
        Location loc = one.getLocation();
        if (auto file = dyn_cast<FileLineColLoc>(loc))
          err << file.getFilename().getValue() << ":" << file.getLine() << ":"
              << file.getColumn();
        else
          err << loc;
        err << ": " << severity << ": " << one << "\n";
      };
      print(d, d.getSeverity() == DiagnosticSeverity::Error ? "error" : "note");
      for (Diagnostic &note : d.getNotes())
        print(note, "note");
      return success();
    });
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(bytes, ParserConfig(&context), name);
    if (!module)
      _exit(kChildParseError);
    llvm::raw_fd_ostream os(output, /*shouldClose=*/false);
    if (failed(writeBytecodeToFile(*module, os)))
      _exit(kChildWriteError);
    os.flush();
    _exit(os.has_error() ? kChildWriteError : 0);
  }
  close(pipeFds[1]);
  // Wait for the child's exit, reading its stderr as it comes, and kill it
  // at the deadline (alarm() in the child would not do: the host may have
  // its own SIGALRM handler, as libFuzzer has). The exit is watched through
  // a pidfd, not the pipe's end of file: a sibling forked by another thread
  // may hold the pipe open.
  std::string childError;
  int status = 0;
  bool timedOut = false;
  int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
  fcntl(pipeFds[0], F_SETFL, O_NONBLOCK);
  auto drain = [&] {
    char buffer[4096];
    ssize_t n;
    while ((n = read(pipeFds[0], buffer, sizeof buffer)) > 0)
      if (childError.size() < 16384)
        childError.append(buffer, (size_t)n);
  };
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (int pollMs = 1;; pollMs = std::min(pollMs * 2, 50)) {
    drain();
    pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR))
      break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      kill(child, SIGKILL);
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      timedOut = true;
      break;
    }
    struct pollfd fds[2] = {{pipeFds[0], POLLIN, 0}, {pidfd, POLLIN, 0}};
    // Without a pidfd (old kernels), poll the child's state with a backoff.
    poll(fds, pidfd >= 0 ? 2 : 1,
         (int)std::min<long long>(left, pidfd >= 0 ? 1000 : pollMs));
  }
  drain();
  if (pidfd >= 0)
    close(pidfd);
  close(pipeFds[0]);
  llvm::StringRef diagnostics = llvm::StringRef(childError).trim();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    struct stat st;
    if (fstat(output, &st) != 0) {
      int e = errno;
      close(output);
      return error("cannot read '" + name + "': " + strerror(e));
    }
    auto written = llvm::MemoryBuffer::getOpenFile(
        llvm::sys::fs::convertFDToNativeFile(output), name, st.st_size,
        /*RequiresNullTerminator=*/false);
    close(output);
    if (!written)
      return error("cannot read '" + name +
                   "': " + written.getError().message());
    return std::move(*written);
  }
  close(output);
  if (WIFEXITED(status) && WEXITSTATUS(status) == kChildParseError)
    return error("cannot parse '" + name + "':\n" + diagnostics);
  std::string why;
  if (timedOut)
    why = "reading it took longer than " + std::to_string(seconds) +
          " s (a loop in the reader)";
  else if (WIFSIGNALED(status))
    why =
        std::string("the reader crashed (") + strsignal(WTERMSIG(status)) + ")";
  else
    why =
        "the reader failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
  llvm::StringRef firstLine = diagnostics.split('\n').first;
  if (!firstLine.empty())
    why += ": " + firstLine.str();
  return error("'" + name + "' is corrupt MLIR bytecode: " + why);
}

} // namespace

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
paddle::readModuleFile(llvm::StringRef path) {
  std::string p = path.str();
  if (path != "-") {
    struct stat st;
    if (stat(p.c_str(), &st) != 0)
      return error("cannot read '" + path + "': " + strerror(errno));
    if (S_ISDIR(st.st_mode))
      return error("cannot read '" + path + "': it is a directory");
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
      return error("cannot read '" + path +
                   "': it is a device, not a module file");
    if (S_ISREG(st.st_mode)) {
      // MLIR's lexer stops at a NUL: the text must end with one (a mapped
      // file whose size is a multiple of the page size has none after it).
      auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/
                                                true);
      if (!buffer)
        return error("cannot read '" + path +
                     "': " + buffer.getError().message());
      return std::move(*buffer);
    }
  }
  // A stream: read in chunks up to the bound.
  int fd = path == "-" ? STDIN_FILENO : open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return error("cannot read '" + path + "': " + strerror(errno));
  std::string data;
  char chunk[1 << 16];
  int readErrno = 0;
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      readErrno = errno;
    if (n <= 0)
      break;
    if (data.size() + (size_t)n > kMaxStreamBytes) {
      readErrno = EFBIG;
      break;
    }
    data.append(chunk, (size_t)n);
  }
  if (fd != STDIN_FILENO)
    close(fd);
  if (readErrno == EFBIG)
    return error("cannot read '" + path + "': a module read from a stream " +
                 "may be at most " + llvm::Twine(kMaxStreamBytes >> 30) +
                 " GiB (a stream that never ends?); write it to a file");
  if (readErrno)
    return error("cannot read '" + path + "': " + strerror(readErrno));
  return llvm::MemoryBuffer::getMemBufferCopy(data, path);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
paddle::sanitizeModuleBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                             const DialectRegistry &registry) {
  llvm::StringRef bytes = buffer->getBuffer();
  llvm::StringRef name = buffer->getBufferIdentifier();
  if (bytes.starts_with("ML\xefR")) {
    if (llvm::Error err = checkBytecodeEnvelope(bytes, name))
      return std::move(err);
    return readBytecodeInChild(bytes, name, registry);
  }
  std::string problem = nestingProblem(bytes, name);
  if (!problem.empty())
    return error(problem);
  return std::move(buffer);
}

llvm::Expected<std::unique_ptr<SourceModule>>
SourceModule::load(llvm::StringRef path, MLIRContext &context) {
  auto file = readModuleFile(path);
  if (!file)
    return file.takeError();
  auto buffer =
      sanitizeModuleBuffer(std::move(*file), context.getDialectRegistry());
  if (!buffer)
    return buffer.takeError();
  std::unique_ptr<SourceModule> source(new SourceModule());
  source->sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  source->handler =
      std::make_unique<SourceMgrDiagnosticHandler>(source->sourceMgr, &context);
  source->module = parseSourceFile<ModuleOp>(source->sourceMgr, &context);
  if (!source->module)
    return error("cannot parse '" + path + "'");
  if (failed(source->module->verify()))
    return error("'" + path + "' does not verify");
  return source;
}
