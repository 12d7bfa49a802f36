//===- output_file.cpp - files written whole or not at all
//-----------------===//
//
// Every file the runtime and the tools write goes through paddle_output_*
// (runtime.h): the bytes go to a temporary file, and paddle_output_commit
// publishes them. For a regular file (or a path that does not exist yet)
// publishing is a rename in the target's folder, so the target is either
// the old file or the whole new one. A target that exists and is not a
// regular file (a device node, a FIFO) is never renamed over: that would
// replace the node with a regular file. Its temporary file lives in the
// temporary folder, and publishing copies the bytes into the node.
//
// A temporary file is registered until it is published or dropped. The
// process's handlers for the signals that end it (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT, SIGPIPE, SIGXFSZ) unlink every registered file first, then run
// the handler that was there before (LLVM's in the tools, Python's), or the
// default action. The registry is a list of fixed slots that is never
// freed, so the handler only reads memory that stays valid, and unlink is
// async-signal-safe.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

//===--- The registry of temporary files ----------------------------------===//

enum SlotState : int { Free = 0, Filling = 1, Live = 2 };

struct Slot {
  std::atomic<int> state{Free};
  char path[PATH_MAX];
};

struct Chunk {
  Slot slots[32];
  std::atomic<Chunk *> next{nullptr};
};

Chunk firstChunk;

const int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];
struct sigaction previousActions[kSignalCount];

void removeRegistered() {
  for (Chunk *c = &firstChunk; c; c = c->next.load(std::memory_order_acquire))
    for (Slot &s : c->slots)
      if (s.state.load(std::memory_order_acquire) == Live)
        unlink(s.path);
}

void onSignal(int sig, siginfo_t *info, void *context) {
  int savedErrno = errno;
  int index = 0;
  while (index < kSignalCount && kSignals[index] != sig)
    ++index;
  const struct sigaction &previous = previousActions[index];
  removeRegistered();
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction)
      previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler == SIG_DFL) {
    // Die of the signal, as the process would have without this handler:
    // it is blocked while this runs and is delivered on return.
    signal(sig, SIG_DFL);
    raise(sig);
  } else if (previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
  }
  errno = savedErrno;
}

/// Installs the handler on each signal that does not have it yet and is not
/// ignored. Called for every file registered, so a signal ignored when the
/// first file was registered and at its default action later (a forked child
/// that resets it) gets it then.
void installHandlers() {
  static std::mutex mutex;
  static bool installed[kSignalCount];
  std::lock_guard<std::mutex> lock(mutex);
  for (int i = 0; i < kSignalCount; ++i) {
    if (installed[i])
      continue;
    // An ignored signal does not end the process (and stays ignored in the
    // programs it starts, as nohup wants): leave it alone.
    struct sigaction current {};
    if (sigaction(kSignals[i], nullptr, &current) != 0 ||
        (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN))
      continue;
    // The handler reads previousActions[i] only once it is installed.
    previousActions[i] = current;
    // Interrupted calls restart only where the previous handler had them
    // restart: under Python's SIGINT handler a blocked open() must return
    // (EINTR) for KeyboardInterrupt to be raised.
    struct sigaction action {};
    action.sa_sigaction = onSignal;
    action.sa_flags = SA_SIGINFO | (current.sa_flags & SA_RESTART);
    sigemptyset(&action.sa_mask);
    installed[i] = sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

Slot *registerPath(const std::string &path) {
  if (path.size() >= PATH_MAX)
    return nullptr;
  installHandlers();
  for (Chunk *c = &firstChunk;;) {
    for (Slot &s : c->slots) {
      int expected = Free;
      if (s.state.compare_exchange_strong(expected, Filling)) {
        memcpy(s.path, path.c_str(), path.size() + 1);
        s.state.store(Live, std::memory_order_release);
        return &s;
      }
    }
    Chunk *next = c->next.load(std::memory_order_acquire);
    if (!next) {
      auto *fresh = new (std::nothrow) Chunk;
      if (!fresh)
        return nullptr;
      Chunk *none = nullptr;
      if (c->next.compare_exchange_strong(none, fresh))
        next = fresh;
      else {
        delete fresh;
        next = none;
      }
    }
    c = next;
  }
}

void unregisterPath(Slot *slot) {
  if (slot)
    slot->state.store(Free, std::memory_order_release);
}

//===--- Helpers ----------------------------------------------------------===//

std::string folderOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string temporaryFolder() {
  const char *dir = getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

/// Creates a new file `folder/prefix<unique>suffix` (mode 0666 less the
/// umask, as any new output). The name stays within NAME_MAX whatever the
/// length of `prefix`.
int createUnique(const std::string &folder, std::string prefix,
                 const std::string &suffix, std::string &path) {
  static std::atomic<unsigned> counter{0};
  if (prefix.size() > 160)
    prefix.resize(160);
  for (int attempt = 0;; ++attempt) {
    path = folder + "/" + prefix + ".tmp" + std::to_string(getpid()) + "." +
           std::to_string(counter++) + suffix;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST || attempt == 100)
      return fd;
  }
}

bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += n;
    size -= (size_t)n;
  }
  return true;
}

