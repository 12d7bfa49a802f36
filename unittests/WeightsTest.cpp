//===- WeightsTest.cpp - sidecar weights file parser ----------------------===//
//
// Builds weights images with an independent writer (bitwise CRC-32) and
// checks that the parser accepts exactly the well-formed ones, names the
// problem in its message, and never touches the slots on error.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kFingerprint = 0x0123456789abcdefull;

uint32_t bitwiseCrc32(const std::string &bytes, size_t size) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    c ^= (unsigned char)bytes[i];
    for (int k = 0; k < 8; ++k)
      c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return ~c;
}

void put(std::string &s, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    s[at + i] = (char)(v >> (8 * i));
}

uint64_t get(const std::string &s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= (uint64_t)(unsigned char)s[at + i] << (8 * i);
  return v;
}

uint64_t align64(uint64_t v) { return (v + 63) / 64 * 64; }

/// Recomputes the trailing CRC after a test edited the image.
void reseal(std::string &s) {
  put(s, s.size() - 4, bitwiseCrc32(s, s.size() - 4), 4);
}

struct Weight {
  std::string name, data;
};

/// A version 1 image as docs/weights-format.md describes it.
std::string makeWeights(const std::vector<Weight> &weights,
                        uint64_t fingerprint = kFingerprint) {
  uint64_t namesOffset = 64 + 32 * weights.size(), namesSize = 0;
  for (const Weight &w : weights)
    namesSize += w.name.size();
  uint64_t payloadOffset = align64(namesOffset + namesSize);
  std::vector<uint64_t> offsets;
  uint64_t at = payloadOffset;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (i)
      at = align64(at);
    offsets.push_back(at);
    at += weights[i].data.size();
  }
  std::string s(at + 4, '\0');
  memcpy(&s[0], "PDWEIGHT", 8);
  put(s, 8, 1, 4);
  put(s, 12, weights.size(), 4);
  put(s, 16, fingerprint, 8);
  put(s, 24, s.size(), 8);
  put(s, 32, namesOffset, 8);
  put(s, 40, namesSize, 8);
  put(s, 48, payloadOffset, 8);
  put(s, 56, at - payloadOffset, 8);
  uint64_t nameAt = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    size_t e = 64 + 32 * i;
    put(s, e, nameAt, 8);
    put(s, e + 8, weights[i].name.size(), 4);
    put(s, e + 16, offsets[i], 8);
    put(s, e + 24, weights[i].data.size(), 8);
    s.replace(namesOffset + nameAt, weights[i].name.size(), weights[i].name);
    nameAt += weights[i].name.size();
    s.replace(offsets[i], weights[i].data.size(), weights[i].data);
  }
  reseal(s);
  return s;
}

std::string bytesOf(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = (char)(i * 31 + seed * 7 + 1);
  return s;
}

/// Slots of a model with the weights of `model`, filled with 0xEE so a test
/// can tell whether anything was copied.
struct Slots {
  std::vector<std::string> storage;
  std::vector<paddle_weight_slot_t> slots;
  explicit Slots(const std::vector<Weight> &model) {
    for (const Weight &w : model)
      storage.push_back(std::string(w.data.size(), '\xEE'));
    for (std::string &s : storage)
      slots.push_back({s.empty() ? nullptr : &s[0], (uint64_t)s.size()});
  }
  bool untouched() const {
    for (const std::string &s : storage)
      if (s.find_first_not_of('\xEE') != std::string::npos)
        return false;
    return true;
  }
};

/// Parses `image` into `slots`; returns "" on success or the message.
std::string parse(const std::string &image, Slots &slots,
                  uint64_t fingerprint = kFingerprint) {
  paddle_status_t s =
      paddle_weights_parse(image.data(), image.size(), fingerprint,
                           slots.slots.data(), (int32_t)slots.slots.size());
  std::string message = s ? paddle_status_message(s) : "";
  if (s) {
    EXPECT_NE(message, "");
  }
  paddle_status_free(s);
  return message;
}

const std::vector<Weight> kModel = {{"__constant_64x128xf32", bytesOf(300, 1)},
                                    {"b", bytesOf(64, 2)},
                                    {"__constant_10xf32", bytesOf(40, 3)}};

TEST(Weights, CopiesEveryEntryIntoItsSlot) {
  Slots slots(kModel);
  ASSERT_EQ(parse(makeWeights(kModel), slots), "");
  for (size_t i = 0; i < kModel.size(); ++i)
    EXPECT_EQ(slots.storage[i], kModel[i].data) << "entry " << i;
}

TEST(Weights, AcceptsAModelWithoutWeights) {
  Slots slots({});
  EXPECT_EQ(parse(makeWeights({}), slots), "");
}

