//===- CollectivesTest.cpp - the in-process mesh's collectives ------------===//
//
// Every collective on 1..4 ranks (threads), each checked against a serial
// reference computed here; in place and uneven counts; the faults: a rank
// that never arrives, a rank that aborts, ranks that disagree, bad
// arguments.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/collectives.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct StatusText {
  paddle_status_code_t code = PADDLE_OK;
  std::string message;
};

StatusText take(paddle_status_t s) {
  StatusText t{paddle_status_code(s), paddle_status_message(s)};
  paddle_status_free(s);
  return t;
}

/// Runs body(rank, comm) on `n` threads of one group; returns each rank's
/// status.
std::vector<StatusText>
onGroup(int n, double timeoutS,
        const std::function<paddle_status_t(int, paddle_comm_t)> &body) {
  paddle_local_group_t group = nullptr;
  EXPECT_EQ(take(paddle_local_group_create(n, timeoutS, &group)).code,
            PADDLE_OK);
  std::vector<StatusText> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      paddle_comm_t comm = nullptr;
      paddle_status_t s = paddle_local_group_comm(group, r, &comm);
      if (!s)
        s = body(r, comm);
      results[r] = take(s);
    });
  }
  for (std::thread &t : threads)
    t.join();
  paddle_local_group_release(group);
  return results;
}

void expectAllOk(const std::vector<StatusText> &results) {
  for (size_t r = 0; r < results.size(); ++r)
    EXPECT_EQ(results[r].code, PADDLE_OK)
        << "rank " << r << ": " << results[r].message;
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

float applyOp(float a, float b, paddle_reduce_op_t op) {
  switch (op) {
  case PADDLE_REDUCE_SUM:
    return a + b;
  case PADDLE_REDUCE_PROD:
    return a * b;
  case PADDLE_REDUCE_MAX:
    return std::max(a, b);
  case PADDLE_REDUCE_MIN:
    return std::min(a, b);
  }
  return a;
}

/// The reference: op over ranks 0..n-1 in order, as the group reduces.
std::vector<float> reference(const std::vector<std::vector<float>> &inputs,
                             paddle_reduce_op_t op) {
  std::vector<float> out = inputs[0];
  for (size_t r = 1; r < inputs.size(); ++r)
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = applyOp(out[i], inputs[r][i], op);
  return out;
}

class AllReduceTest
    : public ::testing::TestWithParam<std::tuple<int, paddle_reduce_op_t>> {};

TEST_P(AllReduceTest, MatchesSerialReferenceOnEveryRank) {
  // Not a structured binding: lambdas capture `op` (C++20 for bindings).
  const int n = std::get<0>(GetParam());
  const paddle_reduce_op_t op = std::get<1>(GetParam());
  // Uneven over the ranks, larger than one 16 KiB block, and tiny.
  for (size_t count : {size_t(0), size_t(1), size_t(7), size_t(10007)}) {
    std::vector<std::vector<float>> in(n), out(n);
    for (int r = 0; r < n; ++r) {
      in[r] = randomFloats(count, 100 * r + 7);
      out[r].assign(count, -99.0f);
    }
    std::vector<float> want = reference(in, op);
    expectAllOk(onGroup(n, 10.0, [&](int r, paddle_comm_t c) {
      return paddle_comm_all_reduce(c, in[r].data(), out[r].data(), count,
                                    PADDLE_F32, op);
    }));
    for (int r = 0; r < n; ++r)
      ASSERT_TRUE(count == 0 || memcmp(out[r].data(), want.data(),
                                       count * sizeof(float)) == 0)
          << "rank " << r << " count " << count;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ranks, AllReduceTest,
    ::testing::Combine(::testing::Values(1, 2, 3, 4),
                       ::testing::Values(PADDLE_REDUCE_SUM, PADDLE_REDUCE_PROD,
                                         PADDLE_REDUCE_MAX,
                                         PADDLE_REDUCE_MIN)));

TEST(Collectives, AllReduceInPlaceAndIntegerTypes) {
  const int n = 4;
  const size_t count = 4099;
  std::vector<std::vector<float>> f(n);
  std::vector<std::vector<int64_t>> i64(n);
  std::vector<std::vector<int32_t>> i32(n);
  for (int r = 0; r < n; ++r) {
    f[r] = randomFloats(count, r);
    for (size_t i = 0; i < count; ++i) {
      i64[r].push_back(int64_t(i) * (r + 1) + (int64_t(1) << 40));
      i32[r].push_back(int32_t(i % 97) - r);
    }
  }
  std::vector<float> want = reference(f, PADDLE_REDUCE_SUM);
  expectAllOk(onGroup(n, 10.0, [&](int r, paddle_comm_t c) {
    if (paddle_status_t s = paddle_comm_all_reduce(
            c, f[r].data(), f[r].data(), count, PADDLE_F32, PADDLE_REDUCE_SUM))
      return s;
    if (paddle_status_t s =
            paddle_comm_all_reduce(c, i64[r].data(), i64[r].data(), count,
                                   PADDLE_I64, PADDLE_REDUCE_SUM))
      return s;
    return paddle_comm_all_reduce(c, i32[r].data(), i32[r].data(), count,
                                  PADDLE_I32, PADDLE_REDUCE_MIN);
  }));
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(0, memcmp(f[r].data(), want.data(), count * sizeof(float)));
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(i64[r][i], int64_t(i) * 10 + 4 * (int64_t(1) << 40));
      ASSERT_EQ(i32[r][i], int32_t(i % 97) - 3);
    }
  }
}

