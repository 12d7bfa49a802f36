//===- npy.cpp - NumPy .npy reading and writing ---------------------------===//
//
// The reader takes untrusted bytes: every length and field is checked before
// use, and any malformed input is an error status, never a crash.
//
//===----------------------------------------------------------------------===//

#include "file_io.h"
#include "paddle_runtime/runtime.h"
#include "tensor_check.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

struct DescrEntry {
  const char *descr;
  paddle_dtype_t dtype;
};
// '=' and '|' mean native / not applicable; this runtime is little-endian.
const DescrEntry kDescrs[] = {
    {"<f4", PADDLE_F32}, {"=f4", PADDLE_F32}, {"<f2", PADDLE_F16},
    {"=f2", PADDLE_F16}, {"<f8", PADDLE_F64}, {"=f8", PADDLE_F64},
    {"|b1", PADDLE_I1},  {"=b1", PADDLE_I1},  {"<b1", PADDLE_I1},
    {"|i1", PADDLE_I8},  {"=i1", PADDLE_I8},  {"<i1", PADDLE_I8},
    {"<i4", PADDLE_I32}, {"=i4", PADDLE_I32}, {"<i8", PADDLE_I64},
    {"=i8", PADDLE_I64},
};

const char *descrOf(paddle_dtype_t dtype) {
  switch (dtype) {
  case PADDLE_F32:
    return "<f4";
  case PADDLE_F16:
    return "<f2";
  case PADDLE_F64:
    return "<f8";
  case PADDLE_I1:
    return "|b1";
  case PADDLE_I8:
    return "|i1";
  case PADDLE_I32:
    return "<i4";
  case PADDLE_I64:
    return "<i8";
  default:
    return nullptr;
  }
}

paddle_status_t err(const char *what) {
  return paddle_status_create(PADDLE_INVALID_ARGUMENT, "malformed .npy: %s",
                              what);
}

constexpr size_t kDuplicateKey = std::string::npos - 1;
constexpr size_t kMaxHeaderBytes = 1 << 20;

/// Finds `'key':` in the header dict and returns the position after it
/// (npos when missing, kDuplicateKey when the key appears twice).
size_t findKey(const std::string &h, const char *key) {
  std::string k1 = std::string("'") + key + "'";
  size_t p = h.find(k1);
  if (p == std::string::npos)
    return p;
  // numpy's literal_eval keeps a repeated key's last value; a reader that
  // took the first would see another array than numpy does.
  if (h.find(k1, p + 1) != std::string::npos)
    return kDuplicateKey;
  p += k1.size();
  while (p < h.size() && h[p] == ' ')
    ++p;
  if (p >= h.size() || h[p] != ':')
    return std::string::npos;
  ++p;
  while (p < h.size() && h[p] == ' ')
    ++p;
  return p;
}

/// What a .npy header says: the element type, the shape and where the data
/// starts.
struct Header {
  paddle_dtype_t dtype = PADDLE_DTYPE_INVALID;
  int32_t rank = 0;
  int64_t shape[PADDLE_MAX_RANK] = {};
  size_t dataStart = 0;
  unsigned __int128 dataBytes = 0;
};

/// The size of the fixed prelude and of the header after it, from the
/// first 12 bytes (`size` of them available).
paddle_status_t parsePrelude(const unsigned char *b, size_t size,
                             size_t &headerStart, size_t &headerLen) {
  if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
    return err("missing the \\x93NUMPY magic");
  unsigned major = b[6];
  if (major == 1) {
    headerLen = b[8] | (b[9] << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return err("truncated header length");
    headerLen = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) |
                ((size_t)b[11] << 24);
    headerStart = 12;
  } else {
    return paddle_status_create(
        PADDLE_UNSUPPORTED, ".npy format version %u is not supported", major);
  }
  // numpy itself refuses headers over 10,000 bytes unless told otherwise.
  if (headerLen > kMaxHeaderBytes)
    return err("header is longer than 1 MiB");
  return nullptr;
}

