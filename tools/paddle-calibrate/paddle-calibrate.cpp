//===- paddle-calibrate.cpp - measure this CPU and write its spec ---------===//
//
// paddle-calibrate [-o spec.json] [--quick] [--name N]
//
// Measures what the cost model needs of the local CPU and writes a device
// spec that `paddle-opt --paddle-cost-report=device=spec.json` reads:
//   - peak f32/f64 FLOP/s: independent vector FMA chains (AVX-512 or AVX2,
//     whichever the CPU has) on one thread per core, all at once;
//   - memory bandwidth: a STREAM triad a = b + s * c over buffers much larger
//     than the last-level cache (3 arrays x 4 bytes counted per element, as
//     STREAM does), on all cores;
//   - cache levels: sizes from sysfs, bandwidths from a vector read loop
//     over half of each level on all cores;
//   - call overhead: a fork/join of one empty task per core on the
//     runtime's thread pool, which every parallel kernel pays.
// Each measurement keeps the best of several repetitions (the least
// disturbed by other processes). --quick takes well under 10 s.
//
//===----------------------------------------------------------------------===//

#include "paddle/CostModel/DeviceSpec.h"
#include "thread_pool.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

using namespace llvm;
using namespace mlir::paddle;

static cl::opt<std::string> outputPath("o",
                                       cl::desc("Write the spec here "
                                                "(default: stdout)"),
                                       cl::value_desc("file"), cl::init("-"));
static cl::opt<bool> quick("quick",
                           cl::desc("Short measurements (< 10 s in all)"));
static cl::opt<std::string> deviceName("name", cl::desc("Name of the device"),
                                       cl::init("local-cpu"));

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// Runs `body(thread)` on `threads` threads at once (a barrier lines up the
/// starts) and returns the wall time of the slowest.
double runParallel(int threads, const std::function<void(int)> &body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  std::vector<double> times(threads);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads)
        std::this_thread::yield();
      auto start = Clock::now();
      body(t);
      times[t] = seconds(start, Clock::now());
    });
  for (auto &thread : pool)
    thread.join();
  return *std::max_element(times.begin(), times.end());
}

//===----------------------------------------------------------------------===//
// FMA peak
//===----------------------------------------------------------------------===//

// 12 independent accumulators cover the FMA latency (4 cycles) times two
// FMA ports on current x86 cores. Returns a value derived from the result
// so the loop is not removed.

__attribute__((target("avx512f"))) float fmaLoopAvx512(int64_t iterations) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], m, a);
  __m512 sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  // A store, not _mm512_reduce_add_ps, whose GCC 12 header warns.
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  return lanes[0] + lanes[15];
}

__attribute__((target("avx2,fma"))) float fmaLoopAvx2(int64_t iterations) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm256_set1_ps(float(i) * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], m, a);
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm256_add_ps(sum, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return lanes[0] + lanes[7];
}

__attribute__((target("avx512f"))) double fmaLoopAvx512F64(int64_t iterations) {
  __m512d acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm512_set1_pd(double(i) * 1e-3);
  const __m512d m = _mm512_set1_pd(0.999999), a = _mm512_set1_pd(1e-7);
  for (int64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm512_fmadd_pd(acc[i], m, a);
  __m512d sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm512_add_pd(sum, acc[i]);
  double lanes[8];
  _mm512_storeu_pd(lanes, sum);
  return lanes[0] + lanes[7];
}

__attribute__((target("avx2,fma"))) double fmaLoopAvx2F64(int64_t iterations) {
  __m256d acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm256_set1_pd(double(i) * 1e-3);
  const __m256d m = _mm256_set1_pd(0.999999), a = _mm256_set1_pd(1e-7);
  for (int64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm256_fmadd_pd(acc[i], m, a);
  __m256d sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm256_add_pd(sum, acc[i]);
  double lanes[4];
  _mm256_storeu_pd(lanes, sum);
  return lanes[0] + lanes[3];
}

struct Isa {
  const char *name;
  int lanesF32;
  float (*f32)(int64_t);
  double (*f64)(int64_t);
};

std::optional<Isa> detectIsa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return Isa{"avx512", 16, fmaLoopAvx512, fmaLoopAvx512F64};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return Isa{"avx2", 8, fmaLoopAvx2, fmaLoopAvx2F64};
  return std::nullopt;
}

/// FLOP/s of all `threads` cores running FMA chains together.
template <typename Loop>
double measurePeak(int threads, int lanes, Loop loop, int64_t iterations,
                   int repetitions) {
  double best = 0;
  std::vector<double> sink(threads);
  for (int r = 0; r < repetitions; ++r) {
    double t = runParallel(
        threads, [&](int thread) { sink[thread] = double(loop(iterations)); });
    // 12 chains x lanes x 2 FLOPs per FMA.
    best = std::max(best,
                    double(threads) * double(iterations) * 12 * lanes * 2 / t);
  }
  if (std::getenv("PADDLE_CALIBRATE_SINK"))
    errs() << sink[0] << "\n";
  return best;
}

//===----------------------------------------------------------------------===//
// Memory and cache bandwidth
//===----------------------------------------------------------------------===//

/// Aligned float buffer touched once so that pages are mapped.
struct Buffer {
  explicit Buffer(size_t n)
      : n(n), data(static_cast<float *>(
                  std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64))) {
    for (size_t i = 0; i < n; ++i)
      data[i] = float(i % 7);
  }
  ~Buffer() { std::free(data); }
  size_t n;
  float *data;
};

