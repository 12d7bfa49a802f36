//===- OutputFile.h - the runtime's output files for LLVM code ---*- C++
//-*-===//
//
// The tools, passes and the Python extension write files through the
// runtime's paddle_output_* (paddle_runtime/runtime.h), as compiled
// executables do: the bytes go to a registered temporary file that a
// signal removes, and commit publishes them by a rename, or into a device
// node or FIFO without replacing it. This wraps that in llvm::Error and a
// raw_ostream. Header-only: it needs the runtime library, nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_EXECUTION_OUTPUTFILE_H
#define PADDLE_EXECUTION_OUTPUTFILE_H

#include "paddle_runtime/runtime.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir::paddle {

/// An output file being written; dropped (its temporary file removed)
/// unless committed.
class OutputFile {
public:
  /// A file that commit() publishes at `path`.
  static llvm::Expected<OutputFile> create(llvm::StringRef path) {
    paddle_output_t out = nullptr;
    if (paddle_status_t s = paddle_output_create(path.str().c_str(), &out))
      return toError(s);
    return OutputFile(out);
  }
  /// An intermediate file with `suffix` in $TMPDIR, removed when dropped.
  static llvm::Expected<OutputFile> scratch(llvm::StringRef suffix) {
    paddle_output_t out = nullptr;
    if (paddle_status_t s =
            paddle_output_create_scratch(suffix.str().c_str(), &out))
      return toError(s);
    return OutputFile(out);
  }

  OutputFile(OutputFile &&other) noexcept
      : handle(other.handle), stream(std::move(other.stream)) {
    other.handle = nullptr;
    if (stream)
      stream->handle = &handle;
  }
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;
  ~OutputFile() {
    if (stream) {
      stream->flush();
      paddle_status_free(stream->error);
    }
    paddle_output_discard(handle);
  }

  /// The stream to write to; its write errors surface at commit().
  llvm::raw_ostream &os() { return *stream; }
  /// The temporary file, for a program that writes it by name.
  llvm::StringRef tempPath() const { return paddle_output_temp_path(handle); }

  /// Publishes what was written.
  llvm::Error commit() {
    stream->flush();
    if (stream->error)
      return discardWith(stream->error);
    paddle_output_t out = handle;
    handle = nullptr;
    if (paddle_status_t s = paddle_output_commit(out))
      return toError(s);
    return llvm::Error::success();
  }

private:
  /// Forwards to paddle_output_write and keeps the first error.
  struct Stream : llvm::raw_ostream {
    explicit Stream(paddle_output_t *handle) : handle(handle) {}
    ~Stream() override { flush(); }
    void write_impl(const char *data, size_t size) override {
      if (!error && *handle)
        error = paddle_output_write(*handle, data, size);
      position += size;
    }
    uint64_t current_pos() const override { return position; }
    paddle_output_t *handle;
    paddle_status_t error = nullptr;
    uint64_t position = 0;
  };

  explicit OutputFile(paddle_output_t handle)
      : handle(handle), stream(std::make_unique<Stream>(&this->handle)) {}

  static llvm::Error toError(paddle_status_t s) {
    std::string message = paddle_status_message(s);
    paddle_status_free(s);
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }
  llvm::Error discardWith(paddle_status_t s) {
    stream->error = nullptr;
    paddle_output_discard(handle);
    handle = nullptr;
    return toError(s);
  }

  paddle_output_t handle;
  std::unique_ptr<Stream> stream;
};

/// Writes `path` whole or not at all.
inline llvm::Error
writeOutputFile(llvm::StringRef path,
                llvm::function_ref<void(llvm::raw_ostream &)> write) {
  llvm::Expected<OutputFile> out = OutputFile::create(path);
  if (!out)
    return out.takeError();
  write(out->os());
  return out->commit();
}

} // namespace mlir::paddle

#endif // PADDLE_EXECUTION_OUTPUTFILE_H
