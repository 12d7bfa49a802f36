"""numpy's matmul (its bundled OpenBLAS), GEMM only; threads through
threadpoolctl."""

import time

import numpy as np


class NumpyBlas:
    name = "numpy"

    def __init__(self):
        self.limit = None

    def supports(self, wl):
        return wl.kind == "gemm"

    def prepare(self, wl, onnx_path, inputs):
        self.a, self.b = inputs
        return {}

    def set_threads(self, n):
        from threadpoolctl import threadpool_limits
        if self.limit is not None:
            self.limit.restore_original_limits()
        self.limit = threadpool_limits(limits=n, user_api="blas")
        return {}

    def run(self, want_output=False):
        t = time.perf_counter()
        out = np.matmul(self.a, self.b)
        return time.perf_counter() - t, [out]

    def close(self):
        if self.limit is not None:
            self.limit.restore_original_limits()
            self.limit = None
