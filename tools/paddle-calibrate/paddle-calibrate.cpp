//===- paddle-calibrate.cpp - measure this CPU and write its spec ---------===//
//
// paddle-calibrate [-o spec.json] [--quick] [--name N]
//
// Measures what the cost model needs of the local CPU and writes a device
// spec that every tool reads with `--device spec.json` (and Python with
// `device="spec.json"`):
//   - peak f32/f64 FLOP/s: independent vector FMA chains (AVX-512 or AVX2,
//     whichever the CPU has) on one thread per core, all at once;
//   - peak f16/bf16/i8: AVX512-FP16 FMA chains; AMX tile dot products where
//     the CPU has AMX and Linux grants the tile state, else AVX512-BF16 /
//     AVX512-VNNI dot products; a type without a unit is left out;
//   - memory bandwidth: a STREAM triad a = b + s * c over buffers much larger
//     than the last-level cache (3 arrays x 4 bytes counted per element, as
//     STREAM does), on all cores;
//   - cache levels: sizes from sysfs, bandwidths from a vector read loop
//     over half of each level on all cores;
//   - call overhead: a fork/join of one empty task per core on the
//     runtime's thread pool, which every parallel kernel pays;
//   - the library choice ("onednn", "codegen"; docs/onednn.md): f32 matmuls
//     and a convolution JIT-compiled through the CPU pipeline with
//     --library=onednn and =none and timed through the runtime on one
//     thread; each path's efficiency is fitted from a tiny and large
//     problems, the extra fixed cost of a oneDNN call from the tiny one,
//     our loops' bandwidth from a thin (1 x K x N) matmul.
// Each measurement keeps the best of several repetitions (the least
// disturbed by other processes). --quick takes well under 10 s.
//
//===----------------------------------------------------------------------===//

#include "paddle/CostModel/DeviceSpec.h"
#include "paddle/Execution/InitTool.h"
#include "paddle/Execution/Jit.h"
#include "paddle/Execution/OutputFile.h"
#include "paddle/InitAll.h"
#include "paddle_runtime/collectives.h"
#include "paddle_runtime/runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
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
static cl::opt<bool> install(
    "install",
    cl::desc("Write the spec (named 'host') where the compilers look for "
             "this machine's spec: $XDG_CACHE_HOME/paddle-mlir/host.json "
             "(default ~/.cache/...). Modules that name no device then "
             "compile for it on this CPU model"));

static cl::opt<std::string> clusterOut(
    "cluster-out",
    cl::desc("Also write a cluster spec of this machine: one node whose "
             "devices are its cores, joined by the measured link, naming "
             "the device spec file (-o FILE or --install)"),
    cl::value_desc("file"));

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

/// FLOP/s of all `threads` cores running `loop` together, which does
/// `flopsPerIteration` per iteration (12 FMA chains: 12 x lanes x 2).
template <typename Loop>
double measurePeak(int threads, double flopsPerIteration, Loop loop,
                   int64_t iterations, int repetitions) {
  double best = 0;
  std::vector<double> sink(threads);
  for (int r = 0; r < repetitions; ++r) {
    double t = runParallel(
        threads, [&](int thread) { sink[thread] = double(loop(iterations)); });
    best = std::max(best, double(threads) * double(iterations) *
                              flopsPerIteration / t);
  }
  if (std::getenv("PADDLE_CALIBRATE_SINK"))
    errs() << sink[0] << "\n";
  return best;
}

//===----------------------------------------------------------------------===//
// Peaks of the narrower types
//===----------------------------------------------------------------------===//

// f16: AVX512-FP16 FMA chains (32 lanes). bf16 and i8: AMX tile dot
// products where the CPU has them and Linux grants the tile state, else
// AVX512-BF16 / AVX512-VNNI dot products (two and four products per 32-bit
// lane). The AMX loop runs four independent accumulator tiles over 2 x 2
// source tiles, as a GEMM kernel does; each TDPBF16PS is 16x16x32 and each
// TDPBSSD 16x16x64 multiply-adds.

