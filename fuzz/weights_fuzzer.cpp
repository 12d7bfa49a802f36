//===- weights_fuzzer.cpp - libFuzzer target for the weights parser ------===//
//
// paddle_weights_parse takes untrusted bytes. Every input must load or give
// an error status that leaves the slots untouched, never a crash or an
// out-of-bounds access (built with AddressSanitizer by scripts/fuzz.sh).
//
// Random bytes almost never carry a valid CRC-32, which would keep the
// fuzzer at the checksum. So each input is parsed twice: as is, and
// "resealed" (the expected fingerprint taken from its header and its last
// four bytes replaced by the CRC of the rest), which reaches the entry
// checks behind the checksum.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

uint32_t crc32(const uint8_t *data, size_t size) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    c ^= data[i];
    for (int k = 0; k < 8; ++k)
      c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return ~c;
}

// The model of the seed corpus (fuzz/corpus/weights): three weights.
constexpr uint64_t kSizes[] = {300, 64, 40};
constexpr int32_t kCount = 3;

void parseInto(const uint8_t *data, size_t size, uint64_t fingerprint) {
  std::vector<std::vector<uint8_t>> storage;
  paddle_weight_slot_t slots[kCount];
  for (int32_t i = 0; i < kCount; ++i) {
    storage.emplace_back(kSizes[i], 0xEE);
    slots[i] = {storage.back().data(), kSizes[i]};
  }
  paddle_status_t status =
      paddle_weights_parse(data, size, fingerprint, slots, kCount);
  if (status) {
    for (const auto &s : storage)
      for (uint8_t b : s)
        if (b != 0xEE)
          abort(); // an error must leave the slots untouched
    paddle_status_free(status);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  parseInto(data, size, 0);
  if (size < 64)
    return 0;
  std::vector<uint8_t> sealed(data, data + size);
  uint64_t fingerprint = 0;
  memcpy(&fingerprint, sealed.data() + 16, 8);
  uint32_t crc = crc32(sealed.data(), size - 4);
  memcpy(sealed.data() + size - 4, &crc, 4);
  parseInto(sealed.data(), size, fingerprint);
  return 0;
}
