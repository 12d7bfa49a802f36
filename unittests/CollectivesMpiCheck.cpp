//===- CollectivesMpiCheck.cpp - the MPI backend under mpirun -------------===//
//
//   mpirun -np N paddle-collectives-mpi-check [MODE]
//
// MODE "check" (default): every collective, each rank comparing its result
// with a reference it computes itself (every rank can make every rank's
// inputs from their seeds); prints "rank R of N: ok" and exits 0.
// The fault modes make rank 1 misbehave while the others call an
// all_reduce with a 2 s timeout: "abort" (it calls paddle_comm_abort),
// "absent" (it never calls and exits after 5 s), "kill" (it kills itself).
// The others print the error they get and exit 3. Driven by
// python/tests/test_collectives_mpi.py.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/collectives.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, int rank, const char *what) {
  if (!ok) {
    fprintf(stderr, "rank %d: wrong result: %s\n", rank, what);
    ++failures;
  }
}

bool ok(paddle_status_t s, int rank) {
  if (!s)
    return true;
  fprintf(stderr, "rank %d: %s\n", rank, paddle_status_message(s));
  paddle_status_free(s);
  ++failures;
  return false;
}

std::vector<float> inputs(int rank, size_t n) {
  std::mt19937 rng(1000 + rank);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

int check(paddle_comm_t c) {
  int r = paddle_comm_rank(c), n = paddle_comm_size(c);
  const size_t count = 100003; // uneven over any rank count
  std::vector<std::vector<float>> all;
  for (int j = 0; j < n; ++j)
    all.push_back(inputs(j, count * n));
  std::vector<float> mine = all[r];

  // all_reduce (sum): MPI may sum in any order; compare with a tolerance.
  std::vector<float> out(count * n);
  if (ok(paddle_comm_all_reduce(c, mine.data(), out.data(), count * n,
                                PADDLE_F32, PADDLE_REDUCE_SUM),
         r)) {
    bool good = true;
    for (size_t i = 0; i < count * n && good; ++i) {
      float want = 0;
      for (int j = 0; j < n; ++j)
        want += all[j][i];
      good = std::abs(out[i] - want) <= 1e-5f * (1 + std::abs(want));
    }
    expect(good, r, "all_reduce sum");
  }
  // all_reduce (max) in place: exact.
  std::vector<float> inplace = mine;
  if (ok(paddle_comm_all_reduce(c, inplace.data(), inplace.data(), count,
                                PADDLE_F32, PADDLE_REDUCE_MAX),
         r)) {
    bool good = true;
    for (size_t i = 0; i < count && good; ++i) {
      float want = all[0][i];
      for (int j = 1; j < n; ++j)
        want = std::max(want, all[j][i]);
      good = inplace[i] == want;
    }
    expect(good, r, "all_reduce max in place");
  }
  // bf16 sum through our MPI operation: 1.0 from every rank.
  std::vector<uint16_t> bf(5, 0x3f80);
  if (ok(paddle_comm_all_reduce(c, bf.data(), bf.data(), bf.size(), PADDLE_BF16,
                                PADDLE_REDUCE_SUM),
         r)) {
    float sum = static_cast<float>(n);
    uint32_t bits;
    memcpy(&bits, &sum, 4);
    expect(std::all_of(bf.begin(), bf.end(),
                       [&](uint16_t h) { return h == (bits >> 16); }),
           r, "all_reduce bf16");
  }
  // all_gather of the first block.
  std::vector<float> gathered(count * n);
  if (ok(paddle_comm_all_gather(c, mine.data(), gathered.data(), count,
                                PADDLE_F32),
         r)) {
    bool good = true;
    for (int j = 0; j < n; ++j)
      good = good && !memcmp(gathered.data() + j * count, all[j].data(),
                             count * sizeof(float));
    expect(good, r, "all_gather");
  }
  // reduce_scatter (min): exact.
  std::vector<float> scattered(count);
  if (ok(paddle_comm_reduce_scatter(c, mine.data(), scattered.data(), count,
                                    PADDLE_F32, PADDLE_REDUCE_MIN),
         r)) {
    bool good = true;
    for (size_t i = 0; i < count && good; ++i) {
      float want = all[0][r * count + i];
      for (int j = 1; j < n; ++j)
        want = std::min(want, all[j][r * count + i]);
      good = scattered[i] == want;
    }
    expect(good, r, "reduce_scatter min");
  }
  // all_to_all.
  std::vector<float> swapped(count * n);
  if (ok(paddle_comm_all_to_all(c, mine.data(), swapped.data(), count,
                                PADDLE_F32),
         r)) {
    bool good = true;
    for (int j = 0; j < n; ++j)
      good = good && !memcmp(swapped.data() + j * count,
                             all[j].data() + r * count, count * sizeof(float));
    expect(good, r, "all_to_all");
  }
  // broadcast from the last rank.
  std::vector<float> b = inputs(r + 77, 1000);
  if (ok(paddle_comm_broadcast(c, b.data(), b.size(), PADDLE_F32, n - 1), r))
    expect(b == inputs(n - 1 + 77, 1000), r, "broadcast");
  // send/recv around a ring.
  if (n > 1) {
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    std::vector<int64_t> msg = {r, 1LL << 40}, got(2, -1);
    if (r % 2 == 0) {
      ok(paddle_comm_send(c, msg.data(), 2, PADDLE_I64, next, 9), r) &&
          ok(paddle_comm_recv(c, got.data(), 2, PADDLE_I64, prev, 9), r);
    } else {
      ok(paddle_comm_recv(c, got.data(), 2, PADDLE_I64, prev, 9), r) &&
          ok(paddle_comm_send(c, msg.data(), 2, PADDLE_I64, next, 9), r);
    }
    expect(got[0] == prev && got[1] == (1LL << 40), r, "send/recv");
  }
  // A 2 x (n/2) mesh: all_reduce over each row.
  if (n % 2 == 0) {
    int cols = n / 2;
    paddle_comm_t row = nullptr;
    if (ok(paddle_comm_split(c, r / cols, r % cols, &row), r)) {
      float x = float(r), sum = -1;
      if (ok(paddle_comm_all_reduce(row, &x, &sum, 1, PADDLE_F32,
                                    PADDLE_REDUCE_SUM),
             r)) {
        int first = (r / cols) * cols;
        float want = 0;
        for (int j = first; j < first + cols; ++j)
          want += float(j);
        expect(sum == want && paddle_comm_rank(row) == r % cols, r, "split");
      }
      paddle_comm_release(row);
    }
  }
  ok(paddle_comm_barrier(c), r);
  if (failures)
    return 1;
  printf("rank %d of %d: ok\n", r, n);
  return 0;
}

int fault(paddle_comm_t c, const std::string &mode) {
  int r = paddle_comm_rank(c);
  if (r == 1) {
    if (mode == "abort") {
      paddle_comm_abort(c, "injected failure");
      fprintf(stderr, "rank 1: injected failure\n");
      return 2;
    }
    if (mode == "kill")
      raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(5)); // "absent"
    return 0;
  }
  float x = 1;
  paddle_status_t s =
      paddle_comm_all_reduce(c, &x, &x, 1, PADDLE_F32, PADDLE_REDUCE_SUM);
  if (!s) {
    fprintf(stderr, "rank %d: the all_reduce succeeded without rank 1\n", r);
    return 1;
  }
  fprintf(stderr, "rank %d: error: %s\n", r, paddle_status_message(s));
  paddle_status_free(s);
  return 3;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "check";
  if (mode != "check" && mode != "abort" && mode != "absent" &&
      mode != "kill") {
    fprintf(stderr, "unknown mode '%s' (check, abort, absent, kill)\n",
            mode.c_str());
    return 2;
  }
  paddle_comm_t comm = nullptr;
  paddle_status_t s =
      paddle_mpi_comm_create(mode == "check" ? 60.0 : 2.0, &comm);
  if (s) {
    fprintf(stderr, "error: %s\n", paddle_status_message(s));
    paddle_status_free(s);
    return 2;
  }
  int rc = mode == "check" ? check(comm) : fault(comm, mode);
  if (rc == 0 || mode == "check")
    paddle_comm_release(comm);
  return rc;
}
