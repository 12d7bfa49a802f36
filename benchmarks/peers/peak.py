"""Peak fp32 FLOP/s re-measured in the benchmark run: the FMA microbenchmark
(fma_peak.c) on 1..N threads; when no C compiler or no AVX-512 is there, the
best of a large torch GEMM (a lower bound of the peak, said so in the
output). Sampler: the FMA peak in ~30 ms samples, taken next to each timed
GEMM call for its "% of call peak"."""

import ctypes
import os
import subprocess
import threading
import time
from pathlib import Path



def _library(build_dir):
    src = Path(__file__).with_name("fma_peak.c")
    out = Path(build_dir) / "fma_peak.so"
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-O2", "-march=native", "-ffp-contract=fast", "-shared", "-fPIC", str(src), "-o",
                        str(out)], check=True, capture_output=True, text=True)
    lib = ctypes.CDLL(str(out))
    lib.fma_peak_run.argtypes = [ctypes.c_long]
    lib.fma_peak_run.restype = ctypes.c_float
    lib.fma_peak_lanes.restype = ctypes.c_int
    return lib


def _run_threads(lib, iters, threads):
    """Seconds for `threads` threads each running `iters` FMA rounds."""
    workers = [threading.Thread(target=lib.fma_peak_run, args=(iters,)) for _ in range(threads)]
    t = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - t


def _iters_for(lib, seconds):
    """FMA rounds that take about `seconds` on one thread."""
    iters = 1000
    while True:
        t = time.perf_counter()
        lib.fma_peak_run(iters)
        dt = time.perf_counter() - t
        if dt > 0.02:
            return max(1, int(iters * seconds / dt))
        iters *= 4


def fma_peak(build_dir, threads, seconds=0.3, tries=5):
    """Best of `tries` FLOP/s with `threads` threads each running the FMA
    loop for about `seconds`."""
    return Sampler(build_dir, seconds, tries).sample(threads)


class Sampler:
    """The FMA peak sampled in short bursts next to each timed call: on a VM
    whose clock moves from one second to the next (this machine's FMA peak
    read 142-185 GFLOP/s within a minute), a call's "% of peak" is only
    meaningful against the peak of the same moment. `sample(threads)` is the
    best of `tries` bursts of about `seconds` each (~30 ms in all)."""

    def __init__(self, build_dir, seconds=0.01, tries=3):
        self.lib = _library(build_dir)
        self.per_iter = 12 * self.lib.fma_peak_lanes() * 2
        self.iters = _iters_for(self.lib, seconds)
        self.tries = tries

    def sample(self, threads):
        flops = threads * self.iters * self.per_iter
        return max(flops / _run_threads(self.lib, self.iters, threads) for _ in range(self.tries))


def gemm_peak(threads, n=2048, tries=5):
    import torch
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = 0.0
    for _ in range(tries):
        t = time.perf_counter()
        a @ b
        best = max(best, 2.0 * n ** 3 / (time.perf_counter() - t))
    return best


def measure(build_dir, threads):
    """(FLOP/s, how) for `threads` threads."""
    try:
        return fma_peak(build_dir, threads), "FMA microbenchmark (fma_peak.c, -march=native)"
    except (OSError, subprocess.CalledProcessError) as e:
        return gemm_peak(threads), f"torch 2048 GEMM (FMA benchmark failed: {e})"
