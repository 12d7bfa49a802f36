"""Accuracy of the bf16 mode (--precision bf16, docs/bf16.md) on models.

For each model (random weights, exported from PyTorch to ONNX, imported
with paddle_mlir.onnx) the script compiles the same module twice,
precision="f32" and precision="bf16", runs both and onnxruntime (f32) on the
same random inputs and reports:

- max abs error and max relative error (max abs error / max |reference|) of
  paddle f32 vs onnxruntime, paddle bf16 vs paddle f32, bf16 vs onnxruntime;
- the median elementwise relative error |bf16 - f32| / (|f32| + 1e-3 max|f32|);
- top-1 agreement between bf16 and f32 (and f32 vs onnxruntime) for the
  classifiers, over --samples random inputs;
- the median call time on this machine of f32 (default: oneDNN by its
  cost-model choice), f32 with library="none" (generated code only) and bf16
  (oneDNN's bf16 primitives where the cost model picks them, AMX on CPUs
  that have it; see docs/bf16.md).

Not a test: it needs torch, torchvision and onnxruntime
(requirements-models.txt) and takes minutes.

    PYTHONPATH=python .venv/bin/python benchmarks/bf16_accuracy.py \
        [--models resnet18,mobilenet_v2,bert_layer,mlp] [--samples 8] [--markdown]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
os.environ.setdefault("PADDLE_BUILD_DIR", str(REPO / "build"))


def bert_layer():
    """A BERT-base-shaped encoder layer, scaled down: hidden 256, 4 heads,
    FFN 1024, GELU, post-layer-norm, sequence 128."""
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self, d=256, heads=4, ffn=1024):
            super().__init__()
            self.heads, self.d = heads, d
            self.qkv = nn.Linear(d, 3 * d)
            self.out = nn.Linear(d, d)
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.ff1, self.ff2 = nn.Linear(d, ffn), nn.Linear(ffn, d)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(x).split(d, dim=-1)

            def split(t):
                return t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)

            q, k, v = split(q), split(k), split(v)
            att = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
            ctx = (att @ v).transpose(1, 2).reshape(b, s, d)
            h = self.ln1(x + self.out(ctx))
            return self.ln2(h + self.ff2(torch.nn.functional.gelu(self.ff1(h))))

    return Layer(), (1, 128, 256), False


def mlp():
    from torch import nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                         nn.Linear(256, 10)), (1, 784), True


def vision(name):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None), (1, 3, 224, 224), True
    return make


MODELS = {
    "resnet18": vision("resnet18"),
    "mobilenet_v2": vision("mobilenet_v2"),
    "bert_layer": bert_layer,
    "mlp": mlp,
}


def export(name, workdir):
    import torch
    torch.manual_seed(0)
    model, shape, classifier = MODELS[name]()
    model.eval()
    path = workdir / f"{name}.onnx"
    torch.onnx.export(model, (torch.randn(*shape),), str(path), opset_version=17,
                      dynamo=False)
    return path, shape, classifier


def median_ms(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1000 * float(np.median(times))


def max_errors(got, ref):
    err = np.abs(got.astype(np.float64) - ref)
    return float(err.max()), float(err.max() / np.abs(ref).max())


def measure(name, samples, workdir, runs):
    import onnxruntime as ort

    import paddle_mlir.onnx as po
    from paddle_mlir import _core

    path, shape, classifier = export(name, workdir)
    imported = po.load(path)
    fn = imported.function_name
    exes = {}
    compile_s = {}
    # "f32": the default pipeline (oneDNN where the cost model picks it);
    # "f32 none": generated code only.
    for key, precision, library in (("f32", "f32", "auto"), ("f32 none", "f32", "none"),
                                    ("bf16", "bf16", "auto")):
        t = time.perf_counter()
        exes[key] = _core.compile(imported.module,
                                   options=f"precision={precision} library={library}")
        compile_s[key] = time.perf_counter() - t
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0].name

    rng = np.random.default_rng(0)
    stats = {k: [] for k in ("f32_ort", "bf16_f32", "bf16_ort", "median_rel")}
    top1 = {"bf16_f32": 0, "f32_ort": 0}
    for _ in range(samples):
        x = rng.standard_normal(shape).astype(np.float32)
        ref = session.run(None, {feed: x})[0].astype(np.float64)
        f32 = exes["f32"].run(fn, [x])[0]
        bf16 = exes["bf16"].run(fn, [x])[0]
        stats["f32_ort"].append(max_errors(f32, ref))
        stats["bf16_f32"].append(max_errors(bf16, f32.astype(np.float64)))
        stats["bf16_ort"].append(max_errors(bf16, ref))
        rel = np.abs(bf16 - f32) / (np.abs(f32) + 1e-3 * np.abs(f32).max())
        stats["median_rel"].append(float(np.median(rel)))
        if classifier:
            top1["bf16_f32"] += int(np.argmax(bf16) == np.argmax(f32))
            top1["f32_ort"] += int(np.argmax(f32) == np.argmax(ref))

    x = rng.standard_normal(shape).astype(np.float32)
    times = {p: median_ms(lambda p=p: exes[p].run(fn, [x]), runs) for p in exes}
    worst = {k: tuple(max(v[i] for v in vals) for i in range(2))
             for k, vals in stats.items() if k != "median_rel"}
    return {
        "model": name,
        "f32_vs_ort": worst["f32_ort"],
        "bf16_vs_f32": worst["bf16_f32"],
        "bf16_vs_ort": worst["bf16_ort"],
        "median_rel": float(np.median(stats["median_rel"])),
        "top1": f"{top1['bf16_f32']}/{samples}" if classifier else "-",
        "top1_ort": f"{top1['f32_ort']}/{samples}" if classifier else "-",
        "ms": times,
        "compile_s": compile_s,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3, help="timed calls per mode")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    header = ["model", "f32 vs ort (abs / rel)", "bf16 vs f32 (abs / rel)",
              "bf16 vs ort (abs / rel)", "median elem rel", "top-1 bf16=f32",
              "top-1 f32=ort", "f32 ms", "f32 codegen ms", "bf16 ms"]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header), flush=True)
    # One row per model as soon as it is measured (the CNNs take minutes).
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            r = measure(name, args.samples, Path(tmp), args.runs)
            line = [
                r["model"],
                "{:.2e} / {:.2e}".format(*r["f32_vs_ort"]),
                "{:.2e} / {:.2e}".format(*r["bf16_vs_f32"]),
                "{:.2e} / {:.2e}".format(*r["bf16_vs_ort"]),
                f"{r['median_rel']:.2e}", r["top1"], r["top1_ort"],
                f"{r['ms']['f32']:.1f}", f"{r['ms']['f32 none']:.1f}",
                f"{r['ms']['bf16']:.1f}",
            ]
            if args.markdown:
                print("| " + " | ".join(line) + " |", flush=True)
            else:
                print(dict(zip(header, line)), flush=True)

if __name__ == "__main__":
    main()