__attribute__((target("avx512fp16"))) float f16Loop(int64_t iterations) {
  __m512h acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm512_set1_ph(static_cast<_Float16>(float(i) * 1e-3f));
  // acc converges to 0.1: every value stays a normal half.
  const __m512h m = _mm512_set1_ph(static_cast<_Float16>(0.999f)),
                a = _mm512_set1_ph(static_cast<_Float16>(1e-4f));
  for (int64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm512_fmadd_ph(acc[i], m, a);
  __m512h sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm512_add_ph(sum, acc[i]);
  _Float16 lanes[32];
  _mm512_storeu_ph(lanes, sum);
  return float(lanes[0]) + float(lanes[31]);
}

__attribute__((target("avx512f,avx512bf16"))) float
bf16DotLoop(int64_t iterations) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
  // Pairs of bf16 1.0 and 2^-24: each dot product adds 2^-23.
  const __m512bh one = (__m512bh)_mm512_set1_epi16(0x3f80),
                 tiny = (__m512bh)_mm512_set1_epi16(0x3380);
  for (int64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], one, tiny);
  __m512 sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  return lanes[0] + lanes[15];
}

__attribute__((target("avx512f,avx512vnni"))) float
i8DotLoop(int64_t iterations) {
  __m512i acc[12];
  for (int i = 0; i < 12; ++i)
    acc[i] = _mm512_set1_epi32(i);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(5);
  for (int64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < 12; ++i)
      acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
  __m512i sum = acc[0];
  for (int i = 1; i < 12; ++i)
    sum = _mm512_add_epi32(sum, acc[i]);
  int32_t lanes[16];
  _mm512_storeu_si512(lanes, sum);
  return float(lanes[0] + lanes[15]);
}

/// The tile configuration of LDTILECFG (palette 1): eight 16 x 64-byte tiles.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t bytesPerRow[16] = {};
  uint8_t rows[16] = {};
};

template <bool Int8>
__attribute__((target("amx-tile,amx-bf16,amx-int8"))) float
amxLoop(int64_t iterations) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.bytesPerRow[t] = 64;
    config.rows[t] = 16;
  }
  _tile_loadconfig(&config);
  // Sources of small values (bf16 0x0101 is about 2.4e-38, so the
  // accumulators stay finite; int8 1 x 1 sums stay far below 2^31).
  alignas(64) uint8_t source[16 * 64];
  std::memset(source, 1, sizeof source);
  _tile_loadd(4, source, 64);
  _tile_loadd(5, source, 64);
  _tile_loadd(6, source, 64);
  _tile_loadd(7, source, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t n = 0; n < iterations; ++n) {
    if constexpr (Int8) {
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    } else {
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  alignas(64) float out[16 * 16];
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0] + out[255];
}