/// Parses the header dict `h`.
paddle_status_t parseHeader(const std::string &h, Header &out) {
  size_t p = findKey(h, "descr");
  if (p == kDuplicateKey)
    return err("the key 'descr' appears twice in the header");
  if (p == std::string::npos || p >= h.size() || h[p] != '\'')
    return err("no 'descr' in header");
  size_t q = h.find('\'', p + 1);
  if (q == std::string::npos)
    return err("unterminated 'descr'");
  std::string descr = h.substr(p + 1, q - p - 1);
  paddle_dtype_t dtype = PADDLE_DTYPE_INVALID;
  for (const DescrEntry &e : kDescrs)
    if (descr == e.descr)
      dtype = e.dtype;
  if (dtype == PADDLE_DTYPE_INVALID)
    return paddle_status_create(
        PADDLE_UNSUPPORTED,
        ".npy element type '%s' is not supported (expected one of f32, f16, "
        "f64, bool, i8, i32, i64, little-endian)",
        descr.c_str());

  p = findKey(h, "fortran_order");
  if (p == kDuplicateKey)
    return err("the key 'fortran_order' appears twice in the header");
  if (p == std::string::npos)
    return err("no 'fortran_order' in header");
  if (h.compare(p, 4, "True") == 0)
    return paddle_status_create(PADDLE_UNSUPPORTED,
                                ".npy in Fortran order is not supported");
  if (h.compare(p, 5, "False") != 0)
    return err("bad 'fortran_order' value");

  p = findKey(h, "shape");
  if (p == kDuplicateKey)
    return err("the key 'shape' appears twice in the header");
  if (p == std::string::npos || p >= h.size() || h[p] != '(')
    return err("no 'shape' tuple in header");
  q = h.find(')', p);
  if (q == std::string::npos)
    return err("unterminated 'shape' tuple");
  size_t i = p + 1;
  out.rank = 0;
  while (i < q) {
    while (i < q && (h[i] == ' ' || h[i] == ','))
      ++i;
    if (i >= q)
      break;
    if (h[i] < '0' || h[i] > '9')
      return err("non-numeric dim in 'shape'");
    int64_t v = 0;
    while (i < q && h[i] >= '0' && h[i] <= '9') {
      if (v > (INT64_MAX - 9) / 10)
        return err("dim in 'shape' is too large");
      v = v * 10 + (h[i] - '0');
      ++i;
    }
    if (out.rank == PADDLE_MAX_RANK)
      return paddle_status_create(PADDLE_UNSUPPORTED, ".npy rank exceeds %d",
                                  PADDLE_MAX_RANK);
    out.shape[out.rank++] = v;
  }
  out.dtype = dtype;
  out.dataBytes = paddle_dtype_size(dtype);
  for (int32_t d = 0; d < out.rank; ++d)
    out.dataBytes *= (unsigned __int128)out.shape[d];
  return nullptr;
}

paddle_status_t truncated(unsigned long long have) {
  return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                              "truncated .npy: %llu data bytes, shape needs "
                              "more",
                              have);
}

paddle_status_t withPath(const char *path, paddle_status_t s) {
  if (!s)
    return s;
  paddle_status_t named = paddle_status_create(paddle_status_code(s), "%s: %s",
                                               path, paddle_status_message(s));
  paddle_status_free(s);
  return named;
}

/// The header and data of `t` as .npy bytes (`header` then the data).
paddle_status_t npyHeader(const paddle_tensor_t *t, const char *path,
                          std::string &header) {
  std::string what = std::string("writing '") + path + "'";
  if (paddle_status_t s = paddle::runtime::checkTensor(t, what.c_str()))
    return s;
  if (t->strides)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "cannot write a strided tensor view to '%s'; "
                                "only dense tensors",
                                path);
  const char *descr = descrOf(t->dtype);
  if (!descr)
    return paddle_status_create(PADDLE_UNSUPPORTED,
                                "cannot write element type %s to .npy",
                                paddle_dtype_name(t->dtype));
  std::string shape = "(";
  for (int32_t d = 0; d < t->rank; ++d)
    shape += std::to_string(t->shape[d]) + (t->rank == 1      ? ","
                                            : d + 1 < t->rank ? ", "
                                                              : "");
  shape += ")";
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so the data starts 64-byte aligned; end with a newline.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  header.assign("\x93NUMPY\x01\x00", 8);
  header += (char)(dict.size() & 0xff);
  header += (char)(dict.size() >> 8);
  header += dict;
  return nullptr;
}

} // namespace

