//===- NpyTest.cpp - .npy reader and writer -------------------------------===//

#include "paddle_runtime/runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

/// Builds a version 1.0 .npy image with the given header dict and data.
std::string makeNpy(const std::string &dict, const std::string &data) {
  std::string header = dict;
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += (char)(header.size() & 0xff);
  out += (char)(header.size() >> 8);
  return out + header + data;
}

struct Parsed {
  paddle_tensor_t tensor{};
  paddle_status_t status = nullptr;
  ~Parsed() {
    paddle_tensor_free(&tensor);
    paddle_status_free(status);
  }
};

void parse(const std::string &bytes, Parsed &p) {
  p.status = paddle_npy_parse(bytes.data(), bytes.size(), &p.tensor);
}

TEST(Npy, ParsesFloatMatrix) {
  float values[6] = {1, 2, 3, 4, 5, 6};
  std::string data((const char *)values, sizeof(values));
  Parsed p;
  parse(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                data),
        p);
  ASSERT_EQ(p.status, nullptr) << paddle_status_message(p.status);
  EXPECT_EQ(p.tensor.dtype, PADDLE_F32);
  ASSERT_EQ(p.tensor.rank, 2);
  EXPECT_EQ(p.tensor.shape[0], 2);
  EXPECT_EQ(p.tensor.shape[1], 3);
  EXPECT_EQ(memcmp(p.tensor.data, values, sizeof(values)), 0);
}

TEST(Npy, ParsesScalarAndBool) {
  Parsed p;
  parse(makeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (), }",
                std::string(1, '\1')),
        p);
  ASSERT_EQ(p.status, nullptr) << paddle_status_message(p.status);
  EXPECT_EQ(p.tensor.dtype, PADDLE_I1);
  EXPECT_EQ(p.tensor.rank, 0);
  EXPECT_EQ(*(uint8_t *)p.tensor.data, 1);
}

struct BadCase {
  const char *name;
  std::string bytes;
  const char *messagePart;
};

TEST(Npy, RejectsMalformedInput) {
  std::string good =
      makeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }",
              std::string(16, '\0'));
  const BadCase cases[] = {
      {"empty", "", "magic"},
      {"bad magic", "\x93NUMPX" + good.substr(6), "magic"},
      {"truncated header", good.substr(0, 20), "header runs past"},
      {"truncated data", good.substr(0, good.size() - 1), "truncated"},
      {"big endian",
       makeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
               std::string(4, '\0')),
       "not supported"},
      {"fortran",
       makeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
               std::string(4, '\0')),
       "Fortran"},
      {"no shape", makeNpy("{'descr': '<f4', 'fortran_order': False, }", ""),
       "shape"},
      {"negative dim",
       makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
               ""),
       "non-numeric"},
      {"huge dims",
       makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': "
               "(4294967296, 4294967296), }",
               ""),
       "truncated"},
      {"overflowing dim",
       makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': "
               "(99999999999999999999999,), }",
               ""),
       "too large"},
      {"version 9", "\x93NUMPY\x09" + good.substr(7), "version"},
      // numpy keeps a repeated key's last value: reading the first would
      // give another array than numpy's, so a repeat is an error.
      {"duplicate descr",
       makeNpy("{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, "
               "'shape': (4,), }",
               std::string(16, '\0')),
       "the key 'descr' appears twice"},
      {"duplicate shape",
       makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), "
               "'shape': (2,), }",
               std::string(16, '\0')),
       "the key 'shape' appears twice"},
  };
  for (const BadCase &c : cases) {
    Parsed p;
    parse(c.bytes, p);
    ASSERT_NE(p.status, nullptr) << c.name;
    EXPECT_NE(std::string(paddle_status_message(p.status)).find(c.messagePart),
              std::string::npos)
        << c.name << ": " << paddle_status_message(p.status);
    EXPECT_EQ(p.tensor.data, nullptr) << c.name;
  }
}

TEST(Npy, WriteThenReadRoundTrips) {
  auto dir = std::filesystem::temp_directory_path() /
             ("paddle-npy-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "x.npy").string();
  int64_t shape[3] = {2, 1, 3};
  paddle_tensor_t t{};
  ASSERT_EQ(paddle_tensor_alloc(&t, PADDLE_I64, 3, shape), nullptr);
  for (int i = 0; i < 6; ++i)
    ((int64_t *)t.data)[i] = i * 1000000000000LL;
  ASSERT_EQ(paddle_npy_write(path.c_str(), &t), nullptr);
  paddle_tensor_t back{};
  paddle_status_t s = paddle_npy_read(path.c_str(), &back);
  ASSERT_EQ(s, nullptr) << paddle_status_message(s);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.shape[2], 3);
  EXPECT_EQ(memcmp(back.data, t.data, 48), 0);
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);
  paddle_tensor_free(&t);
  paddle_tensor_free(&back);
  std::filesystem::remove_all(dir);
}

TEST(Npy, MissingFileAndUnwritablePathAreErrors) {
  paddle_tensor_t t{};
  paddle_status_t s = paddle_npy_read("/nonexistent/x.npy", &t);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(paddle_status_code(s), PADDLE_IO_ERROR);
  EXPECT_NE(std::string(paddle_status_message(s)).find("/nonexistent/x.npy"),
            std::string::npos);
  paddle_status_free(s);

  int64_t shape[1] = {2};
  ASSERT_EQ(paddle_tensor_alloc(&t, PADDLE_F32, 1, shape), nullptr);
  s = paddle_npy_write("/nonexistent/dir/y.npy", &t);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(paddle_status_code(s), PADDLE_IO_ERROR);
  paddle_status_free(s);
  paddle_tensor_free(&t);
}

} // namespace
