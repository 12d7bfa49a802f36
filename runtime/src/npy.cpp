//===- npy.cpp - NumPy .npy reading and writing ---------------------------===//
//
// The reader takes untrusted bytes: every length and field is checked before
// use, and any malformed input is an error status, never a crash.
//
//===----------------------------------------------------------------------===//

#include "file_io.h"
#include "paddle_runtime/runtime.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

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

/// Finds `'key':` in the header dict and returns the position after it.
size_t findKey(const std::string &h, const char *key) {
  std::string k1 = std::string("'") + key + "'";
  size_t p = h.find(k1);
  if (p == std::string::npos)
    return p;
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

} // namespace

extern "C" paddle_status_t paddle_npy_parse(const void *bytes, size_t size,
                                            paddle_tensor_t *out) {
  memset(out, 0, sizeof(*out));
  const unsigned char *b = (const unsigned char *)bytes;
  if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
    return err("missing the \\x93NUMPY magic");
  unsigned major = b[6];
  size_t headerLen, headerStart;
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
  if (headerLen > size - headerStart)
    return err("header runs past the end of the file");
  std::string h((const char *)b + headerStart, headerLen);

  size_t p = findKey(h, "descr");
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
  if (p == std::string::npos)
    return err("no 'fortran_order' in header");
  if (h.compare(p, 4, "True") == 0)
    return paddle_status_create(PADDLE_UNSUPPORTED,
                                ".npy in Fortran order is not supported");
  if (h.compare(p, 5, "False") != 0)
    return err("bad 'fortran_order' value");

  p = findKey(h, "shape");
  if (p == std::string::npos || p >= h.size() || h[p] != '(')
    return err("no 'shape' tuple in header");
  q = h.find(')', p);
  if (q == std::string::npos)
    return err("unterminated 'shape' tuple");
  int64_t shape[PADDLE_MAX_RANK];
  int32_t rank = 0;
  size_t i = p + 1;
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
    if (rank == PADDLE_MAX_RANK)
      return paddle_status_create(PADDLE_UNSUPPORTED, ".npy rank exceeds %d",
                                  PADDLE_MAX_RANK);
    shape[rank++] = v;
  }

  // Check the data size before allocating anything.
  size_t elementSize = paddle_dtype_size(dtype);
  size_t dataStart = headerStart + headerLen;
  unsigned __int128 need = elementSize;
  for (int32_t d = 0; d < rank; ++d)
    need *= (unsigned __int128)shape[d];
  if (need > (unsigned __int128)(size - dataStart))
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "truncated .npy: %llu data bytes, shape needs "
                                "more",
                                (unsigned long long)(size - dataStart));
  if (paddle_status_t s = paddle_tensor_alloc(out, dtype, rank, shape))
    return s;
  memcpy(out->data, b + dataStart, (size_t)need);
  return nullptr;
}

extern "C" paddle_status_t paddle_npy_read(const char *path,
                                           paddle_tensor_t *out) {
  memset(out, 0, sizeof(*out));
  FILE *f = fopen(path, "rb");
  if (!f)
    return paddle_status_create(PADDLE_IO_ERROR, "cannot open '%s': %s", path,
                                strerror(errno));
  std::string bytes;
  if (!paddle::runtime::readAndClose(f, bytes))
    return paddle_status_create(PADDLE_IO_ERROR, "cannot read '%s'", path);
  paddle_status_t s = paddle_npy_parse(bytes.data(), bytes.size(), out);
  if (s) {
    paddle_status_t withPath = paddle_status_create(
        paddle_status_code(s), "%s: %s", path, paddle_status_message(s));
    paddle_status_free(s);
    return withPath;
  }
  return nullptr;
}

extern "C" paddle_status_t paddle_npy_write(const char *path,
                                            const paddle_tensor_t *t) {
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
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so the data starts 64-byte aligned; end with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string tmp = std::string(path) + ".tmp." + std::to_string(getpid());
  FILE *f = fopen(tmp.c_str(), "wb");
  if (!f)
    return paddle_status_create(PADDLE_IO_ERROR, "cannot create '%s': %s",
                                tmp.c_str(), strerror(errno));
  unsigned char pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           (unsigned char)(header.size() & 0xff),
                           (unsigned char)(header.size() >> 8)};
  size_t bytes =
      (size_t)paddle_tensor_num_elements(t) * paddle_dtype_size(t->dtype);
  bool ok = fwrite(pre, 1, 10, f) == 10 &&
            fwrite(header.data(), 1, header.size(), f) == header.size() &&
            (bytes == 0 || fwrite(t->data, 1, bytes, f) == bytes);
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp.c_str(), path) != 0) {
    int e = errno;
    remove(tmp.c_str());
    return paddle_status_create(PADDLE_IO_ERROR, "cannot write '%s': %s", path,
                                strerror(e));
  }
  return nullptr;
}
