//===- weights.cpp - reading sidecar weights files ------------------------===//
//
// `paddle-compile --weights sidecar` moves a module's large constants into a
// file next to the artifact (layout in docs/weights-format.md). The bytes of
// that file are untrusted: every field is checked, with overflow-safe
// arithmetic, and the whole image is verified (checksum, fingerprint, every
// entry against the module's slots) before a single byte reaches the slots,
// so a bad file leaves the module exactly as it was.
//
//===----------------------------------------------------------------------===//

#include "file_io.h"
#include "paddle_runtime/runtime.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr char kMagic[8] = {'P', 'D', 'W', 'E', 'I', 'G', 'H', 'T'};
constexpr uint64_t kHeaderSize = 64;
constexpr uint64_t kEntrySize = 32;
constexpr uint64_t kAlignment = 64;
constexpr uint64_t kTrailerSize = 4;
// Names are printed in messages; a longer one is malformed.
constexpr uint32_t kMaxNameSize = 1024;

/// CRC-32 (IEEE 802.3, the polynomial of zlib and llvm::crc32), which the
/// writer in paddle-compile uses. Table-driven, one byte at a time.
std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

uint32_t crc32(const unsigned char *data, size_t size) {
  static const std::array<uint32_t, 256> table = makeCrcTable();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i)
    c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t readU32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

uint64_t readU64(const unsigned char *p) {
  return (uint64_t)readU32(p) | (uint64_t)readU32(p + 4) << 32;
}

/// `value` rounded up to kAlignment, or false when that overflows.
bool alignUp(uint64_t value, uint64_t &out) {
  if (value > UINT64_MAX - (kAlignment - 1))
    return false;
  out = (value + kAlignment - 1) & ~(kAlignment - 1);
  return true;
}

using ull = unsigned long long;

struct Entry {
  uint64_t nameOffset;
  uint32_t nameSize;
  uint64_t dataOffset;
  uint64_t dataSize;
};