TEST(Collectives, AllReduceHalfTypesRoundOncePerStep) {
  const int n = 2;
  // bf16 1.0 = 0x3f80, 2.0 = 0x4000, 3.0 = 0x4040; f16 1.5 + 2.25 = 3.75.
  std::vector<std::vector<uint16_t>> bf = {{0x3f80, 0x4000}, {0x4000, 0x3f80}};
  std::vector<std::vector<_Float16>> h = {{_Float16(1.5f)}, {_Float16(2.25f)}};
  expectAllOk(onGroup(n, 10.0, [&](int r, paddle_comm_t c) {
    if (paddle_status_t s = paddle_comm_all_reduce(
            c, bf[r].data(), bf[r].data(), 2, PADDLE_BF16, PADDLE_REDUCE_SUM))
      return s;
    return paddle_comm_all_reduce(c, h[r].data(), h[r].data(), 1, PADDLE_F16,
                                  PADDLE_REDUCE_SUM);
  }));
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(bf[r][0], 0x4040);
    EXPECT_EQ(bf[r][1], 0x4040);
    EXPECT_EQ(static_cast<float>(h[r][0]), 3.75f);
  }
}

TEST(Collectives, AllGatherReduceScatterAllToAllBroadcast) {
  for (int n : {1, 2, 3, 4}) {
    const size_t count = 1001;
    std::vector<std::vector<float>> in(n), gathered(n), scattered(n),
        swapped(n), block(n), bcast(n);
    for (int r = 0; r < n; ++r) {
      in[r] = randomFloats(count * n, 31 * r + 1);
      gathered[r].assign(count * n, 0);
      scattered[r].assign(count, 0);
      swapped[r].assign(count * n, 0);
      bcast[r] = randomFloats(count, 500 + r);
    }
    int root = n - 1;
    std::vector<float> rootData = bcast[root];
    expectAllOk(onGroup(n, 10.0, [&](int r, paddle_comm_t c) {
      // all_gather of each rank's first block.
      if (paddle_status_t s = paddle_comm_all_gather(
              c, in[r].data(), gathered[r].data(), count, PADDLE_F32))
        return s;
      if (paddle_status_t s =
              paddle_comm_reduce_scatter(c, in[r].data(), scattered[r].data(),
                                         count, PADDLE_F32, PADDLE_REDUCE_MAX))
        return s;
      if (paddle_status_t s = paddle_comm_all_to_all(
              c, in[r].data(), swapped[r].data(), count, PADDLE_F32))
        return s;
      return paddle_comm_broadcast(c, bcast[r].data(), count, PADDLE_F32, root);
    }));
    std::vector<float> maxAll = reference(in, PADDLE_REDUCE_MAX);
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < n; ++j) {
        ASSERT_EQ(0, memcmp(gathered[r].data() + j * count, in[j].data(),
                            count * sizeof(float)))
            << "all_gather rank " << r << " block " << j;
        ASSERT_EQ(0, memcmp(swapped[r].data() + j * count,
                            in[j].data() + r * count, count * sizeof(float)))
            << "all_to_all rank " << r << " block " << j;
      }
      ASSERT_EQ(0, memcmp(scattered[r].data(), maxAll.data() + r * count,
                          count * sizeof(float)))
          << "reduce_scatter rank " << r;
      ASSERT_EQ(0,
                memcmp(bcast[r].data(), rootData.data(), count * sizeof(float)))
          << "broadcast rank " << r;
    }
  }
}

