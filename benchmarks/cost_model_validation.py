"""Does the cost model rank kernels the way this CPU does?

For each kernel (GEMMs, elementwise chains, reductions, convolutions,
pooling, softmax, layer_norm) the script writes a paddle module, asks
`paddle-opt --paddle-cost-report` for its predicted time (the sum of its
ops' roofline times on a device spec) and measures the median time of
`paddle-run --bench N`, then reports the Spearman rank correlation between
the two. The spec is measured first with `paddle-calibrate` unless --spec
names one. Not a test: a run takes a minute or two.

    .venv/bin/python benchmarks/cost_model_validation.py [--runs 20]
        [--spec SPEC.json | --quick-calibrate] [--markdown]
"""

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "build" / "bin"


def t(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def binary(name, op, shape):
    ty = t(shape)
    body = f"  %0 = paddle.{op} %a, %b : {ty}, {ty} -> {ty}\n  return %0 : {ty}"
    return name, [shape, shape], f"({ty}, {ty}) -> {ty}", body


def gemm(m, k, n):
    a, b, r = t([m, k]), t([k, n]), t([m, n])
    body = (f"  %0 = paddle.matmul %a, %b : {a}, {b} -> {r}\n"
            f"  return %0 : {r}")
    return f"matmul {m}x{k}x{n}", [[m, k], [k, n]], f"({a}, {b}) -> {r}", body


def chain(n, ops):
    ty = t([n])
    lines, prev = [], "%a"
    for i, op in enumerate(ops):
        if op in ("add", "mul", "sub"):
            lines.append(f"  %{i} = paddle.{op} {prev}, %b : {ty}, {ty} -> {ty}")
        else:
            lines.append(f"  %{i} = paddle.{op} {prev} : {ty} -> {ty}")
        prev = f"%{i}"
    lines.append(f"  return {prev} : {ty}")
    return (f"chain {'+'.join(ops)} {n}", [[n], [n]], f"({ty}, {ty}) -> {ty}",
            "\n".join(lines))


def unary_kernel(name, in_shape, out_shape, op_text):
    a, r = t(in_shape), t(out_shape)
    body = f"  %0 = {op_text} : {a} -> {r}\n  return %0 : {r}"
    return name, [in_shape], f"({a}) -> {r}", body


def conv(n, c, h, o, k, stride=1, pad=0):
    oh = (h + 2 * pad - k) // stride + 1
    x, w, r = t([n, c, h, h]), t([o, c, k, k]), t([n, o, oh, oh])
    attrs = (f"{{strides = array<i64: {stride}, {stride}>, padding = "
             f"array<i64: {pad}, {pad}, {pad}, {pad}>}}")
    body = (f"  %0 = paddle.conv2d %a, %b {attrs} : {x}, {w} -> {r}\n"
            f"  return %0 : {r}")
    return (f"conv2d {n}x{c}x{h}x{h} * {o}x{c}x{k}x{k} s{stride}",
            [[n, c, h, h], [o, c, k, k]], f"({x}, {w}) -> {r}", body)


def layer_norm(rows, cols):
    x, v = t([rows, cols]), t([cols])
    body = (f"  %0 = paddle.layer_norm %a scale %b bias %c axes = [-1] : "
            f"{x}, {v}, {v} -> {x}\n  return %0 : {x}")
    return (f"layer_norm {rows}x{cols}", [[rows, cols], [cols], [cols]],
            f"({x}, {v}, {v}) -> {x}", body)


def kernels():
    # 1024^3 is left out: our untiled GEMM takes ~10 s per call there.
    yield from (gemm(s, s, s) for s in (32, 64, 128, 256, 512))
    yield gemm(1, 1024, 1024)
    yield gemm(2048, 64, 64)
    yield binary("add 1M", "add", [1 << 20])
    yield binary("mul 256x256", "mul", [256, 256])
    yield chain(1 << 20, ["add", "exp", "mul"])
    yield chain(1 << 18, ["tanh", "sigmoid", "add"])
    yield chain(1 << 22, ["add", "mul", "sub", "relu"])
    yield unary_kernel("reduce_sum 1024x1024 axis 1", [1024, 1024], [1024],
                       "paddle.reduce_sum %a axes = [1]")
    yield unary_kernel("reduce_max 4096x256 axis 0", [4096, 256], [256],
                       "paddle.reduce_max %a axes = [0]")
    yield unary_kernel("reduce_sum 64x64 all", [64, 64], [],
                       "paddle.reduce_sum %a axes = [0, 1]")
    yield conv(1, 3, 224, 16, 3, 2, 1)
    yield conv(1, 64, 56, 64, 3, 1, 1)
    yield conv(1, 16, 32, 16, 1)
    yield unary_kernel("max_pool2d 1x64x112x112 k3 s2", [1, 64, 112, 112],
                       [1, 64, 55, 55],
                       "paddle.max_pool2d %a {kernel = array<i64: 3, 3>, "
                       "strides = array<i64: 2, 2>}")
    yield unary_kernel("softmax 512x1024", [512, 1024], [512, 1024],
                       "paddle.softmax %a axis = -1")
    yield unary_kernel("softmax 64x128", [64, 128], [64, 128],
                       "paddle.softmax %a axis = -1")
    yield layer_norm(512, 768)
    yield layer_norm(32, 64)


def module_text(signature, body, arity):
    names = ["%a", "%b", "%c"][:arity]
    ins, out = signature.split(" -> ")
    types = ins.strip("()").split(", ")
    args = ", ".join(f"{n}: {ty}" for n, ty in zip(names, types))
    return f"func.func @main({args}) -> {out} {{\n{body}\n}}\n"


def predicted_us(module, spec):
    out = subprocess.run([str(BIN / "paddle-opt"), str(module),
                          f"--paddle-set-target=device={spec}",
                          "--paddle-cost-report", "-o", "/dev/null"], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"total @main: (\S+) FLOPs, (\S+) bytes, (\S+) us", out)
    if not m:
        raise RuntimeError(f"no total in the cost report:\n{out}")
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def measured_us(module, inputs, runs, tmp):
    args = []
    for i, x in enumerate(inputs):
        path = tmp / f"in{i}.npy"
        np.save(path, x)
        args += ["--input", str(path)]
    out = subprocess.run([str(BIN / "paddle-run"), str(module), *args,
                          "--bench", str(runs)], capture_output=True,
                         text=True, check=True).stdout
    return float(out.split("median ")[1].split(" ms")[0]) * 1e3


def ranks(values):
    """Ranks from 1, ties sharing the mean of their positions."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="mergesort")
    r = np.empty(len(values))
    r[order] = np.arange(1, len(values) + 1)
    for v in np.unique(values):
        tie = values == v
        r[tie] = r[tie].mean()
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    return float((rx * ry).sum() / np.sqrt((rx * rx).sum() * (ry * ry).sum()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--spec", help="device spec (default: calibrate now)")
    parser.add_argument("--quick-calibrate", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        spec = args.spec
        if spec is None:
            spec = str(tmp / "calibrated.json")
            cmd = [str(BIN / "paddle-calibrate"), "-o", spec]
            if args.quick_calibrate:
                cmd.append("--quick")
            print(subprocess.run(cmd, capture_output=True, text=True,
                                 check=True).stderr.strip())
        rows = []
        for name, shapes, signature, body in kernels():
            module = tmp / "m.mlir"
            module.write_text(module_text(signature, body, len(shapes)))
            inputs = [rng.standard_normal(s).astype(np.float32)
                      for s in shapes]
            flops, nbytes, pred = predicted_us(module, spec)
            meas = measured_us(module, inputs, args.runs, tmp)
            rows.append((name, flops, nbytes, pred, meas))
            if not args.markdown:
                print(f"{name:36s} {flops:12.4g} {nbytes:12.4g} "
                      f"{pred:10.1f} {meas:10.1f}", flush=True)

    rho = spearman([r[3] for r in rows], [r[4] for r in rows])
    if args.markdown:
        print("| kernel | FLOPs | bytes | predicted us | measured us | "
              "measured / predicted |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, flops, nbytes, pred, meas in rows:
            print(f"| {name} | {flops:.3g} | {nbytes:.3g} | {pred:.1f} | "
                  f"{meas:.1f} | {meas / pred:.2f} |")
        print()
    print(f"Spearman rank correlation (predicted vs measured, "
          f"{len(rows)} kernels): {rho:.3f}")


if __name__ == "__main__":
    main()
