//===- file_io.h - reading untrusted files (internal) ---------------------===//
//
// The loaders of untrusted files (.npy, weights, shared objects) read what
// a header says follows, never "everything there is": a FIFO or a device
// node never ends, and a huge file would be read before any check.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_FILE_IO_H
#define PADDLE_RUNTIME_FILE_IO_H

#include "paddle_runtime/runtime.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace paddle::runtime {

/// A file opened for reading, with its size where it has one.
class InputFile {
public:
  InputFile() = default;
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  ~InputFile() {
    if (fd >= 0)
      close(fd);
  }

  /// Opens `path`; the error reads "<verb> '<path>': <reason>", with code
  /// `missing` for a file that does not exist.
  paddle_status_t open(const char *path, const char *verb,
                       paddle_status_code_t missing = PADDLE_IO_ERROR) {
    fd = ::open(path, O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && fstat(fd, &st) != 0) {
      int e = errno;
      close(fd);
      fd = -1;
      errno = e;
    }
    if (fd < 0) {
      int e = errno;
      return paddle_status_create(e == ENOENT ? missing : PADDLE_IO_ERROR,
                                  "%s '%s': %s", verb, path, strerror(e));
    }
    if (S_ISDIR(st.st_mode))
      return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                  "%s '%s': it is a directory", verb, path);
    isRegular = S_ISREG(st.st_mode);
    size = isRegular ? (uint64_t)st.st_size : 0;
    return nullptr;
  }

  /// Reads up to `n` bytes; fewer at the end of the file or on an error.
  size_t read(void *into, size_t n) {
    char *p = static_cast<char *>(into);
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::read(fd, p + done, n - done);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        readErrno = errno;
      if (r <= 0)
        break;
      done += (size_t)r;
    }
    position += done;
    return done;
  }

  /// Reads the rest of the file into `out` when it is at most `limit`
  /// bytes; `what` names the file in the error otherwise.
  paddle_status_t readRest(std::string &out, uint64_t limit, const char *what) {
    if (isRegular && size - position > limit)
      return tooLarge(what, limit);
    out.clear();
    char buffer[1 << 16];
    for (;;) {
      size_t n = read(buffer, sizeof buffer);
      if (n == 0)
        break;
      if (out.size() + n > limit)
        return tooLarge(what, limit);
      out.append(buffer, n);
    }
    if (readErrno)
      return paddle_status_create(PADDLE_IO_ERROR, "cannot read %s: %s", what,
                                  strerror(readErrno));
    return nullptr;
  }

  bool regular() const { return isRegular; }
  /// Bytes left in a regular file.
  uint64_t remaining() const { return size > position ? size - position : 0; }
  bool failed() const { return readErrno != 0; }
  int error() const { return readErrno; }

private:
  paddle_status_t tooLarge(const char *what, uint64_t limit) {
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s is larger than %llu bytes, the most it can "
                                "hold%s",
                                what, (unsigned long long)limit,
                                isRegular ? ""
                                          : " (a stream that never ends?)");
  }

  int fd = -1;
  bool isRegular = false;
  uint64_t size = 0, position = 0;
  int readErrno = 0;
};

} // namespace paddle::runtime

#endif // PADDLE_RUNTIME_FILE_IO_H