TEST(Collectives, SendRecvRingAndBarrier) {
  const int n = 4;
  std::vector<std::vector<int32_t>> got(n, std::vector<int32_t>(3, -1));
  expectAllOk(onGroup(n, 10.0, [&](int r, paddle_comm_t c) {
    std::vector<int32_t> mine = {r, r * 10, r * 100};
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    // Everyone sends first: send does not wait for the receiver.
    if (paddle_status_t s =
            paddle_comm_send(c, mine.data(), 3, PADDLE_I32, next, 5))
      return s;
    if (paddle_status_t s =
            paddle_comm_recv(c, got[r].data(), 3, PADDLE_I32, prev, 5))
      return s;
    return paddle_comm_barrier(c);
  }));
  for (int r = 0; r < n; ++r) {
    int prev = (r + n - 1) % n;
    EXPECT_EQ(got[r], (std::vector<int32_t>{prev, prev * 10, prev * 100}));
  }
}

TEST(Collectives, SplitIntoMeshAxesReducesWithinEachAxis) {
  // A 2x3 mesh, rank = 3 * row + col: an all_reduce over the column axis
  // (ranks of one row) and one over the row axis (ranks of one column).
  const int rows = 2, cols = 3, n = rows * cols;
  std::vector<float> rowSum(n), colSum(n);
  std::vector<int> rowRank(n), colRank(n), rowSize(n), colSize(n);
  expectAllOk(onGroup(n, 10.0, [&](int r, paddle_comm_t c) {
    int row = r / cols, col = r % cols;
    paddle_comm_t inRow = nullptr, inCol = nullptr, none = nullptr;
    if (paddle_status_t s = paddle_comm_split(c, row, col, &inRow))
      return s;
    // Keys in reverse: ranks ordered by key.
    if (paddle_status_t s = paddle_comm_split(c, col, -row, &inCol))
      return s;
    if (paddle_status_t s = paddle_comm_split(c, -1, 0, &none))
      return s;
    EXPECT_EQ(none, nullptr);
    float x = float(r + 1);
    paddle_status_t s = paddle_comm_all_reduce(inRow, &x, &rowSum[r], 1,
                                               PADDLE_F32, PADDLE_REDUCE_SUM);
    if (!s)
      s = paddle_comm_all_reduce(inCol, &x, &colSum[r], 1, PADDLE_F32,
                                 PADDLE_REDUCE_SUM);
    rowRank[r] = paddle_comm_rank(inRow);
    colRank[r] = paddle_comm_rank(inCol);
    rowSize[r] = paddle_comm_size(inRow);
    colSize[r] = paddle_comm_size(inCol);
    paddle_comm_release(inRow);
    paddle_comm_release(inCol);
    return s;
  }));
  for (int r = 0; r < n; ++r) {
    int row = r / cols, col = r % cols;
    EXPECT_EQ(rowSum[r], row == 0 ? 1 + 2 + 3 : 4 + 5 + 6) << r;
    EXPECT_EQ(colSum[r], float((col + 1) + (col + 4))) << r;
    EXPECT_EQ(rowRank[r], col);
    EXPECT_EQ(colRank[r], rows - 1 - row);
    EXPECT_EQ(rowSize[r], cols);
    EXPECT_EQ(colSize[r], rows);
  }
}

TEST(Collectives, ARankThatNeverArrivesIsNamedWithinTheTimeout) {
  auto start = std::chrono::steady_clock::now();
  auto results = onGroup(4, 0.3, [&](int r, paddle_comm_t c) {
    float x = 1;
    if (r == 2)
      return paddle_status_t(nullptr); // rank 2 skips the collective
    return paddle_comm_all_reduce(c, &x, &x, 1, PADDLE_F32, PADDLE_REDUCE_SUM);
  });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 5.0);
  for (int r : {0, 1, 3}) {
    EXPECT_EQ(results[r].code, PADDLE_DEADLINE_EXCEEDED);
    EXPECT_NE(results[r].message.find("all_reduce timed out after 0.3 s: "
                                      "rank 2 did not arrive"),
              std::string::npos)
        << results[r].message;
  }
}

