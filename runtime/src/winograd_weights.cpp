//===- winograd_weights.cpp - 3x3 weights into oneDNN's Winograd layout ---===//
//
// See winograd_weights.h for why. F(4x4, 3x3) maps each 3x3 filter g to the
// 6x6 tile G g G^T: 36 points, each a fixed linear combination of the 9
// taps (F(2x2, 3x3), oneDNN's other kernel: 4x4 tiles, 16 points). Those
// coefficients are oneDNN's (its G is scaled to match its input and output
// transforms), read back from its own reorder of unit filters.
//
//===----------------------------------------------------------------------===//

#include "winograd_weights.h"
#include "cpu_isa.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace paddle::onednn {
namespace {

using dnnl::memory;

constexpr int kTaps = 9;       // a 3x3 filter
constexpr int kMaxPoints = 36; // F(4x4, 3x3): 6x6 tiles
constexpr int64_t kMaxBlock = 64;

/// One of oneDNN's f32 Winograd weights layouts, as its descriptor gives it:
/// the tile points (alpha x alpha) and the channels in blocks, ocBlock
/// output channels innermost in each.
struct Layout {
  dnnl_wino_memory_format_t format;
  int64_t points, oc, ic, ocBlock, icBlock, oc2Block, ic2Block;

  static std::optional<Layout> of(const memory::desc &desc) {
    const dnnl_memory_desc_t &d = desc.data;
    if (d.data_type != dnnl_f32 || d.format_kind != dnnl_format_kind_wino)
      return std::nullopt;
    const dnnl_wino_desc_t &w = d.format_desc.wino_desc;
    Layout l{w.wino_format, int64_t(w.alpha) * w.alpha,
             w.oc,          w.ic,
             w.oc_block,    w.ic_block,
             w.oc2_block,   w.ic2_block};
    if (w.r != 3 || l.points > kMaxPoints ||
        (l.format != dnnl_wino_wei_OBaaIBOIio &&
         l.format != dnnl_wino_wei_aaOio && l.format != dnnl_wino_wei_aaOBiOo))
      return std::nullopt;
    // OBaaIBOIio alone blocks input channels twice.
    if (l.format != dnnl_wino_wei_OBaaIBOIio)
      l.ic2Block = 1;
    if (l.format == dnnl_wino_wei_aaOio)
      l.oc2Block = 1;
    if (l.ocBlock < kTaps || l.ocBlock > kMaxBlock || l.icBlock <= 0 ||
        l.oc2Block <= 0 || l.ic2Block <= 0 ||
        l.oc % (l.ocBlock * l.oc2Block) != 0 ||
        l.ic % (l.icBlock * l.ic2Block) != 0)
      return std::nullopt;
    // Nothing but the f32 points (an s8 layout appends compensation).
    if (desc.get_size() != size_t(l.points * l.oc * l.ic) * sizeof(float))
      return std::nullopt;
    return l;
  }

  /// Where the ocBlock values of output channels o0.. (o0 a multiple of
  /// ocBlock), input channel i and tile point `point` start.
  int64_t offset(int64_t o0, int64_t i, int64_t point) const {
    int64_t ocChunk = ocBlock * oc2Block, icChunk = icBlock * ic2Block;
    int64_t occ = o0 / ocChunk, ob = o0 / ocBlock % oc2Block;
    int64_t icc = i / icChunk, ib = i / icBlock % ic2Block;
    int64_t inner = i % icBlock;
    int64_t run;
    switch (format) {
    case dnnl_wino_wei_OBaaIBOIio: // [occ][point][icc][ob][ib][i][o]
      run = ((((occ * points + point) * (ic / icChunk) + icc) * oc2Block + ob) *
                 ic2Block +
             ib) *
                icBlock +
            inner;
      break;
    case dnnl_wino_wei_aaOBiOo: // [point][occ][icc][i][ob][o]
      run = (((point * (oc / ocChunk) + occ) * (ic / icBlock) + icc) * icBlock +
             inner) *
                oc2Block +
            ob;
      break;
    default: // aaOio: [point][occ][icc][i][o]
      run = ((point * (oc / ocBlock) + occ) * (ic / icBlock) + icc) * icBlock +
            inner;
    }
    return run * ocBlock;
  }