/// STREAM triad a = b + s * c over `elements` floats per array, split over
/// the threads; bytes per second counting 12 bytes per element.
double measureTriad(int threads, size_t elements, int repetitions) {
  Buffer a(elements), b(elements), c(elements);
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    double t = runParallel(threads, [&](int thread) {
      size_t begin = elements * thread / threads;
      size_t end = elements * (thread + 1) / threads;
      float *pa = a.data, *pb = b.data, *pc = c.data;
      for (size_t i = begin; i < end; ++i)
        pa[i] = pb[i] + 3.0f * pc[i];
    });
    best = std::max(best, 12.0 * double(elements) / t);
  }
  return best;
}

/// Sums `elements` floats (a multiple of 64) `passes` times. 64
/// accumulators are 8 AVX vectors: enough independent adds that loads, not
/// the add latency, bound the loop.
__attribute__((target("avx2"))) float readLoop(const float *p, size_t elements,
                                               int passes) {
  float acc[64] = {};
  for (int pass = 0; pass < passes; ++pass)
    for (size_t i = 0; i < elements; i += 64)
      for (int j = 0; j < 64; ++j)
        acc[j] += p[i + j];
  float s = 0;
  for (float v : acc)
    s += v;
  return s;
}

/// Reads `bytesPerThread` per thread `passes` times (vector sums, several
/// accumulators); the aggregate read bandwidth.
double measureRead(int threads, size_t bytesPerThread, int passes,
                   int repetitions) {
  size_t elements = std::max<size_t>(bytesPerThread / sizeof(float), 64);
  elements = elements / 64 * 64;
  std::vector<std::unique_ptr<Buffer>> buffers;
  for (int t = 0; t < threads; ++t)
    buffers.push_back(std::make_unique<Buffer>(elements));
  std::vector<float> sink(threads);
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    double t = runParallel(threads, [&](int thread) {
      sink[thread] = readLoop(buffers[thread]->data, elements, passes);
    });
    best = std::max(best, double(threads) * double(elements) * sizeof(float) *
                              double(passes) / t);
  }
  if (std::getenv("PADDLE_CALIBRATE_SINK"))
    errs() << sink[0] << "\n";
  return best;
}

/// A data or unified cache level from sysfs: its size per instance and how
/// many CPUs share one.
struct SysCache {
  int level;
  double sizeBytes;
  int sharedCpus;
};

std::string readSys(const std::string &path) {
  auto buffer = MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().trim().str();
}

int countCpus(StringRef list) {
  // "0-3,8,10-11"
  int count = 0;
  SmallVector<StringRef> parts;
  list.split(parts, ',', -1, false);
  for (StringRef part : parts) {
    auto [lo, hi] = part.split('-');
    int a = 0, b = 0;
    if (lo.getAsInteger(10, a))
      continue;
    if (hi.empty() || hi.getAsInteger(10, b))
      b = a;
    count += b - a + 1;
  }
  return std::max(count, 1);
}

std::vector<SysCache> readCaches() {
  std::vector<SysCache> caches;
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::string type = readSys(dir + "/type");
    if (type.empty())
      break;
    if (type == "Instruction")
      continue;
    int level = std::atoi(readSys(dir + "/level").c_str());
    StringRef size = readSys(dir + "/size");
    StringRef digits = size.take_while([](char c) { return isdigit(c); });
    unsigned long long value = 0;
    if (digits.getAsInteger(10, value))
      continue;
    double bytes = double(value);
    StringRef unit = size.drop_front(digits.size());
    if (unit.starts_with("K"))
      bytes *= 1024;
    else if (unit.starts_with("M"))
      bytes *= 1024 * 1024;
    caches.push_back(
        {level, bytes, countCpus(readSys(dir + "/shared_cpu_list"))});
  }
  return caches;
}

//===----------------------------------------------------------------------===//
// Call overhead
//===----------------------------------------------------------------------===//