TEST(Collectives, AnAbortingRankWakesTheOthersWithItsReason) {
  auto results = onGroup(3, 30.0, [&](int r, paddle_comm_t c) {
    if (r == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      paddle_comm_abort(c, "out of memory in layer 3");
      return paddle_status_t(nullptr);
    }
    float x[4] = {};
    paddle_status_t s = paddle_comm_all_gather(c, x, x + 1, 1, PADDLE_F32);
    if (!s)
      return s;
    StatusText first = take(s);
    // The group is broken: the next call fails at once with the same cause.
    StatusText again = take(paddle_comm_barrier(c));
    EXPECT_EQ(again.code, PADDLE_ABORTED);
    return paddle_status_create(first.code, "%s", first.message.c_str());
  });
  for (int r : {0, 2}) {
    EXPECT_EQ(results[r].code, PADDLE_ABORTED);
    EXPECT_NE(
        results[r].message.find("rank 1 failed: out of memory in layer 3"),
        std::string::npos)
        << results[r].message;
  }
}

TEST(Collectives, RanksThatDisagreeAreNamed) {
  auto results = onGroup(3, 10.0, [&](int r, paddle_comm_t c) {
    std::vector<float> x(8, 1.0f);
    size_t count = r == 2 ? 4 : 8;
    return paddle_comm_all_reduce(c, x.data(), x.data(), count, PADDLE_F32,
                                  PADDLE_REDUCE_SUM);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(results[r].code, PADDLE_INVALID_ARGUMENT);
    EXPECT_NE(results[r].message.find(
                  "rank 0 asked for all_reduce of 8 x f32 (sum), rank 2 for "
                  "all_reduce of 4 x f32 (sum)"),
              std::string::npos)
        << results[r].message;
  }
}

TEST(Collectives, RecvOfAnotherSizeAndBadArgumentsAreErrors) {
  auto results = onGroup(2, 10.0, [&](int r, paddle_comm_t c) {
    float x[4] = {1, 2, 3, 4};
    if (r == 0)
      return paddle_comm_send(c, x, 4, PADDLE_F32, 1, 0);
    return paddle_comm_recv(c, x, 2, PADDLE_F32, 0, 0);
  });
  EXPECT_EQ(results[0].code, PADDLE_OK);
  EXPECT_EQ(results[1].code, PADDLE_INVALID_ARGUMENT);
  EXPECT_NE(results[1].message.find("expected 8 bytes, the message has 16"),
            std::string::npos)
      << results[1].message;

  paddle_local_group_t group = nullptr;
  EXPECT_NE(take(paddle_local_group_create(0, 1.0, &group))
                .message.find("1 to 1024 ranks; 0"),
            std::string::npos);
  EXPECT_NE(take(paddle_local_group_create(2, 0.0, &group))
                .message.find("timeout above 0 s"),
            std::string::npos);
  ASSERT_EQ(take(paddle_local_group_create(2, 1.0, &group)).code, PADDLE_OK);
  paddle_comm_t comm = nullptr;
  EXPECT_NE(take(paddle_local_group_comm(group, 2, &comm))
                .message.find("rank 2 is outside the local group of 2"),
            std::string::npos);
  ASSERT_EQ(take(paddle_local_group_comm(group, 0, &comm)).code, PADDLE_OK);
  float x = 0;
  EXPECT_NE(take(paddle_comm_broadcast(comm, &x, 1, PADDLE_F32, 5))
                .message.find("broadcast: root 5 is outside the 2 ranks"),
            std::string::npos);
  EXPECT_NE(take(paddle_comm_send(comm, &x, 1, PADDLE_F32, 0, 0))
                .message.find("send: rank 0 cannot message itself"),
            std::string::npos);
  EXPECT_NE(take(paddle_comm_all_reduce(comm, nullptr, &x, 1, PADDLE_F32,
                                        PADDLE_REDUCE_SUM))
                .message.find("all_reduce: a buffer is null"),
            std::string::npos);
  EXPECT_EQ(take(paddle_comm_all_reduce(nullptr, &x, &x, 1, PADDLE_F32,
                                        PADDLE_REDUCE_SUM))
                .code,
            PADDLE_INVALID_ARGUMENT);
  EXPECT_EQ(paddle_comm_size(comm), 2);
  EXPECT_STREQ(paddle_comm_backend(comm), "local");
  paddle_comm_release(comm); // a group's communicator: the group frees it
  paddle_local_group_release(group);
}

} // namespace
