//===- choice.cpp - Timed choice among oneDNN's implementations -----------===//
//
// chooseImplementation: which of oneDNN's implementations of a matmul or a
// convolution the runtime uses, oneDNN's own pick or the fastest of a few
// timed on this machine when the primitive is created, with the operands
// those timing runs use and the bound that skips problems too big to time.
//
//===----------------------------------------------------------------------===//

#include "onednn/common.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>

namespace paddle::onednn {

namespace {

/// The operands of timing runs: each (src, weights, dst and the bias and
/// per-channel post-op operands) is the buffer `given` has for it where its
/// layout is the candidate's, else zeros in a buffer of its own, shared by
/// the candidates with that layout.
class TimingOperands {
public:
  explicit TimingOperands(const std::unordered_map<int, memory> &given)
      : given(given) {}

  /// The arguments of a run of `c`, whose other operands are `extra`.
  std::unordered_map<int, memory> argsOf(const Candidate &c,
                                         const ExtraLayouts &extra) {
    std::unordered_map<int, memory> args;
    args.insert({DNNL_ARG_SRC, bufferOf(DNNL_ARG_SRC, c.src)});
    args.insert({DNNL_ARG_WEIGHTS, bufferOf(DNNL_ARG_WEIGHTS, c.weights)});
    args.insert({DNNL_ARG_DST, bufferOf(DNNL_ARG_DST, c.dst)});
    for (const auto &[arg, desc] : extra)
      args.insert({arg, bufferOf(arg, desc)});
    return args;
  }

private:
  memory bufferOf(int arg, const memory::desc &d) {
    auto it = given.find(arg);
    if (it != given.end() && it->second.get_desc() == d)
      return it->second;
    for (const auto &[key, m] : zeros)
      if (key == arg && m.get_desc() == d)
        return m;
    storage.emplace_back(d.get_size() + 64, 0);
    auto *data = reinterpret_cast<void *>(
        (reinterpret_cast<uintptr_t>(storage.back().data()) + 63) &
        ~uintptr_t(63));
    zeros.emplace_back(arg, memory(d, cpuEngine(), data));
    return zeros.back().second;
  }

