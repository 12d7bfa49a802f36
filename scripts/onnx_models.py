#!/usr/bin/env python3
"""Exports ResNet-18, MobileNetV2 and a TransformerEncoderLayer to ONNX and
checks the importer against onnxruntime (driven by scripts/onnx_models.sh).

Prints, per model: the ops of the graph, import/compile/run times and the
max abs error against onnxruntime for two batch sizes; exits 1 when an error
exceeds 1e-4 or a model does not import.
"""

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

TOL = 1e-4


def build_models():
    import torch
    import torchvision

    class EncoderLayer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.TransformerEncoderLayer(
                d_model=128, nhead=4, dim_feedforward=256, dropout=0.0, batch_first=True)

        def forward(self, x):
            # is_causal passed explicitly: the TorchScript exporter of torch
            # 2.5 cannot trace the layer's default argument.
            return self.layer(x, src_mask=None, is_causal=False)

    torch.manual_seed(0)
    return {
        "resnet18": (calibrated(torchvision.models.resnet18(weights=None)), (3, 224, 224)),
        "mobilenet_v2": (calibrated(torchvision.models.mobilenet_v2(weights=None)),
                         (3, 224, 224)),
        "encoder_layer": (EncoderLayer(), (16, 128)),
    }


def calibrated(model):
    """Sets the BatchNorm running statistics from random data. With the
    initial ones (mean 0, variance 1) the activations of a randomly
    initialized MobileNetV2 shrink to ~1e-9 at the output, which would make
    an absolute error meaningless; calibrated, outputs are O(1)."""
    import torch
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(4, 3, 224, 224))
    return model


def export(name, module, sample_shape, out_dir):
    import torch
    module.eval()
    path = out_dir / f"{name}.onnx"
    x = torch.randn(2, *sample_shape)
    # Not under no_grad: there the encoder layer takes its fused fast path
    # (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
    torch.onnx.export(module, (x,), str(path), opset_version=17, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    return path


def main():
    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "build/onnx-models")
    out_dir.mkdir(parents=True, exist_ok=True)
    import onnx
    import onnxruntime as ort

    import paddle_mlir.onnx as pm_onnx
    worst = 0.0
    failed = False
    for name, (module, shape) in build_models().items():
        path = export(name, module, shape, out_dir)
        ops = Counter(n.op_type for n in onnx.load(str(path)).graph.node)
        print(f"{name}: {sum(ops.values())} nodes: "
              + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
        try:
            t0 = time.time()
            model = pm_onnx.load(path)
            t1 = time.time()
            fn = model.compile()
            t2 = time.time()
        except Exception as e:  # report every model, then fail
            print(f"  import/compile FAILED: {e}")
            failed = True
            continue
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(0)
        for batch in (1, 3):
            x = rng.standard_normal((batch, *shape)).astype(np.float32)
            expected = sess.run(None, {"x": x})[0]
            t3 = time.time()
            got = fn(x)[0]
            t4 = time.time()
            err = float(np.max(np.abs(got - expected)))
            worst = max(worst, err)
            status = "ok" if err <= TOL and got.shape == expected.shape else "FAIL"
            failed |= status != "ok"
            print(f"  batch {batch}: max abs err {err:.3g} (|ref| max "
                  f"{float(np.max(np.abs(expected))):.3g}) {status}; import {t1 - t0:.2f} s, "
                  f"compile {t2 - t1:.2f} s, run {t4 - t3:.3f} s")
    print(f"worst max abs error: {worst:.3g} (tolerance {TOL})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
