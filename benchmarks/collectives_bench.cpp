//===- collectives_bench.cpp - bus bandwidth of the collectives -----------===//
//
// all_reduce, all_gather and reduce_scatter of f32 over message sizes
// (bytes of the larger buffer, 4 KiB .. 64 MiB by default), as
// nccl-tests reports them: the median time of a call, the algorithm
// bandwidth (bytes / time) and the bus bandwidth (what each link carried:
// algbw * 2(n-1)/n for all_reduce, algbw * (n-1)/n for the other two).
// Under MPI, MPI_Allreduce itself on the same buffers, in the same run,
// alternating with ours. Not a test; benchmarks/collectives.py drives it.
//
//   paddle-collectives-bench local N [--max-bytes B] [--json]
//   mpirun -np N paddle-collectives-bench mpi [--max-bytes B] [--json]
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/collectives.h"

#ifdef PADDLE_BENCH_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Row {
  std::string op;
  size_t bytes;
  double medianS;
  double busFactor;
};

/// Calls for one size: enough for ~0.2 s, at least 5, at most 200.
int callsFor(size_t bytes) {
  double guessS = 20e-6 + bytes / 2e9;
  return std::clamp(static_cast<int>(0.2 / guessS), 5, 200);
}

void die(paddle_status_t s, int rank) {
  fprintf(stderr, "rank %d: %s\n", rank, paddle_status_message(s));
  exit(1);
}

/// Times `call` on this rank: `calls` timed after 2 untimed, each
/// starting together (a barrier before each); the median seconds.
double timeCalls(paddle_comm_t c, int calls,
                 const std::function<paddle_status_t()> &call) {
  std::vector<double> times;
  for (int i = 0; i < calls + 2; ++i) {
    if (paddle_status_t s = paddle_comm_barrier(c))
      die(s, paddle_comm_rank(c));
    Clock::time_point t = Clock::now();
    if (paddle_status_t s = call())
      die(s, paddle_comm_rank(c));
    if (i >= 2)
      times.push_back(std::chrono::duration<double>(Clock::now() - t).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2];
}

/// Every size and op on this rank's communicator; rows on rank 0.
std::vector<Row> run(paddle_comm_t c, size_t minBytes, size_t maxBytes) {
  int n = paddle_comm_size(c);
  std::vector<Row> rows;
  std::vector<float> a(maxBytes / 4, 1.0f), b(maxBytes / 4, 0.0f);
  double ring = n > 1 ? double(n - 1) / n : 1.0;
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
    size_t count = bytes / 4;
    size_t block = count / n; // all_gather / reduce_scatter per-rank block
    int calls = callsFor(bytes);
    rows.push_back({"all_reduce", bytes,
                    timeCalls(c, calls,
                              [&] {
                                return paddle_comm_all_reduce(
                                    c, a.data(), b.data(), count, PADDLE_F32,
                                    PADDLE_REDUCE_SUM);
                              }),
                    2 * ring});
#ifdef PADDLE_BENCH_MPI
    if (strcmp(paddle_comm_backend(c), "mpi") == 0)
      rows.push_back({"MPI_Allreduce", bytes,
                      timeCalls(c, calls,
                                [&] {
                                  MPI_Allreduce(a.data(), b.data(),
                                                static_cast<int>(count),
                                                MPI_FLOAT, MPI_SUM,
                                                MPI_COMM_WORLD);
                                  return paddle_status_t(nullptr);
                                }),
                      2 * ring});
#endif
    rows.push_back({"all_gather", block * n * 4,
                    timeCalls(c, calls,
                              [&] {
                                return paddle_comm_all_gather(
                                    c, a.data(), b.data(), block, PADDLE_F32);
                              }),
                    ring});
    rows.push_back({"reduce_scatter", block * n * 4,
                    timeCalls(c, calls,
                              [&] {
                                return paddle_comm_reduce_scatter(
                                    c, a.data(), b.data(), block, PADDLE_F32,
                                    PADDLE_REDUCE_SUM);
                              }),
                    ring});
  }
  return rows;
}

void print(const std::vector<Row> &rows, const char *backend, int n,
           bool json) {
  if (json) {
    printf("[");
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row &r = rows[i];
      double alg = r.bytes / r.medianS / 1e9;
      printf("%s{\"backend\": \"%s\", \"ranks\": %d, \"op\": \"%s\", "
             "\"bytes\": %zu, \"median_s\": %.9g, \"algbw_gbs\": %.6g, "
             "\"busbw_gbs\": %.6g}",
             i ? ",\n " : "", backend, n, r.op.c_str(), r.bytes, r.medianS, alg,
             alg * r.busFactor);
    }
    printf("]\n");
    return;
  }
  printf("%-15s %12s %12s %10s %10s\n", "op", "bytes", "median us",
         "algbw GB/s", "busbw GB/s");
  for (const Row &r : rows) {
    double alg = r.bytes / r.medianS / 1e9;
    printf("%-15s %12zu %12.1f %10.2f %10.2f\n", r.op.c_str(), r.bytes,
           r.medianS * 1e6, alg, alg * r.busFactor);
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "local") && strcmp(argv[1], "mpi"))) {
    fprintf(stderr, "usage: %s local N | mpi [--max-bytes B] [--json]\n",
            argv[0]);
    return 2;
  }
  bool local = strcmp(argv[1], "local") == 0, json = false;
  int ranks = 0;
  size_t minBytes = 4096, maxBytes = 64u << 20;
  int i = 2;
  if (local) {
    if (argc < 3 || (ranks = atoi(argv[2])) < 1) {
      fprintf(stderr, "local needs a rank count >= 1\n");
      return 2;
    }
    i = 3;
  }
  for (; i < argc; ++i) {
    if (!strcmp(argv[i], "--json"))
      json = true;
    else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
      maxBytes = strtoull(argv[++i], nullptr, 10);
    else {
      fprintf(stderr, "unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (maxBytes < minBytes) {
    fprintf(stderr, "--max-bytes must be at least %zu\n", minBytes);
    return 2;
  }
  if (local) {
    paddle_local_group_t group = nullptr;
    if (paddle_status_t s = paddle_local_group_create(ranks, 120.0, &group))
      die(s, 0);
    std::vector<Row> rows;
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        paddle_comm_t c = nullptr;
        if (paddle_status_t s = paddle_local_group_comm(group, r, &c))
          die(s, r);
        std::vector<Row> mine = run(c, minBytes, maxBytes);
        if (r == 0)
          rows = std::move(mine);
      });
    for (std::thread &t : threads)
      t.join();
    paddle_local_group_release(group);
    print(rows, "local", ranks, json);
    return 0;
  }
  paddle_comm_t c = nullptr;
  if (paddle_status_t s = paddle_mpi_comm_create(120.0, &c))
    die(s, 0);
  std::vector<Row> rows = run(c, minBytes, maxBytes);
  if (paddle_comm_rank(c) == 0)
    print(rows, "mpi", paddle_comm_size(c), json);
  paddle_comm_release(c);
  return 0;
}
