//===- onednn_matmul_impls.cpp - each oneDNN matmul kernel alone, timed ---===//
//
// Times every implementation oneDNN offers for a plain f32 matmul with a
// run-time B (c = a * b, row-major), reference ones aside: the question the
// runtime's timed choice answers on the first call (docs/onednn.md, "Timed
// choice"), asked here with enough rounds to trust a few percent. Operands
// and scratchpads lie in transparent huge pages, as numpy's arrays of 4 MiB
// and more do. Each round runs every implementation in turn (its best of
// several calls); the table gives each one's median GFLOP/s and the median
// over the rounds of its time over the first implementation's, with the
// 25th and 75th percentiles (the machine's speed changes from minute to
// minute; ratios within a round do not). Not a test.
//
//   g++ -O2 -fopenmp benchmarks/onednn_matmul_impls.cpp -ldnnl \
//       -o build/onednn-matmul-impls
//   build/onednn-matmul-impls THREADS MxKxN [MxKxN ...] [--rounds R]
//
//===----------------------------------------------------------------------===//

#include <dnnl.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <omp.h>

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// A buffer of `bytes` in 2 MiB pages where the kernel grants them.
struct HugeBuffer {
  explicit HugeBuffer(size_t bytes) {
    constexpr size_t kHuge = size_t(2) << 20;
    size = (std::max<size_t>(bytes, 1) + kHuge - 1) / kHuge * kHuge;
    data = std::aligned_alloc(kHuge, size);
    if (!data) {
      std::fprintf(stderr, "onednn-matmul-impls: out of memory (%zu bytes)\n",
                   size);
      std::exit(1);
    }
    madvise(data, size, MADV_HUGEPAGE);
    std::memset(data, 0, size);
  }
  ~HugeBuffer() { std::free(data); }
  HugeBuffer(const HugeBuffer &) = delete;
  HugeBuffer &operator=(const HugeBuffer &) = delete;
  void *data;
  size_t size;
};

void fill(void *data, size_t floats) {
  auto *f = static_cast<float *>(data);
  for (size_t i = 0; i < floats; ++i)
    f[i] = float(i % 17) * 0.01f - 0.08f;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[size_t(p * double(v.size() - 1) + 0.5)];
}

int usage() {
  std::fprintf(stderr, "usage: onednn-matmul-impls THREADS MxKxN [MxKxN ...] "
                       "[--rounds R]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return usage();
  int threads = std::atoi(argv[1]);
  if (threads < 1) {
    std::fprintf(stderr,
                 "onednn-matmul-impls: THREADS must be >= 1, got '%s'\n",
                 argv[1]);
    return 2;
  }
  int rounds = 11;
  std::vector<std::string> shapes;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      if (rounds < 1) {
        std::fprintf(stderr, "onednn-matmul-impls: --rounds must be >= 1\n");
        return 2;
      }
    } else {
      shapes.push_back(argv[i]);
    }
  }
  omp_set_num_threads(threads);
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  for (const std::string &shape : shapes) {
    long long m, k, n;
    char tail;
    if (std::sscanf(shape.c_str(), "%lldx%lldx%lld%c", &m, &k, &n, &tail) !=
            3 ||
        m < 1 || k < 1 || n < 1) {
      std::fprintf(stderr,
                   "onednn-matmul-impls: a shape is MxKxN with positive "
                   "sizes, got '%s'\n",
                   shape.c_str());
      return 2;
    }
    using tag = memory::format_tag;
    using dt = memory::data_type;
    memory::desc a({m, k}, dt::f32, tag::ab), b({k, n}, dt::f32, tag::ab),
        c({m, n}, dt::f32, tag::ab);
    HugeBuffer bufA(size_t(m * k) * 4), bufB(size_t(k * n) * 4),
        bufC(size_t(m * n) * 4);
    fill(bufA.data, size_t(m * k));
    fill(bufB.data, size_t(k * n));
    memory ma(a, eng, bufA.data), mb(b, eng, bufB.data), mc(c, eng, bufC.data);

    primitive_attr attr;
    attr.set_scratchpad_mode(scratchpad_mode::user);
    // oneDNN 2.x: the iterator reads the op descriptor on every next_impl().
    matmul::desc desc(a, b, c);
    matmul::primitive_desc pd(desc, attr, eng);
    std::vector<matmul> kernels;
    std::vector<std::string> names;
    std::vector<std::unique_ptr<HugeBuffer>> pads;
    std::vector<memory> padMemory;
    do {
      std::string name = pd.impl_info_str();
      if (name.rfind("ref", 0) == 0)
        continue;
      kernels.emplace_back(pd);
      names.push_back(name);
      pads.push_back(
          std::make_unique<HugeBuffer>(pd.scratchpad_desc().get_size()));
      padMemory.emplace_back(pd.scratchpad_desc(), eng, pads.back()->data);
    } while (pd.next_impl());

    double flops = 2.0 * double(m) * double(n) * double(k);
    int calls = std::max(3, std::min(30, int(1e9 / flops)));
    std::vector<std::vector<double>> best(kernels.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t i = 0; i < kernels.size(); ++i) {
        double t = 1e30;
        // The first call of each turn is not counted (caches, packing).
        for (int call = 0; call <= calls; ++call) {
          double start = now();
          kernels[i].execute(s, {{DNNL_ARG_SRC, ma},
                                 {DNNL_ARG_WEIGHTS, mb},
                                 {DNNL_ARG_DST, mc},
                                 {DNNL_ARG_SCRATCHPAD, padMemory[i]}});
          s.wait();
          if (call > 0)
            t = std::min(t, now() - start);
        }
        best[i].push_back(t);
      }
    std::printf("%s, %d thread%s, %d rounds:\n", shape.c_str(), threads,
                threads == 1 ? "" : "s", rounds);
    for (size_t i = 0; i < kernels.size(); ++i) {
      std::vector<double> ratio;
      for (int r = 0; r < rounds; ++r)
        ratio.push_back(best[i][r] / best[0][r]);
      std::printf("  %-24s %7.1f GFLOP/s  time / first %.3f (%.3f-%.3f)\n",
                  names[i].c_str(), flops / percentile(best[i], 0.5) / 1e9,
                  percentile(ratio, 0.5), percentile(ratio, 0.25),
                  percentile(ratio, 0.75));
    }
    std::fflush(stdout);
  }
  return 0;
}
