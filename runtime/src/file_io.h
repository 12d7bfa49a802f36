//===- file_io.h - reading whole files (internal) -------------------------===//
//
// The loaders of untrusted files (.npy, weights, shared objects) read the
// whole file before looking at it; they share this loop and keep their own
// open/read error messages.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_FILE_IO_H
#define PADDLE_RUNTIME_FILE_IO_H

#include <cstdio>
#include <string>

namespace paddle::runtime {

/// Appends the rest of `file` to `out` and closes it. False on a read error.
inline bool readAndClose(FILE *file, std::string &out) {
  char buffer[1 << 16];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, file)) > 0)
    out.append(buffer, n);
  bool failed = ferror(file) != 0;
  fclose(file);
  return !failed;
}

} // namespace paddle::runtime

#endif // PADDLE_RUNTIME_FILE_IO_H
