"""Peak fp32 FLOP/s re-measured in the benchmark run: the FMA microbenchmark
(fma_peak.c) on 1..N threads; when no C compiler or no AVX-512 is there, the
best of a large torch GEMM (a lower bound of the peak, said so in the
output)."""

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


def fma_peak(build_dir, threads, seconds=0.3, tries=5):
    """Best of `tries` FLOP/s with `threads` threads each running the FMA
    loop for about `seconds`."""
    lib = _library(build_dir)
    flops_per_iter = 12 * lib.fma_peak_lanes() * 2
    iters = 1000
    while True:  # calibrate the iteration count to the wanted duration
        t = time.perf_counter()
        lib.fma_peak_run(iters)
        dt = time.perf_counter() - t
        if dt > 0.02:
            break
        iters *= 4
    iters = int(iters * seconds / dt)
    best = 0.0
    for _ in range(tries):
        workers = [threading.Thread(target=lib.fma_peak_run, args=(iters,))
                   for _ in range(threads)]
        t = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        dt = time.perf_counter() - t
        best = max(best, threads * iters * flops_per_iter / dt)
    return best


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
