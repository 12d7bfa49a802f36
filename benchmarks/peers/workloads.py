"""The workloads of the side-by-side benchmark (issue 5): PyTorch modules
(exported to ONNX for ours, onnxruntime and IREE) with their inputs, and the
training steps written twice, once with torch.nn and once with
paddle_mlir.nn (same layer sizes, same optimizer)."""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Workload:
    name: str
    kind: str                       # "gemm", "model" or "train"
    make: object                    # () -> (torch module, [numpy inputs]); train: see below
    flops: float = 0.0              # per call, for GEMM % of peak
    quick: bool = False             # part of --quick
    tags: list = field(default_factory=list)


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- GEMM
def gemm(m, k, n):
    def make():
        import torch

        class MatMul(torch.nn.Module):
            def forward(self, a, b):
                return a @ b
        rng = np.random.default_rng(0)
        return MatMul(), [_rand(rng, m, k), _rand(rng, k, n)]
    return make


GEMM_SHAPES = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
               (1, 4096, 4096), (64, 4096, 1024), (128, 768, 3072)]


# ---------------------------------------------------------------- models
def mlp():
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10))
    return model, [_rand(np.random.default_rng(0), 64, 784)]


def torchvision_model(name, batch):
    def make():
        import torch
        import torchvision
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None)
        return model, [_rand(np.random.default_rng(0), batch, 3, 224, 224)]
    return make


def bert_base():
    """BERT-base encoder: 12 x TransformerEncoderLayer(768, 12 heads, 3072,
    GELU, post-norm), sequence 128, batch 1 (no embeddings, no HF)."""
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(
                torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, activation="gelu",
                                                 batch_first=True) for _ in range(12))

        def forward(self, x):
            for layer in self.layers:
                # is_causal explicit: torch 2.5's TorchScript exporter cannot
                # trace the default argument.
                x = layer(x, src_mask=None, is_causal=False)
            return x
    torch.manual_seed(0)
    return Encoder(), [_rand(np.random.default_rng(0), 1, 128, 768)]


def gpt2_block():
    """One GPT-2 small block (d 768, 12 heads, MLP 3072 with tanh GELU,
    pre-norm, causal attention as an additive mask), sequence 128, batch 1."""
    import torch
    import torch.nn.functional as F
    d, h, s = 768, 12, 128

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
            mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
            self.register_buffer("mask", mask)

        def forward(self, x):
            b = x.shape[0]
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (t.reshape(b, s, h, d // h).transpose(1, 2) for t in (q, k, v))
            att = torch.softmax(q @ k.transpose(-1, -2) * (1.0 / (d // h) ** 0.5) + self.mask,
                                dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(y)
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
    torch.manual_seed(0)
    return Block(), [_rand(np.random.default_rng(0), 1, s, d)]


# ---------------------------------------------------------------- training
# A train workload's make() returns {"torch": (model, loss_fn, optimizer),
# "ours": () -> callable step(x, y), "inputs": [x, y]}: the ours part is built
# in ours' worker process (paddle_mlir only).
TRAIN_MLP = dict(batch=64, sizes=(784, 256, 256, 10), lr=1e-3)
TRAIN_TF = dict(batch=16, seq=64, d=128, heads=4, ffn=512, layers=2, classes=10, lr=1e-3)


def train_inputs(cfg):
    rng = np.random.default_rng(0)
    if "seq" in cfg:
        x = _rand(rng, cfg["batch"], cfg["seq"], cfg["d"])
        y = rng.integers(0, cfg["classes"], cfg["batch"]).astype(np.int64)
    else:
        x = _rand(rng, cfg["batch"], cfg["sizes"][0])
        y = rng.integers(0, cfg["sizes"][-1], cfg["batch"]).astype(np.int64)
    return [x, y]


def torch_train_mlp():
    import torch
    torch.manual_seed(0)
    a, b, c, d = TRAIN_MLP["sizes"]
    model = torch.nn.Sequential(torch.nn.Linear(a, b), torch.nn.ReLU(), torch.nn.Linear(b, c),
                                torch.nn.ReLU(), torch.nn.Linear(c, d))
    return model


def torch_train_transformer():
    import torch
    cfg = TRAIN_TF

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = torch.nn.MultiheadAttention(cfg["d"], cfg["heads"], batch_first=True)
            self.ln1, self.ln2 = torch.nn.LayerNorm(cfg["d"]), torch.nn.LayerNorm(cfg["d"])
            self.fc1 = torch.nn.Linear(cfg["d"], cfg["ffn"])
            self.fc2 = torch.nn.Linear(cfg["ffn"], cfg["d"])

        def forward(self, x):
            x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
            return self.ln2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(Layer() for _ in range(cfg["layers"]))
            self.head = torch.nn.Linear(cfg["d"], cfg["classes"])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.head(x.mean(dim=1))
    torch.manual_seed(0)
    return Model()


def ours_train_mlp():
    from paddle_mlir import nn
    nn.manual_seed(0)
    a, b, c, d = TRAIN_MLP["sizes"]
    return nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c), nn.ReLU(), nn.Linear(c, d))


def ours_train_transformer():
    from paddle_mlir import nn
    from paddle_mlir.nn import _ops
    from paddle_mlir.nn import functional as F
    cfg = TRAIN_TF

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiHeadAttention(cfg["d"], cfg["heads"])
            self.ln1, self.ln2 = nn.LayerNorm(cfg["d"]), nn.LayerNorm(cfg["d"])
            self.fc1, self.fc2 = nn.Linear(cfg["d"], cfg["ffn"]), nn.Linear(cfg["ffn"], cfg["d"])

        def forward(self, x):
            x = self.ln1(x + self.attn(x, x, x)[0])
            return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Layer() for _ in range(cfg["layers"])])
            self.head = nn.Linear(cfg["d"], cfg["classes"])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.head(_ops.mean(x, axis=1))
    nn.manual_seed(0)
    return Model()


def all_workloads():
    wls = []
    for m, k, n in GEMM_SHAPES:
        wls.append(Workload(f"gemm {m}x{k}x{n}", "gemm", gemm(m, k, n), flops=2.0 * m * k * n,
                            quick=(m, k, n) == (256, 256, 256)))
    wls += [
        Workload("mlp 784-1024-1024-10 b64", "model", mlp, quick=True),
        Workload("resnet18 b1", "model", torchvision_model("resnet18", 1)),
        Workload("resnet18 b8", "model", torchvision_model("resnet18", 8)),
        Workload("resnet50 b1", "model", torchvision_model("resnet50", 1)),
        Workload("resnet50 b8", "model", torchvision_model("resnet50", 8)),
        Workload("mobilenet_v2 b1", "model", torchvision_model("mobilenet_v2", 1)),
        Workload("bert-base encoder s128 b1", "model", bert_base),
        Workload("gpt2 block s128 b1", "model", gpt2_block),
        Workload("train mlp b64", "train", "mlp", quick=True),
        Workload("train transformer b16 s64", "train", "transformer"),
    ]
    return wls