TEST(Weights, NamesTheProblem) {
  std::string good = makeWeights(kModel);
  struct Case {
    const char *what;
    std::string image;
    std::string message;
    uint64_t fingerprint = kFingerprint;
  };
  std::vector<Case> cases;
  cases.push_back({"empty", "", "is truncated (0 bytes, header needs 64)"});
  cases.push_back({"short header", good.substr(0, 10),
                   "is truncated (10 bytes, header needs 64)"});
  std::string magic = good;
  magic[0] = 'X';
  cases.push_back({"magic", magic, "is not a Paddle weights file (bad magic)"});
  std::string version = good;
  put(version, 8, 2, 4);
  reseal(version);
  cases.push_back(
      {"version", version, "unsupported version 2 (this runtime reads 1)"});
  cases.push_back({"cut payload", good.substr(0, good.size() - 10),
                   "is truncated (" + std::to_string(good.size() - 10) +
                       " bytes, header says " + std::to_string(good.size()) +
                       ")"});
  cases.push_back({"trailing bytes", good + "xx",
                   "it has " + std::to_string(good.size() + 2)});
  std::string flipped = good;
  flipped[good.size() - 20] ^= 0x40;
  cases.push_back({"payload byte", flipped, "checksum mismatch"});
  cases.push_back({"other model", good,
                   "was written for a different model (fingerprint "
                   "0x0123456789abcdef, this model 0x0000000000000007)",
                   7});
  std::string count = makeWeights({kModel[0], kModel[1]});
  cases.push_back({"entry count", count, "has 2 entries, the model expects 3"});
  std::vector<Weight> resized = kModel;
  resized[2].data = bytesOf(44, 3);
  cases.push_back({"entry size", makeWeights(resized),
                   "entry 2 '__constant_10xf32' has 44 bytes, the model "
                   "expects 40"});
  std::string entries = good;
  put(entries, 12, 0xFFFFFFFF, 4);
  reseal(entries);
  cases.push_back({"huge entry count", entries, "the entry table needs"});
  std::string names = good;
  put(names, 40, UINT64_MAX, 8);
  reseal(names);
  cases.push_back({"names size", names, "the names run past the end"});
  std::string payload = good;
  put(payload, 56, UINT64_MAX - 100, 8);
  reseal(payload);
  cases.push_back(
      {"payload size", payload, "the payload and checksum do not end"});
  std::string offset = good;
  put(offset, 64 + 32 + 16, UINT64_MAX - 10, 8);
  reseal(offset);
  cases.push_back({"entry offset", offset, "entry 1 data"});
  std::string size = good;
  put(size, 64 + 24, UINT64_MAX, 8);
  reseal(size);
  cases.push_back({"entry size overflow", size, "entry 0 data"});
  std::string reserved = good;
  put(reserved, 64 + 12, 1, 4);
  reseal(reserved);
  cases.push_back({"reserved", reserved, "entry 0 has a nonzero reserved"});
  std::string nameRange = good;
  put(nameRange, 64 + 32, 5, 8);
  reseal(nameRange);
  cases.push_back({"name offset", nameRange, "entry 1 has a bad name range"});
  std::string control = good;
  control[get(good, 32, 8)] = '\n';
  reseal(control);
  cases.push_back({"name bytes", control, "entry 0 has a non-printable name"});

  for (const Case &c : cases) {
    Slots slots(kModel);
    std::string message = parse(c.image, slots, c.fingerprint);
    EXPECT_NE(message.find(c.message), std::string::npos)
        << c.what << ": got '" << message << "'";
    EXPECT_TRUE(slots.untouched()) << c.what;
  }
}

TEST(Weights, EveryTruncationAndEveryFlippedByteIsAnError) {
  std::string good = makeWeights(kModel);
  for (size_t n = 0; n < good.size(); ++n) {
    Slots slots(kModel);
    EXPECT_NE(parse(good.substr(0, n), slots), "") << n << " bytes";
    EXPECT_TRUE(slots.untouched());
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x01;
    Slots slots(kModel);
    EXPECT_NE(parse(bad, slots), "") << "byte " << i;
    EXPECT_TRUE(slots.untouched()) << "byte " << i;
  }
}

TEST(Weights, RejectsABadSlotList) {
  std::string good = makeWeights(kModel);
  paddle_status_t s =
      paddle_weights_parse(good.data(), good.size(), kFingerprint, nullptr, -1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(paddle_status_code(s), PADDLE_INVALID_ARGUMENT);
  paddle_status_free(s);
  paddle_weight_slot_t noMemory[3] = {
      {nullptr, 300}, {nullptr, 64}, {nullptr, 40}};
  s = paddle_weights_parse(good.data(), good.size(), kFingerprint, noMemory, 3);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(std::string(paddle_status_message(s)).find("slot 0 has no memory"),
            std::string::npos);
  paddle_status_free(s);
}

TEST(Weights, LoadsAFileAndReportsAMissingOne) {
  auto dir =
      std::filesystem::temp_directory_path() /
      ("paddle-weights-test-" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "model.weights").string();
  std::ofstream(path, std::ios::binary) << makeWeights(kModel);
  Slots slots(kModel);
  paddle_status_t s =
      paddle_weights_load(path.c_str(), kFingerprint, slots.slots.data(), 3);
  EXPECT_EQ(s, nullptr) << paddle_status_message(s);
  EXPECT_EQ(slots.storage[0], kModel[0].data);

  std::string missing = (dir / "none.weights").string();
  s = paddle_weights_load(missing.c_str(), kFingerprint, slots.slots.data(), 3);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(paddle_status_code(s), PADDLE_NOT_FOUND);
  EXPECT_EQ(std::string(paddle_status_message(s)),
            "cannot open weights file '" + missing +
                "': No such file or directory");
  paddle_status_free(s);

  std::ofstream(path, std::ios::binary) << makeWeights(kModel).substr(0, 30);
  s = paddle_weights_load(path.c_str(), kFingerprint, slots.slots.data(), 3);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(std::string(paddle_status_message(s)),
            "weights file '" + path +
                "' is truncated (30 bytes, header needs 64)");
  paddle_status_free(s);
  std::filesystem::remove_all(dir);
}

} // namespace