/// Copies the file at `from` into the open descriptor `to`.
bool copyInto(const std::string &from, int to) {
  int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return false;
  char buffer[1 << 16];
  bool ok = true;
  for (;;) {
    ssize_t n = read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    if (!writeAll(to, buffer, (size_t)n)) {
      ok = false;
      break;
    }
  }
  int e = errno;
  close(in);
  errno = e;
  return ok;
}

} // namespace

struct paddle_output_s {
  enum Kind { Replace, CopyInto, Scratch } kind;
  std::string target;  // what the user named; for messages
  std::string publish; // where the bytes go (the target, links resolved)
  std::string temp;
  int fd = -1;
  int writeErrno = 0;
  Slot *slot = nullptr;
};

namespace {

paddle_status_t ioError(const std::string &target, int e, const char *what) {
  return paddle_status_create(PADDLE_IO_ERROR, "cannot write '%s': %s%s",
                              target.c_str(), what, strerror(e));
}

/// Closes and unlinks the temporary file; frees `out`.
void drop(paddle_output_t out) {
  if (out->fd >= 0)
    close(out->fd);
  if (!out->temp.empty())
    unlink(out->temp.c_str());
  unregisterPath(out->slot);
  delete out;
}

paddle_status_t openTemporary(paddle_output_t out, const std::string &folder,
                              const std::string &prefix,
                              const std::string &suffix) {
  out->fd = createUnique(folder, prefix, suffix, out->temp);
  if (out->fd < 0) {
    int e = errno;
    out->temp.clear();
    std::string target = out->kind == paddle_output_s::Scratch
                             ? "a temporary file in '" + folder + "'"
                             : out->target;
    // Say why the target itself cannot be written where that is the
    // reason (a read-only file), rather than the temporary file's error.
    if (out->kind == paddle_output_s::Replace) {
      int probe = open(out->publish.c_str(), O_WRONLY | O_CLOEXEC);
      if (probe >= 0)
        close(probe);
      else if (errno != ENOENT)
        e = errno;
    }
    paddle_status_t s =
        out->kind == paddle_output_s::Scratch
            ? paddle_status_create(PADDLE_IO_ERROR, "cannot create %s: %s",
                                   target.c_str(), strerror(e))
            : ioError(target, e, "");
    delete out;
    return s;
  }
  out->slot = registerPath(out->temp);
  return nullptr;
}

} // namespace

