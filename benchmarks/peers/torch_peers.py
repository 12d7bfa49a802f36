"""PyTorch eager (MKL/oneDNN as torch dispatches), torch.compile (inductor,
CPU) and torch's oneDNN matmul (GEMM only)."""

import time

import numpy as np

from .common import PeerError


def _tensors(inputs):
    import torch
    return [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs]


def _numpy(out):
    import torch
    if isinstance(out, torch.Tensor):
        return [out.detach().numpy()]
    return [o.detach().numpy() for o in out]


class _TorchBase:
    def supports(self, wl):
        return True

    def close(self):
        self.call = None


def _train_parts(wl, inputs):
    import torch

    from . import workloads
    model = (workloads.torch_train_mlp() if wl.make == "mlp"
             else workloads.torch_train_transformer())
    cfg = workloads.TRAIN_MLP if wl.make == "mlp" else workloads.TRAIN_TF
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    x, y = _tensors(inputs)
    return model, opt, x, y


def _train_step(fwd, opt, x, y):
    import torch
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(fwd(x), y)
    loss.backward()
    opt.step()
    return loss


class TorchEager(_TorchBase):
    name = "torch eager"

    def prepare(self, wl, onnx_path, inputs):
        import torch
        if wl.kind == "train":
            model, opt, x, y = _train_parts(wl, inputs)
            self.call = lambda: [_train_step(model, opt, x, y).detach().numpy()]
            return {}
        model, _ = wl.make()
        model.eval()
        ts = _tensors(inputs)

        def call():
            with torch.inference_mode():
                return _numpy(model(*ts))
        self.call = call
        return {}

    def set_threads(self, n):
        import torch
        torch.set_num_threads(n)
        return {}

    def run(self, want_output=False):
        t = time.perf_counter()
        out = self.call()
        return time.perf_counter() - t, out


class TorchCompile(_TorchBase):
    """torch.compile (default mode, inductor) compiled again for each thread
    count: inductor's C++ kernels fix their OpenMP thread count at code
    generation. The compile time is the first call's."""
    name = "torch.compile"

    def prepare(self, wl, onnx_path, inputs):
        self.wl, self.inputs = wl, inputs
        return {}

    def set_threads(self, n):
        import torch
        import torch._dynamo
        torch.set_num_threads(n)
        torch._dynamo.reset()
        wl = self.wl
        try:
            if wl.kind == "train":
                model, opt, x, y = _train_parts(wl, self.inputs)
                fwd = torch.compile(model)
                call = lambda: [_train_step(fwd, opt, x, y).detach().numpy()]  # noqa: E731
            else:
                model, _ = wl.make()
                model.eval()
                cm = torch.compile(model)
                ts = _tensors(self.inputs)

                def call():
                    with torch.no_grad():
                        return _numpy(cm(*ts))
            t = time.perf_counter()
            call()
            compile_s = time.perf_counter() - t
        except Exception as e:
            raise PeerError(f"error: {type(e).__name__}: {str(e).splitlines()[0][:60]}")
        self.call = call
        return {"compile_s": compile_s}

    def run(self, want_output=False):
        t = time.perf_counter()
        out = self.call()
        return time.perf_counter() - t, out


class TorchOneDNN(_TorchBase):
    """C = A @ B as torch's oneDNN inner product (aten.mkldnn_linear) on a
    oneDNN-layout A, B given as the [N, K] weight; the time includes turning
    the result back into a dense tensor. torch's own matmul goes to MKL."""
    name = "torch oneDNN"

    def supports(self, wl):
        return wl.kind == "gemm"

    def prepare(self, wl, onnx_path, inputs):
        import torch
        a, b = _tensors(inputs)
        am, w = a.to_mkldnn(), b.t().contiguous()

        def call():
            return [torch.ops.aten.mkldnn_linear(am, w, None).to_dense().numpy()]
        self.call = call
        return {}

    def set_threads(self, n):
        import torch
        torch.set_num_threads(n)
        return {}

    def run(self, want_output=False):
        t = time.perf_counter()
        out = self.call()
        return time.perf_counter() - t, out