  /// The layout of two chunks of each kind of channel, for the probe.
  Layout probeSized() const {
    Layout l = *this;
    l.oc = 2 * ocBlock * oc2Block;
    l.ic = 2 * icBlock * ic2Block;
    return l;
  }

  bool sameKind(const Layout &o) const {
    return format == o.format && points == o.points && ocBlock == o.ocBlock &&
           icBlock == o.icBlock && oc2Block == o.oc2Block &&
           ic2Block == o.ic2Block;
  }
};

/// The coefficients of the tile points in the 9 taps.
using Coefficients = float[kMaxPoints][kTaps];

/// Writes the layout `l` from plain weights [OC, IC, 3, 3] (channels beyond
/// OC or IC, the layout's padding, are zero filters), one chunk of output
/// channels (oc2Block x ocBlock) at a time: the chunk's taps are gathered
/// input channel by input channel, channels side by side, then each tile
/// point's part of the chunk is written in order (it is contiguous in all
/// three layouts), as runs of ocBlock sums. Writing the 36 points of one
/// filter together instead meant 36 streams a power of two apart, which
/// share cache sets: 2.5x slower on 512x512 filters.
static inline __attribute__((always_inline)) void
transformBody(const Coefficients &t, const Layout &l, const float *w,
              const memory::dims &sizes, const memory::dims &strides,
              float *out) {
  int64_t chunk = l.ocBlock * l.oc2Block;
  // taps[(i * kTaps + k) * chunk + o]
  std::vector<float> taps(size_t(l.ic * kTaps * chunk));
  float run[kMaxBlock];
  for (int64_t c0 = 0; c0 < l.oc; c0 += chunk) {
    for (int64_t o = 0; o < chunk; ++o)
      for (int64_t i = 0; i < l.ic; ++i)
        for (int k = 0; k < kTaps; ++k)
          taps[(i * kTaps + k) * chunk + o] =
              c0 + o < sizes[0] && i < sizes[1]
                  ? w[(c0 + o) * strides[0] + i * strides[1] +
                      (k / 3) * strides[2] + (k % 3) * strides[3]]
                  : 0.0f;
    for (int64_t p = 0; p < l.points; ++p)
      for (int64_t i = 0; i < l.ic; ++i)
        for (int64_t ob = 0; ob < l.oc2Block; ++ob) {
          const float *in = &taps[size_t(i * kTaps * chunk + ob * l.ocBlock)];
          std::fill(run, run + l.ocBlock, 0.0f);
          for (int k = 0; k < kTaps; ++k) {
            float c = t[p][k];
            if (c != 0.0f)
              for (int64_t o = 0; o < l.ocBlock; ++o)
                run[o] += c * in[k * chunk + o];
          }
          std::copy(run, run + l.ocBlock,
                    out + l.offset(c0 + ob * l.ocBlock, i, p));
        }
  }
}

__attribute__((target("avx512f"))) void
transformAvx512(const Coefficients &t, const Layout &l, const float *w,
                const memory::dims &sizes, const memory::dims &strides,
                float *out) {
  transformBody(t, l, w, sizes, strides, out);
}
__attribute__((target("avx2,fma"))) void
transformAvx2(const Coefficients &t, const Layout &l, const float *w,
              const memory::dims &sizes, const memory::dims &strides,
              float *out) {
  transformBody(t, l, w, sizes, strides, out);
}
void transformGeneric(const Coefficients &t, const Layout &l, const float *w,
                      const memory::dims &sizes, const memory::dims &strides,
                      float *out) {
  transformBody(t, l, w, sizes, strides, out);
}

/// The transform in the widest vectors the CPU has (512x512 filters: 17 ms
/// with AVX-512 against 25 with SSE on the Zen 4 VM; oneDNN's reorder 93).
void transform(const Coefficients &t, const Layout &l, const float *w,
               const memory::dims &sizes, const memory::dims &strides,
               float *out) {
  using Kernel = void (*)(const Coefficients &, const Layout &, const float *,
                          const memory::dims &, const memory::dims &, float *);
  static const Kernel kernel = paddle::runtime::widestKernel<Kernel>(
      &transformAvx512, &transformAvx2, &transformGeneric);
  kernel(t, l, w, sizes, strides, out);
}

/// What a probe of one kind of layout found: the coefficients read back
/// from oneDNN, and whether the transform with them reproduced oneDNN's
/// reorder.
struct Probe {
  Layout kind;
  bool ok = false;
  Coefficients t = {};
};

/// Probes the kind of `real` on two chunks of each kind of channel: a
/// descriptor like `real` but that small (8192 filters at most in
/// ResNet's), reordered by oneDNN. Unit filters among the weights give the
/// coefficients; the transform of all of them then checks the coefficients
/// and the layout together against oneDNN's.
Probe runProbe(const memory::desc &real, const Layout &layout) {
  Probe r{layout};
  Layout small = layout.probeSized();
  try {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl_memory_desc_t d = real.data;
    d.dims[0] = d.padded_dims[0] = small.oc;
    d.dims[1] = d.padded_dims[1] = small.ic;
    d.format_desc.wino_desc.oc = int(small.oc);
    d.format_desc.wino_desc.ic = int(small.ic);
    d.format_desc.wino_desc.size =
        size_t(small.points * small.oc * small.ic) * sizeof(float);
    memory::desc to(d);
    memory::desc from({small.oc, small.ic, 3, 3}, memory::data_type::f32,
                      memory::format_tag::oihw);
    dnnl::reorder reorder(
        dnnl::reorder::primitive_desc(engine, from, engine, to));
    dnnl::stream stream(engine);
    auto oneDnns = [&](std::vector<float> &w) {
      std::vector<float> out(to.get_size() / sizeof(float));
      memory in(from, engine, w.data()), o(to, engine, out.data());
      reorder.execute(stream, in, o);
      stream.wait();
      return out;
    };
    // Weights of a fixed pattern, but for unit filters at output channels
    // 0..8 of input channel 0 (channel k: tap k alone), which give the
    // coefficients; one reorder, as oneDNN's is slow even here (about
    // 0.3 us a filter).
    size_t filters = size_t(small.oc * small.ic);
    std::vector<float> w(filters * kTaps);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = float(int64_t(i * 7919 % 1999) - 999) / 999.0f;
    for (int o = 0; o < kTaps; ++o)
      for (int k = 0; k < kTaps; ++k)
        w[size_t(o * small.ic) * kTaps + k] = o == k ? 1.0f : 0.0f;
    std::vector<float> want = oneDnns(w);
    if (want.size() != size_t(small.points) * filters)
      return r;
    for (int64_t p = 0; p < small.points; ++p)
      for (int k = 0; k < kTaps; ++k)
        r.t[p][k] = want[small.offset(0, 0, p) + k];
    std::vector<float> got(want.size());
    transform(r.t, small, w.data(), {small.oc, small.ic, 3, 3},
              {small.ic * kTaps, kTaps, 3, 1}, got.data());
    float scale = 0.0f;
    for (float v : want)
      scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < want.size(); ++i)
      if (!(std::fabs(got[i] - want[i]) <= 1e-5f * scale))
        return r;
    r.ok = true;
  } catch (const dnnl::error &) {
    // oneDNN does not take the small descriptor: its reorder stays.
  }
  return r;
}

/// The probe of the kind of `real`, run on its first use in the process.
const Probe &probeFor(const memory::desc &real, const Layout &layout) {
  static std::mutex mutex;
  static std::deque<Probe> probes;
  std::lock_guard<std::mutex> lock(mutex);
  for (const Probe &p : probes)
    if (p.kind.sameKind(layout))
      return p;
  probes.push_back(runProbe(real, layout));
  return probes.back();
}

} // namespace

bool transformWinogradWeights(const float *weights, const memory::dims &sizes,
                              const memory::dims &strides,
                              const memory::desc &to, float *out) {
  if (sizes.size() != 4 || strides.size() != 4 || sizes[2] != 3 ||
      sizes[3] != 3)
    return false;
  std::optional<Layout> layout = Layout::of(to);
  if (!layout || sizes[0] > layout->oc || sizes[1] > layout->ic)
    return false;
  const Probe &probe = probeFor(to, *layout);
  if (!probe.ok)
    return false;
  transform(probe.t, *layout, weights, sizes, strides, out);
  return true;
}

} // namespace paddle::onednn
