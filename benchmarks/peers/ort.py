"""onnxruntime (CPU execution provider, all graph optimizations), one session
per thread count (intra_op_num_threads, inter_op 1); the compile time is the
session creation."""

import time

from .common import PeerError


class OnnxRuntime:
    name = "onnxruntime"

    def supports(self, wl):
        return wl.kind != "train"

    def prepare(self, wl, onnx_path, inputs):
        self.path, self.inputs = str(onnx_path), inputs
        return {}

    def set_threads(self, n):
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = n
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        t = time.perf_counter()
        try:
            self.sess = ort.InferenceSession(self.path, opts, providers=["CPUExecutionProvider"])
        except Exception as e:
            raise PeerError(f"error: {str(e).splitlines()[0][:70]}")
        compile_s = time.perf_counter() - t
        self.feeds = {i.name: a for i, a in zip(self.sess.get_inputs(), self.inputs)}
        return {"compile_s": compile_s}

    def run(self, want_output=False):
        t = time.perf_counter()
        out = self.sess.run(None, self.feeds)
        return time.perf_counter() - t, out

    def close(self):
        self.sess = None
