"""PyTorch eager (MKL/oneDNN as torch dispatches), torch.compile (inductor,
CPU) and torch's oneDNN matmul (GEMM only), each configured as PyTorch's
docs recommend for CPU:

- inference under torch.compile freezes the weights
  (`torch._inductor.config.freezing`, the inductor CPU tutorial's advice),
  asks for `mode="max-autotune"` (falling back to the default mode where
  that fails to compile; the fallback is recorded) and runs CNNs in
  channels_last;
- training uses Adam(fused=True), the fastest of torch's three Adam
  implementations per its docs; torch.compile compiles the forward and the
  loss together (AOTAutograd compiles their backward), the fused Adam step
  being one kernel already;
- the oneDNN GEMM reference reorders its weight once, ahead of the calls
  (mkldnn._reorder_linear_weight, as inductor's freezing does)."""

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
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], fused=True)
    x, y = _tensors(inputs)
    return model, opt, x, y


def _loss(model):
    import torch
    return lambda x, y: torch.nn.functional.cross_entropy(model(x), y)


def _train_step(loss_fn, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(x, y)
    loss.backward()
    opt.step()
    return loss


def _is_cnn(model):
    import torch
    return any(isinstance(m, torch.nn.Conv2d) for m in model.modules())


class TorchEager(_TorchBase):
    name = "torch eager"

    def prepare(self, wl, onnx_path, inputs):
        import torch
        if wl.kind == "train":
            model, opt, x, y = _train_parts(wl, inputs)
            loss_fn = _loss(model)
            self.call = lambda: [_train_step(loss_fn, opt, x, y).detach().numpy()]
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
    """torch.compile (inductor) compiled again for each thread count:
    inductor's C++ kernels fix their OpenMP thread count at code generation.
    The compile time is the first call's (of the mode that compiled)."""
    name = "torch.compile"

    def prepare(self, wl, onnx_path, inputs):
        self.wl, self.inputs = wl, inputs
        return {}

    def _inference(self, mode):
        import torch
        model, _ = self.wl.make()
        model.eval()
        ts = _tensors(self.inputs)
        if _is_cnn(model):
            model = model.to(memory_format=torch.channels_last)
            ts = [t.contiguous(memory_format=torch.channels_last) for t in ts]
        cm = torch.compile(model, mode=mode)

        def call():
            with torch.no_grad():
                return _numpy(cm(*ts))
        return call

    def _compile(self, make):
        """(call, seconds of its first call, which compiles)."""
        import torch._dynamo
        import torch._inductor.config as inductor
        torch._dynamo.reset()
        with inductor.patch(freezing=self.wl.kind != "train"):
            call = make()
            t = time.perf_counter()
            call()
            return call, time.perf_counter() - t

    def set_threads(self, n):
        import torch
        torch.set_num_threads(n)
        wl, info = self.wl, {}
        try:
            if wl.kind == "train":
                def make():
                    model, opt, x, y = _train_parts(wl, self.inputs)
                    loss_fn = torch.compile(_loss(model))
                    return lambda: [_train_step(loss_fn, opt, x, y).detach().numpy()]
                call, compile_s = self._compile(make)
            else:
                try:
                    call, compile_s = self._compile(lambda: self._inference("max-autotune"))
                    info["mode"] = "max-autotune"
                except Exception as e:
                    info["mode"] = "default"
                    info["max_autotune_error"] = _first_line(e)
                    call, compile_s = self._compile(lambda: self._inference(None))
        except Exception as e:
            raise PeerError(f"error: {type(e).__name__}: {_first_line(e)[:60]}")
        self.call = call
        return {"compile_s": compile_s, **info}

    def run(self, want_output=False):
        t = time.perf_counter()
        out = self.call()
        return time.perf_counter() - t, out


def _first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class TorchOneDNN(_TorchBase):
    """C = A @ B as torch's oneDNN inner product (mkldnn._linear_pointwise)
    with B reordered once, ahead of the calls, into the layout oneDNN picks
    for M rows (mkldnn._reorder_linear_weight): a library call with its
    weight prepacked, as a compiler that owns the weights can do. Dense
    tensors in and out. torch's own matmul goes to MKL."""
    name = "torch oneDNN"

    def supports(self, wl):
        return wl.kind == "gemm"

    def prepare(self, wl, onnx_path, inputs):
        import torch
        a, b = _tensors(inputs)
        packed = torch.ops.mkldnn._reorder_linear_weight(b.t().contiguous(), a.shape[0])

        def call():
            return [torch.ops.mkldnn._linear_pointwise(a, packed, None, "none", [], "").numpy()]
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