/// Asks Linux for the AMX tile data state (off by default for a process);
/// false where the kernel refuses or predates it.
bool requestAmx() {
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

/// How one narrower type's peak is measured on this CPU.
struct NarrowPeak {
  SpecDType type;
  const char *how;
  float (*loop)(int64_t);
  double flopsPerIteration;
  int64_t iterations; // about 10 ms a burst
};

/// The narrower types this CPU computes natively, each with its fastest
/// unit; `missing` names the others. Types left out of the spec use f32's
/// peak (DeviceSpec::peakFlops).
std::vector<NarrowPeak> narrowPeaks(std::string &missing) {
  std::vector<NarrowPeak> peaks;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512fp16"))
    peaks.push_back({SpecDType::F16, "AVX512-FP16 FMA chains", f16Loop,
                     12.0 * 32 * 2, 2'000'000});
  else
    missing += " f16 (no AVX512-FP16)";
  bool amx = __builtin_cpu_supports("amx-bf16") &&
             __builtin_cpu_supports("amx-int8") && requestAmx();
  constexpr double kTile = 16.0 * 16 * 2; // output elements x 2 FLOPs
  if (amx) {
    peaks.push_back({SpecDType::BF16, "AMX TDPBF16PS", amxLoop<false>,
                     4 * kTile * 32, 400'000});
    peaks.push_back(
        {SpecDType::I8, "AMX TDPBSSD", amxLoop<true>, 4 * kTile * 64, 400'000});
    return peaks;
  }
  if (__builtin_cpu_supports("avx512bf16"))
    peaks.push_back({SpecDType::BF16, "AVX512-BF16 dot products", bf16DotLoop,
                     12.0 * 16 * 4, 2'000'000});
  else
    missing += " bf16 (no AMX or AVX512-BF16)";
  if (__builtin_cpu_supports("avx512vnni"))
    peaks.push_back({SpecDType::I8, "AVX512-VNNI dot products", i8DotLoop,
                     12.0 * 16 * 8, 2'000'000});
  else
    missing += " i8 (no AMX or AVX512-VNNI)";
  return peaks;
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
Expected<double> measureForkJoin(int threads, int repetitions) {
  double median = 0;
  if (paddle_status_t s =
          paddle_measure_fork_join(threads, repetitions, &median)) {
    std::string message = paddle_status_message(s);
    paddle_status_free(s);
    return createStringError(inconvertibleErrorCode(), message);
  }
  return median;
}

//===----------------------------------------------------------------------===//
// Library choice: oneDNN and our generated kernels, through the runtime
//===----------------------------------------------------------------------===//

/// A module of one f32 function `f` and its FLOP count.
struct Problem {
  std::string text;
  double flops;
  std::vector<std::vector<int64_t>> inputs;
};

Problem matmulProblem(int64_t m, int64_t n, int64_t k) {
  std::string a = formatv("tensor<{0}x{1}xf32>", m, k).str();
  std::string b = formatv("tensor<{0}x{1}xf32>", k, n).str();
  std::string c = formatv("tensor<{0}x{1}xf32>", m, n).str();
  return {formatv("func.func @f(%a: {0}, %b: {1}) -> {2} {{\n"
                  "  %0 = paddle.matmul %a, %b : {0}, {1} -> {2}\n"
                  "  return %0 : {2}\n}\n",
                  a, b, c)
              .str(),
          2.0 * double(m) * double(n) * double(k),
          {{m, k}, {k, n}}};
}

/// An unpadded 3x3 convolution of `c` to `f` channels over h x h pixels.
Problem convProblem(int64_t c, int64_t f, int64_t h) {
  std::string x = formatv("tensor<1x{0}x{1}x{1}xf32>", c, h).str();
  std::string w = formatv("tensor<{0}x{1}x3x3xf32>", f, c).str();
  std::string y = formatv("tensor<1x{0}x{1}x{1}xf32>", f, h - 2).str();
  return {formatv("func.func @f(%x: {0}, %w: {1}) -> {2} {{\n"
                  "  %0 = paddle.conv2d %x, %w : {0}, {1} -> {2}\n"
                  "  return %0 : {2}\n}\n",
                  x, w, y)
              .str(),
          2.0 * double(f) * double(h - 2) * double(h - 2) * double(c) * 9,
          {{1, c, h, h}, {f, c, 3, 3}}};
}

/// Best time of one call of `problem` compiled with `library` (and tiling
/// on or off, in `precision`), on the calling thread alone; an error
/// message on failure.
Expected<double>
timeProblem(mlir::MLIRContext &context, const Problem &problem,
            mlir::paddle::LibraryChoice library, bool tile, double budgetS,
            mlir::paddle::Precision precision = mlir::paddle::Precision::F32) {
  auto fail = [](const Twine &message) -> Error {
    return createStringError(inconvertibleErrorCode(), message);
  };
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(problem.text, &context);
  if (!module)
    return fail("cannot parse the calibration module:\n" + problem.text);
  mlir::paddle::CompileOptions options;
  options.target.library = mlir::paddle::stringifyLibraryChoice(library).str();
  options.target.precision = mlir::paddle::stringifyPrecision(precision).str();
  options.tileAndVectorize = tile;
  auto jit = mlir::paddle::JitModule::create(*module, options);
  if (!jit)
    return jit.takeError();
  auto executable = mlir::paddle::JitModule::toExecutable(std::move(*jit));
  if (!executable)
    return executable.takeError();
  paddle_session_t session = nullptr;
  paddle_session_options_t sessionOptions{};
  std::vector<paddle_tensor_t> inputs(problem.inputs.size());
  paddle_tensor_t output{};
  auto cleanup = [&] {
    paddle_tensor_free(&output);
    for (paddle_tensor_t &t : inputs)
      paddle_tensor_free(&t);
    paddle_session_free(session);
    paddle_executable_free(*executable);
  };
  auto check = [&](paddle_status_t s) -> Error {
    if (!s)
      return Error::success();
    std::string m = paddle_status_message(s);
    paddle_status_free(s);
    return fail("calibration run failed: " + m);
  };
  if (Error e = check(
          paddle_session_create(*executable, &sessionOptions, &session))) {
    cleanup();
    return std::move(e);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int64_t> &shape = problem.inputs[i];
    if (Error e = check(paddle_tensor_alloc(
            &inputs[i], PADDLE_F32, int32_t(shape.size()), shape.data()))) {
      cleanup();
      return std::move(e);
    }
    float *data = static_cast<float *>(inputs[i].data);
    for (int64_t j = 0, e = paddle_tensor_num_elements(&inputs[i]); j < e; ++j)
      data[j] = float((j * 7 + int64_t(i)) % 13) * 0.125f - 0.75f;
  }
  // Calls until the budget is spent (at least 5, at most 2000); the best
  // one is the least disturbed by other processes. The first call creates
  // oneDNN's primitive and is not counted.
  double best = 1e30, spent = 0;
  for (int call = 0; call < 2000 && (call < 6 || spent < budgetS); ++call) {
    paddle_tensor_free(&output);
    auto start = Clock::now();
    paddle_status_t s = paddle_session_run(session, 0, inputs.data(),
                                           int32_t(inputs.size()), &output, 1);
    double t = seconds(start, Clock::now());
    if (Error e = check(s)) {
      cleanup();
      return std::move(e);
    }
    spent += t;
    if (call > 0)
      best = std::min(best, t);
  }
  cleanup();
  return best;
}

/// The fitted "onednn" and "codegen" fields, relative to `peakOneCore`.
struct LibraryFit {
  OneDnnSpec onednn;
  CodegenSpec codegen;
  std::string notes;
};

/// `bf16PeakOneCore`: one core's bf16 peak where the CPU has a bf16 unit;
/// then oneDNN's bf16 efficiency is measured too.
Expected<LibraryFit> measureLibraryChoice(double peakOneCore,
                                          std::optional<double> bf16PeakOneCore,
                                          double bandwidth, bool quick) {
  using mlir::paddle::LibraryChoice;
  using mlir::paddle::Precision;
  mlir::DialectRegistry registry;
  mlir::paddle::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // One thread: the efficiencies are per core (DeviceSpec.h), and a
  // shared machine's other load disturbs one thread least.
  paddle_set_num_threads(1);
  double budget = quick ? 0.05 : 0.3;
  auto time = [&](const Problem &p, LibraryChoice lib, bool tile,
                  Precision precision = Precision::F32) -> Expected<double> {
    return timeProblem(context, p, lib, tile, budget, precision);
  };
  Problem tiny = matmulProblem(8, 8, 8);
  std::vector<Problem> large = {matmulProblem(256, 256, 256)};
  if (!quick)
    large.push_back(matmulProblem(512, 512, 512));
  // Ops our code runs as scalar loops: a convolution (never tiled) and a
  // matmul with tiling off; sizes that take milliseconds there.
  std::vector<Problem> scalar = {convProblem(32, 32, 30),
                                 matmulProblem(128, 128, 128)};

  Expected<double> tinyLib = time(tiny, LibraryChoice::OneDnn, true);
  if (!tinyLib)
    return tinyLib.takeError();
  Expected<double> tinyOurs = time(tiny, LibraryChoice::None, true);
  if (!tinyOurs)
    return tinyOurs.takeError();
  // Efficiency: the FLOPs over the time beyond the tiny problem's (the
  // fixed costs of a call), as a fraction of one core's peak; the lower
  // median over the problems.
  auto efficiency = [&](const std::vector<Problem> &problems, LibraryChoice lib,
                        bool tile, double fixed, std::string &detail,
                        Precision precision =
                            Precision::F32) -> Expected<double> {
    // bf16 is only timed where its peak was measured.
    double peak = precision == Precision::BF16 ? *bf16PeakOneCore : peakOneCore;
    std::vector<double> values;
    for (const Problem &p : problems) {
      Expected<double> t = time(p, lib, tile, precision);
      if (!t)
        return t.takeError();
      double e = p.flops / std::max(*t - fixed, 1e-9) / peak;
      values.push_back(std::clamp(e, 1e-4, 1.0));
      detail += formatv(" {0:F1} GFLOP/s", p.flops / *t / 1e9).str();
    }
    // The lower median: of two problems, the one further from the peak.
    std::sort(values.begin(), values.end());
    return values[(values.size() - 1) / 2];
  };
  LibraryFit fit;
  std::string libDetail, tiledDetail, scalarDetail;
  Expected<double> lib =
      efficiency(large, LibraryChoice::OneDnn, true, *tinyLib, libDetail);
  if (!lib)
    return lib.takeError();
  Expected<double> tiled =
      efficiency(large, LibraryChoice::None, true, *tinyOurs, tiledDetail);
  if (!tiled)
    return tiled.takeError();
  // The scalar problems: the conv through our loops, the matmul untiled.
  std::vector<double> scalarValues;
  for (const Problem &p : scalar) {
    std::string detail;
    Expected<double> e =
        efficiency({p}, LibraryChoice::None, /*tile=*/false, *tinyOurs, detail);
    if (!e)
      return e.takeError();
    scalarValues.push_back(*e);
    scalarDetail += detail;
  }
  // Memory: a thin matmul whose B (32 MiB) is far larger than the caches
  // of one core, through our tiled kernel, against the triad bandwidth
  // that the roofline charges.
  Problem thin = matmulProblem(1, 2048, 4096);
  Expected<double> thinOurs = time(thin, LibraryChoice::None, true);
  if (!thinOurs)
    return thinOurs.takeError();
  double thinBytes = (1.0 * 4096 + 4096.0 * 2048 + 2048) * 4;
  fit.codegen.memoryEfficiency =
      std::clamp(thinBytes / *thinOurs / bandwidth, 1e-4, 1.0);
  fit.onednn.f32Efficiency = *lib;
  // bf16: the same matmuls with bf16 inputs (--precision bf16: oneDNN's
  // bf16 kernels, AMX where the CPU has it) against one core's bf16 peak;
  // the fixed cost is the bf16 8x8x8 call's.
  std::string bf16Detail;
  if (bf16PeakOneCore) {
    Expected<double> tinyBF16 =
        time(tiny, LibraryChoice::OneDnn, true, Precision::BF16);
    if (!tinyBF16)
      return tinyBF16.takeError();
    Expected<double> bf16 = efficiency(large, LibraryChoice::OneDnn, true,
                                       *tinyBF16, bf16Detail, Precision::BF16);
    if (!bf16)
      return bf16.takeError();
    fit.onednn.bf16Efficiency = *bf16;
    bf16Detail = "; oneDNN bf16" + bf16Detail;
  }
  fit.codegen.tiledF32Efficiency = *tiled;
  // Geometric mean: the two kinds of scalar loops differ by a factor, and
  // neither should dominate.
  fit.codegen.scalarF32Efficiency =
      std::sqrt(scalarValues[0] * scalarValues[1]);
  // The model charges both paths the kernel call overhead and the tiny
  // problem's roofline; what is left of the measured difference is the
  // fixed cost a oneDNN call adds.
  double modelled =
      tiny.flops / (peakOneCore * *lib) - tiny.flops / (peakOneCore * *tiled);
  fit.onednn.callOverheadS = std::max(0.0, *tinyLib - *tinyOurs - modelled);
  fit.notes =
      formatv(" Library choice (1 thread): 8x8x8 matmul {0:F2} us in "
              "oneDNN, {1:F2} us ours; oneDNN{2}{6}; ours tiled{3}; ours "
              "scalar (conv, untiled matmul){4}; ours 1x4096x2048 {5:F1} GB/s.",
              *tinyLib * 1e6, *tinyOurs * 1e6, libDetail, tiledDetail,
              scalarDetail, thinBytes / *thinOurs / 1e9, bf16Detail)
          .str();
  return fit;
}

} // namespace

/// The link of the in-process mesh (two ranks on two threads), as the
/// alpha-beta model reads it: alpha from a 4 KiB all-reduce (2 steps of
/// alpha for 2 ranks), beta from a 16 MiB all-gather ((n - 1) / n of the
/// bytes over beta, after one alpha). Medians of the repetitions.
Expected<LinkSpec> measureLink(bool quick) {
  paddle_local_group_t group = nullptr;
  if (paddle_status_t st = paddle_local_group_create(2, 60, &group)) {
    std::string message = paddle_status_message(st);
    paddle_status_free(st);
    return createStringError(inconvertibleErrorCode(),
                             "cannot create an in-process group: " + message);
  }
  std::unique_ptr<paddle_local_group_s, void (*)(paddle_local_group_t)> owned(
      group, paddle_local_group_release);
  const size_t small = 4096 / 4, big = (16u << 20) / 4;
  int smallReps = quick ? 50 : 400, bigReps = quick ? 5 : 20;
  std::vector<double> smallTimes, bigTimes;
  std::atomic<int> failed{0};
  auto rank = [&](int r) {
    // A failed status fails the measurement (and is freed).
    auto ok = [&](paddle_status_t st) {
      if (!st)
        return true;
      paddle_status_free(st);
      failed = 1;
      return false;
    };
    paddle_comm_t comm = nullptr;
    if (!ok(paddle_local_group_comm(group, r, &comm)))
      return;
    std::vector<float> send(big, 1.0f), recv(2 * big);
    auto time = [&](int reps, std::vector<double> &out,
                    const std::function<paddle_status_t()> &call) {
      for (int i = 0; i < reps + 2; ++i) {
        if (failed || !ok(paddle_comm_barrier(comm)))
          return;
        auto start = Clock::now();
        if (!ok(call()))
          return;
        if (r == 0 && i >= 2)
          out.push_back(seconds(start, Clock::now()));
      }
    };
    time(smallReps, smallTimes, [&] {
      return paddle_comm_all_reduce(comm, send.data(), recv.data(), small,
                                    PADDLE_F32, PADDLE_REDUCE_SUM);
    });
    time(bigReps, bigTimes, [&] {
      return paddle_comm_all_gather(comm, send.data(), recv.data(), big,
                                    PADDLE_F32);
    });
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  if (failed || smallTimes.empty() || bigTimes.empty())
    return createStringError(inconvertibleErrorCode(),
                             "a collective of the in-process group failed");
  auto median = [](std::vector<double> &v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  LinkSpec link;
  link.latencyS = median(smallTimes) / 2;
  double gathered = 2.0 * big * sizeof(float);
  link.bandwidthBytesPerS =
      gathered / 2 / std::max(median(bigTimes) - link.latencyS, 1e-9);
  return link;
}

/// Physical memory of this machine in bytes (0 when unknown).
double physicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? double(pages) * double(size) : 0;
}

int main(int argc, char **argv) {
  InitTool init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "paddle-calibrate: measure this CPU and write its device spec\n");

  std::string path = outputPath;
  if (install) {
    if (outputPath.getNumOccurrences()) {
      errs() << "paddle-calibrate: --install writes the installed spec; "
                "give -o or --install, not both\n";
      return 1;
    }
    path = getHostSpecPath();
    if (path.empty()) {
      errs() << "paddle-calibrate: --install: neither XDG_CACHE_HOME nor "
                "HOME is set\n";
      return 1;
    }
    if (std::error_code ec =
            sys::fs::create_directories(sys::path::parent_path(path))) {
      errs() << "paddle-calibrate: --install: cannot create '"
             << sys::path::parent_path(path) << "': " << ec.message() << "\n";
      return 1;
    }
  }
  if (!clusterOut.empty() && path == "-") {
    errs() << "paddle-calibrate: --cluster-out names the device spec file: "
              "give -o FILE or --install too\n";
    return 1;
  }
  // Open the output first: a bad path fails before seconds of measuring.
  // It is published only once the spec is complete.
  Expected<mlir::paddle::OutputFile> out =
      mlir::paddle::OutputFile::create(path);
  if (!out) {
    errs() << "paddle-calibrate: " << toString(out.takeError()) << "\n";
    return 1;
  }

  std::optional<mlir::paddle::OutputFile> clusterFile;
  if (!clusterOut.empty()) {
    Expected<mlir::paddle::OutputFile> file =
        mlir::paddle::OutputFile::create(clusterOut);
    if (!file) {
      errs() << "paddle-calibrate: " << toString(file.takeError()) << "\n";
      return 1;
    }
    clusterFile.emplace(std::move(*file));
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
  spec.name = install && !deviceName.getNumOccurrences()
                  ? std::string("host")
                  : deviceName.getValue();
  spec.cpuModel = getHostCpuModel();
  spec.kind = DeviceKind::Cpu;
  spec.cores = cores;
  // Many short bursts (~10 ms each) rather than a few long ones: on a
  // shared machine the best burst is the one that had the cores alone,
  // and that is the peak the hardware can reach.
  int64_t iterations = 2'000'000;
  int peakReps = quick ? 5 : 40;
  // 12 chains x lanes x 2 FLOPs per FMA.
  double fmaFlops = 12.0 * isa->lanesF32 * 2;
  double f32 = measurePeak(cores, fmaFlops, isa->f32, iterations, peakReps);
  double f64 = measurePeak(cores, fmaFlops / 2, isa->f64, iterations, peakReps);
  double f32One = measurePeak(1, fmaFlops, isa->f32, iterations, peakReps);
  spec.peakFlopsPerS[SpecDType::F32] = f32;
  spec.peakFlopsPerS[SpecDType::F64] = f64;
  std::string narrowMissing, narrowNotes;
  std::optional<double> bf16One;
  for (const NarrowPeak &p : narrowPeaks(narrowMissing)) {
    double peak =
        measurePeak(cores, p.flopsPerIteration, p.loop, p.iterations, peakReps);
    spec.peakFlopsPerS[p.type] = peak;
    if (p.type == SpecDType::BF16)
      bf16One =
          measurePeak(1, p.flopsPerIteration, p.loop, p.iterations, peakReps);
    narrowNotes += formatv(" {0}: {1} ({2:e3} FLOP/s).",
                           stringifySpecDType(p.type), p.how, peak)
                       .str();
  }

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

  Expected<double> forkJoin = measureForkJoin(cores, quick ? 200 : 2000);
  if (!forkJoin) {
    errs() << "paddle-calibrate: measuring the call overhead: "
           << toString(forkJoin.takeError()) << "\n";
    return 1;
  }
  spec.callOverheadS = *forkJoin;

  Expected<LibraryFit> fit = measureLibraryChoice(
      f32One, bf16One, spec.memoryBandwidthBytesPerS, quick);
  if (!fit) {
    errs() << "paddle-calibrate: measuring the library choice: "
           << toString(fit.takeError()) << "\n";
    return 1;
  }
  spec.onednn = fit->onednn;
  spec.codegen = fit->codegen;
  // The link of collectives between the devices of an in-process mesh.
  Expected<LinkSpec> link = measureLink(quick);
  if (!link) {
    errs() << "paddle-calibrate: measuring the link: "
           << toString(link.takeError()) << "\n";
    return 1;
  }
  spec.link = *link;

  std::string notes;
  raw_string_ostream os(notes);
  os << "Measured by paddle-calibrate" << (quick ? " --quick" : "") << " ("
     << isa->name << " FMA chains on " << cores
     << " threads; one core alone: " << format("%.4g", f32One)
     << " f32 FLOP/s). Memory: STREAM triad over "
     << format("%.0f", double(elements) * 4 / (1 << 20))
     << " MiB arrays. Caches: sysfs sizes, read bandwidth over half of each "
        "level. Call overhead: fork/join of the runtime thread pool. Link: "
        "the in-process mesh of 2 ranks, alpha from a 4 KiB all-reduce, "
        "beta from a 16 MiB all-gather (medians)."
     << narrowNotes;
  if (!narrowMissing.empty())
    os << " Not measured (f32's peak is used):" << narrowMissing << ".";
  os << fit->notes;
  spec.notes = notes;
  spec.source = "paddle-calibrate";

  std::string text = serializeDeviceSpec(spec);
  // The writer and the loader must agree; check before writing.
  if (auto back = parseDeviceSpec(text, "paddle-calibrate output"); !back) {
    errs() << "paddle-calibrate: internal error: " << toString(back.takeError())
           << "\n";
    return 1;
  }
  // The cluster file, complete and checked before anything is written.
  std::string clusterText;
  if (!clusterOut.empty()) {
    SmallString<256> specPath(path);
    if (std::error_code ec = sys::fs::make_absolute(specPath)) {
      errs() << "paddle-calibrate: " << path << ": " << ec.message() << "\n";
      return 1;
    }
    auto linkJson = [](const LinkSpec &l) {
      return json::Object{{"bandwidth_bytes_per_s", l.bandwidthBytesPerS},
                          {"latency_s", l.latencyS}};
    };
    json::Object cluster{
        {"name", spec.name + "-x" + std::to_string(cores)},
        {"device", std::string(specPath)},
        {"nodes", 1},
        {"devices_per_node", cores},
        {"memory_bytes_per_device", physicalMemory() / cores},
        {"intra_node", linkJson(spec.link)},
        {"notes", "This machine as a cluster: one node whose devices are "
                  "its cores (one thread each), joined by the link of the "
                  "in-process mesh, with an equal share of the physical "
                  "memory. Measured by paddle-calibrate."},
        {"source", "paddle-calibrate"}};
    clusterText =
        formatv("{0:2}", json::Value(std::move(cluster))).str() + "\n";
    if (auto back = parseClusterSpec(clusterText, "paddle-calibrate output");
        !back) {
      errs() << "paddle-calibrate: internal error: "
             << toString(back.takeError()) << "\n";
      return 1;
    }
  }
  out->os() << text;
  if (Error err = out->commit()) {
    errs() << "paddle-calibrate: " << toString(std::move(err)) << "\n";
    return 1;
  }
  if (clusterFile) {
    clusterFile->os() << clusterText;
    if (Error err = clusterFile->commit()) {
      errs() << "paddle-calibrate: " << toString(std::move(err)) << "\n";
      return 1;
    }
  }
  errs() << format(
      "paddle-calibrate: f32 %.4g FLOP/s (%s, %d cores), "
      "memory %.4g B/s, call overhead %.3g us; oneDNN %.3f of "
      "peak (bf16 %.3f) + %.3g us per call, ours %.3f tiled, %.3f scalar, "
      "%.3f of the bandwidth\n",
      f32, isa->name, cores, spec.memoryBandwidthBytesPerS,
      spec.callOverheadS * 1e6, spec.onednn->f32Efficiency,
      spec.onednn->bf16Efficiency.value_or(0), spec.onednn->callOverheadS * 1e6,
      spec.codegen->tiledF32Efficiency, spec.codegen->scalarF32Efficiency,
      spec.codegen->memoryEfficiency);
  return 0;
}