/// Median time of submitting one empty task per core to the runtime's
/// thread pool and waiting for all of them.
double measureForkJoin(int threads, int repetitions) {
  paddle_runtime::ThreadPool pool(threads);
  std::vector<double> times;
  for (int r = 0; r < repetitions + 10; ++r) {
    auto start = Clock::now();
    for (int t = 0; t < threads; ++t)
      pool.submit([] {});
    pool.waitIdle();
    if (r >= 10) // the first calls wake sleeping workers
      times.push_back(seconds(start, Clock::now()));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "paddle-calibrate: measure this CPU and write its device spec\n");

  // Open the output first: a bad path fails before seconds of measuring.
  std::error_code ec;
  raw_fd_ostream out(outputPath, ec, sys::fs::OF_Text);
  if (ec) {
    errs() << "paddle-calibrate: cannot write '" << outputPath
           << "': " << ec.message() << "\n";
    return 1;
  }

  std::optional<Isa> isa = detectIsa();
  if (!isa) {
    errs() << "paddle-calibrate: this CPU has neither AVX-512 nor AVX2+FMA; "
              "its peak cannot be measured with vector FMAs\n";
    return 1;
  }
  int cores = std::max(1u, std::thread::hardware_concurrency());
  int reps = quick ? 3 : 10;

  DeviceSpec spec;
  spec.name = deviceName;
  spec.kind = DeviceKind::Cpu;
  spec.cores = cores;
  // Many short bursts (~10 ms each) rather than a few long ones: on a
  // shared machine the best burst is the one that had the cores alone,
  // and that is the peak the hardware can reach.
  int64_t iterations = 2'000'000;
  int peakReps = quick ? 5 : 40;
  double f32 =
      measurePeak(cores, isa->lanesF32, isa->f32, iterations, peakReps);
  double f64 =
      measurePeak(cores, isa->lanesF32 / 2, isa->f64, iterations, peakReps);
  double f32One = measurePeak(1, isa->lanesF32, isa->f32, iterations, peakReps);
  spec.peakFlopsPerS[SpecDType::F32] = f32;
  spec.peakFlopsPerS[SpecDType::F64] = f64;

  std::vector<SysCache> sysCaches = readCaches();
  double llc = 8 << 20;
  for (const SysCache &c : sysCaches)
    llc = std::max(llc, c.sizeBytes);
  // Each triad array 4x the last-level cache (2x in quick mode).
  size_t elements = size_t(llc * (quick ? 2 : 4) / sizeof(float));
  spec.memoryBandwidthBytesPerS = measureTriad(cores, elements, reps);

  for (const SysCache &c : sysCaches) {
    int instances = std::max(1, cores / c.sharedCpus);
    double total = c.sizeBytes * instances;
    // Each thread reads half of its share of the level.
    double perThread = c.sizeBytes * instances / cores / 2;
    int passes = std::max(1, int((quick ? 2e8 : 2e9) / (perThread * cores)));
    double bandwidth = measureRead(cores, size_t(perThread), passes, reps);
    spec.caches.push_back({"L" + std::to_string(c.level), total, bandwidth});
  }
  std::stable_sort(spec.caches.begin(), spec.caches.end(),
                   [](const CacheLevel &a, const CacheLevel &b) {
                     return a.sizeBytes < b.sizeBytes;
                   });

  spec.callOverheadS = measureForkJoin(cores, quick ? 200 : 2000);
  // Collectives between processes on one host go through shared memory: a
  // copy reads and writes, so half the triad bandwidth; a message costs
  // about one wake-up of another core.
  spec.link.bandwidthBytesPerS = spec.memoryBandwidthBytesPerS / 2;
  spec.link.latencyS = spec.callOverheadS;

  std::string notes;
  raw_string_ostream os(notes);
  os << "Measured by paddle-calibrate" << (quick ? " --quick" : "") << " ("
     << isa->name << " FMA chains on " << cores
     << " threads; one core alone: " << format("%.4g", f32One)
     << " f32 FLOP/s). Memory: STREAM triad over "
     << format("%.0f", double(elements) * 4 / (1 << 20))
     << " MiB arrays. Caches: sysfs sizes, read bandwidth over half of each "
        "level. Call overhead: fork/join of the runtime thread pool. Link: "
        "derived (half the triad bandwidth, latency = call overhead). f16, "
        "bf16 and integer peaks are not measured (they fall back to f32's).";
  spec.notes = notes;
  spec.source = "paddle-calibrate";

  std::string text = serializeDeviceSpec(spec);
  // The writer and the loader must agree; check before writing.
  if (auto back = parseDeviceSpec(text, "paddle-calibrate output"); !back) {
    errs() << "paddle-calibrate: internal error: " << toString(back.takeError())
           << "\n";
    return 1;
  }
  out << text;
  errs() << format("paddle-calibrate: f32 %.4g FLOP/s (%s, %d cores), "
                   "memory %.4g B/s, call overhead %.3g us\n",
                   f32, isa->name, cores, spec.memoryBandwidthBytesPerS,
                   spec.callOverheadS * 1e6);
  return 0;
}