/// Parses and validates; `source` names the image in messages ("weights
/// file 'x.weights'").
paddle_status_t parse(const char *source, const unsigned char *b, size_t size,
                      uint64_t expectedFingerprint,
                      const paddle_weight_slot_t *slots, int32_t count) {
  if (count < 0 || (count > 0 && !slots))
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "loading %s: invalid slot list (count %d)",
                                source, count);
  for (int32_t i = 0; i < count; ++i)
    if (!slots[i].data && slots[i].size != 0)
      return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                  "loading %s: slot %d has no memory", source,
                                  i);
  auto malformed = [&](const char *what) {
    return paddle_status_create(PADDLE_INVALID_ARGUMENT, "%s is malformed: %s",
                                source, what);
  };

  // Header.
  if (!b && size)
    return malformed("no data");
  if (size < kHeaderSize)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "%s is truncated (%llu bytes, header needs %llu)", source, (ull)size,
        (ull)kHeaderSize);
  if (memcmp(b, kMagic, sizeof(kMagic)) != 0)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s is not a Paddle weights file (bad magic)",
                                source);
  uint32_t version = readU32(b + 8);
  if (version != PADDLE_WEIGHTS_VERSION)
    return paddle_status_create(
        PADDLE_UNSUPPORTED,
        "%s has unsupported version %u (this runtime reads %d)", source,
        version, PADDLE_WEIGHTS_VERSION);
  uint32_t entryCount = readU32(b + 12);
  uint64_t fingerprint = readU64(b + 16);
  uint64_t fileSize = readU64(b + 24);
  uint64_t namesOffset = readU64(b + 32);
  uint64_t namesSize = readU64(b + 40);
  uint64_t payloadOffset = readU64(b + 48);
  uint64_t payloadSize = readU64(b + 56);
  if (fileSize > size)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "%s is truncated (%llu bytes, header says %llu)", source, (ull)size,
        (ull)fileSize);
  if (fileSize < size)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "%s is malformed: it has %llu bytes, header says %llu", source,
        (ull)size, (ull)fileSize);

  // Layout: the sections follow each other in a fixed order (see the format
  // document), so each offset is checked against the one it must equal.
  // `entryCount` < 2^32 and kEntrySize = 32 cannot overflow 64 bits.
  uint64_t tableEnd = kHeaderSize + kEntrySize * entryCount;
  if (tableEnd > size)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "%s is truncated (%llu bytes, the entry table needs %llu)", source,
        (ull)size, (ull)tableEnd);
  if (namesOffset != tableEnd)
    return malformed("the names do not start after the entry table");
  if (namesSize > size - namesOffset)
    return malformed("the names run past the end");
  uint64_t expectedPayload;
  if (!alignUp(namesOffset + namesSize, expectedPayload) ||
      payloadOffset != expectedPayload)
    return malformed("the payload does not start at the 64-byte boundary "
                     "after the names");
  if (payloadOffset > size || payloadSize > size - payloadOffset ||
      kTrailerSize > size - payloadOffset - payloadSize ||
      payloadOffset + payloadSize + kTrailerSize != fileSize)
    return malformed("the payload and checksum do not end the file");

  // Integrity before meaning: a corrupt file is reported as corrupt, not by
  // whichever field the corruption happened to hit.
  uint32_t stored = readU32(b + fileSize - kTrailerSize);
  uint32_t computed = crc32(b, fileSize - kTrailerSize);
  if (stored != computed)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "%s: checksum mismatch (stored 0x%08x, computed 0x%08x); the file is "
        "corrupt",
        source, stored, computed);
  if (fingerprint != expectedFingerprint)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "%s was written for a different model (fingerprint 0x%016llx, this "
        "model 0x%016llx)",
        source, (ull)fingerprint, (ull)expectedFingerprint);

  // Entries: names packed in order, payloads 64-byte aligned in order.
  std::vector<Entry> entries(entryCount);
  uint64_t nextName = 0, nextData = payloadOffset;
  for (uint32_t i = 0; i < entryCount; ++i) {
    const unsigned char *e = b + kHeaderSize + kEntrySize * i;
    Entry &entry = entries[i];
    entry = {readU64(e), readU32(e + 8), readU64(e + 16), readU64(e + 24)};
    char what[160];
    if (readU32(e + 12) != 0) {
      snprintf(what, sizeof(what), "entry %u has a nonzero reserved field", i);
      return malformed(what);
    }
    if (entry.nameOffset != nextName || entry.nameSize == 0 ||
        entry.nameSize > kMaxNameSize ||
        entry.nameSize > namesSize - nextName) {
      snprintf(what, sizeof(what), "entry %u has a bad name range", i);
      return malformed(what);
    }
    const unsigned char *name = b + namesOffset + entry.nameOffset;
    for (uint32_t k = 0; k < entry.nameSize; ++k)
      if (name[k] < 0x20 || name[k] > 0x7e) {
        snprintf(what, sizeof(what), "entry %u has a non-printable name", i);
        return malformed(what);
      }
    nextName += entry.nameSize;
    uint64_t payloadEnd = payloadOffset + payloadSize;
    if (entry.dataOffset != nextData || entry.dataSize > payloadEnd ||
        entry.dataOffset > payloadEnd - entry.dataSize) {
      snprintf(what, sizeof(what),
               "entry %u data [%llu, +%llu) is not at its place in the "
               "payload [%llu, %llu)",
               i, (ull)entry.dataOffset, (ull)entry.dataSize,
               (ull)payloadOffset, (ull)payloadEnd);
      return malformed(what);
    }
    uint64_t end = entry.dataOffset + entry.dataSize;
    // The last entry ends the payload; the others are padded to 64 bytes.
    if (i + 1 < entryCount && !alignUp(end, nextData))
      return malformed("payload offsets overflow");
    if (i + 1 == entryCount && end != payloadEnd)
      return malformed("the payload does not end with the last entry");
  }
  if (nextName != namesSize)
    return malformed("the names section has bytes no entry uses");
  if (entryCount == 0 && payloadSize != 0)
    return malformed("a file without entries has a payload");

  // Against the model.
  if ((int64_t)entryCount != count)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "%s has %u entries, the model expects %d weights", source, entryCount,
        count);
  for (uint32_t i = 0; i < entryCount; ++i)
    if (entries[i].dataSize != slots[i].size)
      return paddle_status_create(
          PADDLE_INVALID_ARGUMENT,
          "%s: entry %u '%.*s' has %llu bytes, the model expects %llu", source,
          i, (int)entries[i].nameSize,
          (const char *)b + namesOffset + entries[i].nameOffset,
          (ull)entries[i].dataSize, (ull)slots[i].size);

  for (uint32_t i = 0; i < entryCount; ++i)
    if (entries[i].dataSize)
      memcpy(slots[i].data, b + entries[i].dataOffset, entries[i].dataSize);
  return nullptr;
}

} // namespace

extern "C" paddle_status_t
paddle_weights_parse(const void *bytes, size_t size,
                     uint64_t expected_fingerprint,
                     const paddle_weight_slot_t *slots, int32_t count) {
  return parse("weights data", static_cast<const unsigned char *>(bytes), size,
               expected_fingerprint, slots, count);
}

extern "C" paddle_status_t
paddle_weights_load(const char *path, uint64_t expected_fingerprint,
                    const paddle_weight_slot_t *slots, int32_t count) {
  if (!path)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "no weights file path given");
  if (count < 0 || (count > 0 && !slots))
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "loading weights file '%s': invalid slot list "
                                "(count %d)",
                                path, count);
  paddle::runtime::InputFile file;
  if (paddle_status_t s =
          file.open(path, "cannot open weights file", PADDLE_NOT_FOUND))
    return s;
  // The whole image is read first: nothing reaches the slots before the
  // checksum over all of it has been verified. A valid file for these slots
  // is at most this long (names are at most 1024 bytes, each section is
  // padded to 64), so a longer file or an endless stream stops here.
  uint64_t limit = kHeaderSize + 2 * kAlignment;
  for (int32_t i = 0; i < count; ++i) {
    uint64_t entry = 32 + 1024 + 2 * kAlignment;
    if (slots[i].size > UINT64_MAX - limit - entry)
      return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                  "loading weights file '%s': slot %d is too "
                                  "large",
                                  path, i);
    limit += entry + slots[i].size;
  }
  std::string bytes;
  std::string what = std::string("weights file '") + path + "'";
  if (paddle_status_t s = file.readRest(bytes, limit, what.c_str()))
    return s;
  return parse(what.c_str(),
               reinterpret_cast<const unsigned char *>(bytes.data()),
               bytes.size(), expected_fingerprint, slots, count);
}