extern "C" paddle_status_t paddle_output_create(const char *path,
                                                paddle_output_t *out) {
  if (!out)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_output_create: null result pointer");
  *out = nullptr;
  if (!path || !*path)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "no output file name given");
  auto *o = new (std::nothrow) paddle_output_s;
  if (!o)
    return paddle_status_create(PADDLE_OUT_OF_MEMORY, "out of memory");
  o->target = path;
  o->publish = path;
  o->kind = paddle_output_s::Replace;
  std::string base = baseOf(path);
  if (base.empty() || base == "." || base == "..") {
    delete o;
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "cannot write '%s': not a file name", path);
  }
  if (base.size() > NAME_MAX) {
    delete o;
    return ioError(path, ENAMETOOLONG, "");
  }
  struct stat st {};
  if (lstat(path, &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      // Write through the link: the link stays, what it names changes.
      char resolved[PATH_MAX];
      if (stat(path, &st) == 0 && realpath(path, resolved))
        o->publish = resolved;
      else
        st.st_mode = S_IFREG; // a dangling link is replaced
    }
    if (S_ISDIR(st.st_mode)) {
      delete o;
      return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                  "cannot write '%s': it is a directory", path);
    }
    if (!S_ISREG(st.st_mode))
      o->kind = paddle_output_s::CopyInto;
  } else if (errno != ENOENT) {
    int e = errno;
    delete o;
    return ioError(path, e, "");
  }
  bool copy = o->kind == paddle_output_s::CopyInto;
  mode_t mode = S_ISREG(st.st_mode) ? st.st_mode & 07777 : 0;
  if (paddle_status_t s =
          openTemporary(o, copy ? temporaryFolder() : folderOf(o->publish),
                        copy ? "paddle-output" : "." + baseOf(o->publish), ""))
    return s;
  // A replaced file keeps its permissions.
  if (mode && !copy)
    fchmod(o->fd, mode);
  *out = o;
  return nullptr;
}

extern "C" paddle_status_t paddle_output_create_scratch(const char *suffix,
                                                        paddle_output_t *out) {
  if (!out)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "paddle_output_create_scratch: null result pointer");
  *out = nullptr;
  auto *o = new (std::nothrow) paddle_output_s;
  if (!o)
    return paddle_status_create(PADDLE_OUT_OF_MEMORY, "out of memory");
  o->kind = paddle_output_s::Scratch;
  if (paddle_status_t s =
          openTemporary(o, temporaryFolder(), "paddle", suffix ? suffix : ""))
    return s;
  *out = o;
  return nullptr;
}

extern "C" const char *paddle_output_temp_path(paddle_output_t out) {
  return out ? out->temp.c_str() : "";
}

extern "C" paddle_status_t paddle_output_write(paddle_output_t out,
                                               const void *data, size_t size) {
  if (!out || (!data && size))
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_output_write: null argument");
  if (out->writeErrno == 0 && !writeAll(out->fd, data, size))
    out->writeErrno = errno;
  if (out->writeErrno)
    return ioError(out->kind == paddle_output_s::Scratch ? out->temp
                                                         : out->target,
                   out->writeErrno, "");
  return nullptr;
}

extern "C" paddle_status_t paddle_output_commit(paddle_output_t out) {
  if (!out)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_output_commit: null output");
  if (out->kind == paddle_output_s::Scratch) {
    drop(out);
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "a scratch file has no target to publish to");
  }
  int e = out->writeErrno;
  if (!e && close(out->fd) != 0)
    e = errno;
  out->fd = -1;
  struct stat st;
  // A signal handler removes registered files; the process lives on where
  // the signal's handler returns (Python's SIGINT).
  if (!e && stat(out->temp.c_str(), &st) != 0) {
    paddle_status_t s = paddle_status_create(
        PADDLE_IO_ERROR, "cannot write '%s': interrupted by a signal",
        out->target.c_str());
    out->temp.clear();
    drop(out);
    return s;
  }
  if (!e && out->kind == paddle_output_s::Replace) {
    if (rename(out->temp.c_str(), out->publish.c_str()) == 0) {
      out->temp.clear();
      drop(out);
      return nullptr;
    }
    e = errno;
  }
  if (!e && out->kind == paddle_output_s::CopyInto) {
    int fd = open(out->publish.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || !copyInto(out->temp, fd))
      e = errno;
    if (fd >= 0 && close(fd) != 0 && !e)
      e = errno;
  }
  std::string target = out->target;
  drop(out);
  return e ? ioError(target, e, "") : nullptr;
}

extern "C" void paddle_output_discard(paddle_output_t out) {
  if (out)
    drop(out);
}

extern "C" paddle_status_t paddle_write_file(const char *path, const void *data,
                                             size_t size) {
  paddle_output_t out = nullptr;
  if (paddle_status_t s = paddle_output_create(path, &out))
    return s;
  if (paddle_status_t s = paddle_output_write(out, data, size)) {
    paddle_output_discard(out);
    return s;
  }
  return paddle_output_commit(out);
}