extern "C" paddle_status_t paddle_npy_parse(const void *bytes, size_t size,
                                            paddle_tensor_t *out) {
  if (!out)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_npy_parse: null result pointer");
  memset(out, 0, sizeof(*out));
  if (!bytes && size)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_npy_parse: null bytes");
  const unsigned char *b = (const unsigned char *)bytes;
  size_t headerStart = 0, headerLen = 0;
  if (paddle_status_t s = parsePrelude(b, size, headerStart, headerLen))
    return s;
  if (headerLen > size - headerStart)
    return err("header runs past the end of the file");
  Header header;
  if (paddle_status_t s = parseHeader(
          std::string((const char *)b + headerStart, headerLen), header))
    return s;
  // Check the data size before allocating anything.
  size_t dataStart = headerStart + headerLen;
  if (header.dataBytes > (unsigned __int128)(size - dataStart))
    return truncated(size - dataStart);
  if (paddle_status_t s =
          paddle_tensor_alloc(out, header.dtype, header.rank, header.shape))
    return s;
  memcpy(out->data, b + dataStart, (size_t)header.dataBytes);
  return nullptr;
}

extern "C" paddle_status_t paddle_npy_read(const char *path,
                                           paddle_tensor_t *out) {
  if (!out || !path)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_npy_read: null argument");
  memset(out, 0, sizeof(*out));
  // The header is read first and says how many bytes follow, so an endless
  // stream (a FIFO, a device) or a huge file costs no more than the shape
  // it claims, and a regular file shorter than that fails before anything
  // is allocated.
  paddle::runtime::InputFile file;
  if (paddle_status_t s = file.open(path, "cannot open"))
    return s;
  unsigned char prelude[12];
  size_t got = file.read(prelude, 10);
  if (got == 10 && prelude[6] >= 2)
    got += file.read(prelude + 10, 2);
  size_t headerStart = 0, headerLen = 0;
  if (paddle_status_t s = parsePrelude(prelude, got, headerStart, headerLen))
    return withPath(path, s);
  std::string h(headerLen, '\0');
  if (file.read(&h[0], headerLen) != headerLen)
    return withPath(path, err("header runs past the end of the file"));
  Header header;
  if (paddle_status_t s = parseHeader(h, header))
    return withPath(path, s);
  if (file.regular() && header.dataBytes > (unsigned __int128)file.remaining())
    return withPath(path, truncated(file.remaining()));
  if (paddle_status_t s =
          paddle_tensor_alloc(out, header.dtype, header.rank, header.shape))
    return withPath(path, s);
  size_t bytes = (size_t)header.dataBytes;
  size_t read = file.read(out->data, bytes);
  if (read != bytes) {
    paddle_tensor_free(out);
    if (file.failed())
      return paddle_status_create(PADDLE_IO_ERROR, "cannot read '%s': %s", path,
                                  strerror(file.error()));
    return withPath(path, truncated(read));
  }
  return nullptr;
}

extern "C" paddle_status_t paddle_npy_write_all(const char *const *paths,
                                                const paddle_tensor_t *tensors,
                                                int32_t count) {
  if (count < 0 || (count > 0 && (!paths || !tensors)))
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_npy_write_all: null argument");
  std::vector<paddle_output_t> outputs;
  auto discardAll = [&](paddle_status_t s) {
    for (paddle_output_t o : outputs)
      paddle_output_discard(o);
    return s;
  };
  for (int32_t i = 0; i < count; ++i) {
    const char *path = paths[i] ? paths[i] : "";
    const paddle_tensor_t *t = &tensors[i];
    std::string header;
    if (paddle_status_t s = npyHeader(t, path, header))
      return discardAll(s);
    paddle_output_t out = nullptr;
    if (paddle_status_t s = paddle_output_create(path, &out))
      return discardAll(s);
    outputs.push_back(out);
    size_t bytes =
        (size_t)paddle_tensor_num_elements(t) * paddle_dtype_size(t->dtype);
    if (paddle_status_t s =
            paddle_output_write(out, header.data(), header.size()))
      return discardAll(s);
    if (bytes)
      if (paddle_status_t s = paddle_output_write(out, t->data, bytes))
        return discardAll(s);
  }
  // Everything is written; publishing is a rename per file.
  paddle_status_t first = nullptr;
  for (paddle_output_t o : outputs) {
    paddle_status_t s = paddle_output_commit(o);
    if (s && !first)
      first = s;
    else
      paddle_status_free(s);
  }
  return first;
}

extern "C" paddle_status_t paddle_npy_write(const char *path,
                                            const paddle_tensor_t *t) {
  if (!t) {
    std::string what = std::string("writing '") + (path ? path : "") + "'";
    return paddle::runtime::checkTensor(t, what.c_str());
  }
  return paddle_npy_write_all(&path, t, 1);
}