  const std::unordered_map<int, memory> &given;
  std::vector<std::pair<int, memory>> zeros;
  std::deque<std::vector<char>> storage;
};

} // namespace

/// One run of `p` on `args`, in ms.
static double timedRun(const dnnl::primitive &p,
                       const std::unordered_map<int, memory> &args) {
  auto start = std::chrono::steady_clock::now();
  execute(p, args);
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// Floating-point operations per ms that one thread of this machine does at
/// most in oneDNN's kernels, as far as a timed choice needs to know: the
/// best of four 256^3 sgemm runs on one thread (85-90% of the FMA peak on
/// the Zen 4 VM; a conv or matmul rarely does better), measured once, on
/// the first timed choice, in about 2 ms.
static double gemmFlopsPerMs() {
  static const double rate = [] {
    constexpr int64_t n = 256;
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    // The calling thread's own setting (an ICV), put back below.
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    double best = 1e300;
    for (int i = 0; i < 4; ++i) {
      auto start = std::chrono::steady_clock::now();
      dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                 c.data(), n);
      best = std::min(best, std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count());
    }
    omp_set_num_threads(threads);
    return 2.0 * n * n * n / best;
  }();
  return rate;
}

/// Whether a problem of `rules.flops` would take longer than twice
/// `rules.maxFirstMs` (the warm-up's bound) even at gemmFlopsPerMs() on
/// every thread. Such a problem keeps oneDNN's pick without the warm-up
/// run that would say so; ResNet-50's convs at batch 8 (2-15 ms each) paid
/// one run each for it, 0.2 s of the first call. Only a kernel twice as
/// fast as sgemm, or a rate measured at half speed on a busy machine,
/// could make this skip a problem the timing would have changed (those
/// that run within maxFirstMs); either way oneDNN's pick stays, which is
/// slower at worst, never wrong.
static bool surelyTooBig(const ChoiceRules &rules) {
  if (rules.flops <= 0)
    return false;
  double fastestMs =
      rules.flops /
      (gemmFlopsPerMs() * double(std::max<int64_t>(1, rules.threads)));
  return fastestMs > 2 * rules.maxFirstMs;
}

/// oneDNN's implementation to use for `pd`: its first (its own pick), or
/// with timed choice (the default) the fastest on this machine of up to
/// four that `alternatives(first)` offers (a primitive descriptor to
/// iterate, with the first pick's activation layouts), reference ones
/// aside, timed when the primitive is created (a warm-up run each, a
/// round over all of them, two more for oneDNN's pick and those that beat
/// it in the first; TimingOperands says on what). oneDNN ranks
/// implementations by ISA and a static order, and its first pick is often
/// not the fastest here (docs/onednn.md, "Timed choice"):
/// - convolutions: `jit_dw` ran MobileNetV2's depthwise convs 10-35%
///   faster than the `brdgmm_dw` it lists first, `jit_1x1` its 32 -> 16
///   conv at 112x112 1.5x faster than `brgconv_1x1`;
/// - matmuls: with B a run-time operand whose rows are a multiple of 4 KiB
///   apart, `gemm:jit` ran 128x768x3072 1.25x faster than `brg:avx512_core`.
/// Another pick must win by 10%.
template <typename Primitive, typename PrimitiveDesc>
Candidate chooseImplementation(
    const PrimitiveDesc &pd,
    const std::function<PrimitiveDesc(const Candidate &)> &alternatives,
    const ExtraLayouts &extra, const std::unordered_map<int, memory> &given,
    const ChoiceRules &rules) {
  Candidate first = candidateOf<Primitive>(pd);
  if (!timedChoice.load(std::memory_order_relaxed))
    return first;
  if (rules.preferred && first.name.rfind(rules.preferred, 0) != 0) {
    PrimitiveDesc other = alternatives(first);
    do {
      if (std::string(other.impl_info_str()).rfind(rules.preferred, 0) == 0 &&
          other.src_desc() == first.src && other.dst_desc() == first.dst) {
        first = candidateOf<Primitive>(other);
        ++preferredStarts;
        break;
      }
    } while (other.next_impl());
  }
  if (surelyTooBig(rules))
    return first;
  constexpr size_t kMaxCandidates = 4;
  constexpr int kRounds = 3;
  // Another pick must beat oneDNN's by a margin: on a shared machine two
  // kernels within a few percent swap places from run to run.
  constexpr double kMargin = 0.9;
  PrimitiveDesc other = alternatives(first);
  std::vector<Candidate> all{first};
  TimingOperands operands(given);
  std::vector<std::unordered_map<int, memory>> args;
  do {
    std::string name = other.impl_info_str();
    if (name == first.name || name.rfind("ref", 0) == 0 ||
        (rules.skipGemm && name.find("gemm") != std::string::npos) ||
        other.src_desc() != first.src || other.dst_desc() != first.dst)
      continue;
    if (args.empty()) {
      // Timed only where there is something to compare it with; the
      // warm-up (caches, pages, lazy setup) says whether it is too big.
      args.push_back(operands.argsOf(first, extra));
      if (timedRun(first.primitive, args[0]) > 2 * rules.maxFirstMs) {
        ++timedCandidates;
        return first;
      }
    }
    all.push_back(candidateOf<Primitive>(other));
    args.push_back(operands.argsOf(all.back(), extra));
    // Its warm-up pays one-time costs (gemm:jit's packing buffer: 1.8x a
    // later run) and does not count.
    timedRun(all.back().primitive, args.back());
  } while (all.size() < kMaxCandidates && other.next_impl());
  if (all.size() == 1)
    return first;
  // Rounds over the candidates, each keeping its best run: a disturbance
  // of the machine (another process's threads spinning for a while) that
  // would slow down every run of one candidate timed after the other
  // falls on all of them alike. After the first round only those that
  // ran faster than oneDNN's pick go on: a slower one would have to gain
  // more than the margin in two runs. Most problems have none (ResNet-50's
  // 1x1 convs: four kernels within 5%), and their timing costs half.
  std::vector<double> best(all.size(), 1e300);
  auto timeOnce = [&](size_t i) {
    best[i] = std::min(best[i], timedRun(all[i].primitive, args[i]));
  };
  for (size_t i = 0; i < all.size(); ++i)
    timeOnce(i);
  std::vector<size_t> contenders;
  for (size_t i = 1; i < all.size(); ++i)
    if (best[i] < best[0])
      contenders.push_back(i);
  for (int round = 1; round < kRounds && !contenders.empty(); ++round) {
    timeOnce(0);
    for (size_t i : contenders)
      timeOnce(i);
  }
  timedCandidates += static_cast<int64_t>(all.size());
  // Timed, the fastest is known: a first pick slower than maxFirstMs after
  // its warm-up (within twice that) is replaced too. Keeping it threw the
  // timing away where it mattered most: 128x768x3072 with a run-time B on
  // the Xeon VM, `brg` 11-14 ms against `gemm:jit`'s 4.1.
  size_t chosen = 0;
  double bar = best[0] * kMargin;
  for (size_t i = 1; i < all.size(); ++i)
    if (best[i] < bar) {
      bar = best[i];
      chosen = i;
    }
  return all[chosen];
}

template Candidate
chooseImplementation<dnnl::matmul, dnnl::matmul::primitive_desc>(
    const dnnl::matmul::primitive_desc &,
    const std::function<dnnl::matmul::primitive_desc(const Candidate &)> &,
    const ExtraLayouts &, const std::unordered_map<int, memory> &,
    const ChoiceRules &);
template Candidate
chooseImplementation<dnnl::convolution_forward,
                     dnnl::convolution_forward::primitive_desc>(
    const dnnl::convolution_forward::primitive_desc &,
    const std::function<
        dnnl::convolution_forward::primitive_desc(const Candidate &)> &,
    const ExtraLayouts &, const std::unordered_map<int, memory> &,
    const ChoiceRules &);

} // namespace paddle::onednn
