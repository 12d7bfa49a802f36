"""Gradient rules of paddle-autodiff checked against finite differences.

For every op with a gradient rule, a few random shapes (seeded) in float64:
the module holds @f (the op), a request @f_vjp, and @main, which calls the
generated @f_vjp at x with random cotangents w and at x +- h v for random
directions v. @f_vjp computes @f first (a clone of its ops) and returns its
results, which is where the f(x +- h v) below come from; only @f_vjp is
compiled, which halves the JIT time. The check is

    <w, (f(x + h v) - f(x - h v)) / 2h>  ==  sum_i <grad_i, v_i>

so the finite differences run OUR compiled @f, independently of the rules.
Second derivatives check the same way with @f_vjp as the function and a
request on it (grad-of-grad). Tolerance: |fd - ad| <= 1e-6 * max(1, |fd|)
(h = 1e-5; central differences are O(h^2) ~ 1e-10 here). All checks of a
group share one module and one paddle-run call, to keep JIT time down.
"""

import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pytest

from paddle_testing import PADDLE_OPT, run_module, tensor_type

H = 1e-5
RTOL = 1e-6
DIRECTIONS = 2


@dataclass
class Case:
    """@f(%a0, %a1, ...) = `body` (lines defining %r), returning `out_shape`."""
    name: str
    body: str
    inputs: list
    out_shape: tuple
    out_dtype: str = "f64"
    wrt: list = None
    h: float = H
    rtol: float = RTOL
    dynamic: tuple = ()  # dims written as `?` in every type
    types: list = field(default_factory=list)

    def __post_init__(self):
        self.types = [tensor_type(x.shape, x.dtype, self.dynamic)
                      for x in self.inputs]
        self.rtype = tensor_type(self.out_shape, self.out_dtype, self.dynamic)
        if self.wrt is None:
            self.wrt = [i for i, x in enumerate(self.inputs)
                        if x.dtype == np.float64]


def _fmt(text, case):
    subst = {f"T{i}": t for i, t in enumerate(case.types)}
    subst["R"] = case.rtype
    return text.format(**subst)


def _func_text(case, k):
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(case.types))
    rtype = case.rtype
    lines = [f"func.func private @f{k}({args}) -> {rtype} {{"]
    lines += ["  " + line for line in _fmt(case.body, case).strip().splitlines()]
    lines += [f"  return %r : {rtype}", "}"]
    return "\n".join(lines)


def _sig(types):
    return "(" + ", ".join(types) + ")"


class _Check:
    """One FD check of function `fn` (arg types, result types) with respect to
    the args `wrt`, through the request `req`."""

    def __init__(self, name, fn, arg_types, res_types, wrt, args, cts, rng,
                 h, rtol):
        self.name, self.fn, self.wrt, self.h, self.rtol = name, fn, wrt, h, rtol
        self.arg_types, self.res_types = arg_types, res_types
        self.args, self.cts = args, cts
        self.dirs = [[rng.standard_normal(args[i].shape) for i in wrt]
                     for _ in range(DIRECTIONS)]

    def request(self, req, primal_arg_types=None):
        wrt_types = [self.arg_types[i] for i in self.wrt]
        wrt = ", ".join(str(i) for i in self.wrt)
        return (f"func.func private @{req}{_sig(self.arg_types + self.res_types)}"
                f" -> {_sig(self.res_types + wrt_types)} attributes "
                f"{{paddle.vjp_of = @{self.fn}, paddle.wrt = array<i64: {wrt}>}}")

    def perturbed(self, j, sign):
        args = [a.copy() for a in self.args]
        for i, v in zip(self.wrt, self.dirs[j]):
            args[i] = args[i] + sign * self.h * v
        return args


def _scalar(a):
    return np.asarray(a, dtype=np.float64)


def run_checks(tmp_path, checks):
    """Builds one module calling every check's request and perturbed
    function, runs it, and returns a list of failure messages."""
    funcs, main_args, main_inputs, body, rets = [], [], [], [], []

    def arg(value, type_):
        main_args.append(f"%in{len(main_inputs)}: {type_}")
        main_inputs.append(value)
        return f"%in{len(main_inputs) - 1}"

    layout = []
    for c, (check, texts, req) in enumerate(checks):
        funcs += texts
        funcs.append(check.request(req))
        # The gradient at x.
        names = [arg(a, t) for a, t in zip(check.args, check.arg_types)]
        cts = [arg(w, t) for w, t in zip(check.cts, check.res_types)]
        names += cts
        out_types = check.res_types + [check.arg_types[i] for i in check.wrt]
        body.append(f"  %g{c}:{len(out_types)} = func.call @{req}("
                    f"{', '.join(names)}) : {_sig(check.arg_types + check.res_types)}"
                    f" -> {_sig(out_types)}")
        first = len(rets)
        rets += [(f"%g{c}#{i}", t) for i, t in enumerate(out_types)]
        evals = []
        for j in range(DIRECTIONS):
            for sign in (1, -1):
                names = [arg(a, t) for a, t in
                         zip(check.perturbed(j, sign), check.arg_types)]
                names += cts
                tag = f"%p{c}_{j}_{'p' if sign > 0 else 'm'}"
                body.append(f"  {tag}:{len(out_types)} = func.call @{req}("
                            f"{', '.join(names)}) : "
                            f"{_sig(check.arg_types + check.res_types)} -> "
                            f"{_sig(out_types)}")
                evals.append(len(rets))
                rets += [(f"{tag}#{i}", t)
                         for i, t in enumerate(check.res_types)]
        layout.append((first, evals))
    main = [f"func.func @main({', '.join(main_args)}) -> "
            f"{_sig([t for _, t in rets])} {{"] + body
    main.append(f"  return {', '.join(v for v, _ in rets)} : "
                f"{', '.join(t for _, t in rets)}")
    main.append("}")
    text = "\n".join(funcs + main) + "\n"
    (tmp_path / "request.mlir").write_text(text)
    # @f is private and only reached through the generated function.
    proc = subprocess.run([str(PADDLE_OPT), "--paddle-autodiff", "--symbol-dce",
                           str(tmp_path / "request.mlir")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    outs = run_module(tmp_path, proc.stdout, main_inputs, function="main")

    failures = []
    for (check, _, _), (first, evals) in zip(checks, layout):
        nres = len(check.res_types)
        grads = outs[first + nres:first + nres + len(check.wrt)]
        for j in range(DIRECTIONS):
            plus = outs[evals[2 * j]:evals[2 * j] + nres]
            minus = outs[evals[2 * j + 1]:evals[2 * j + 1] + nres]
            fd = sum(np.sum(_scalar(w) * (_scalar(p) - _scalar(m)))
                     for w, p, m in zip(check.cts, plus, minus)) / (2 * check.h)
            ad = sum(np.sum(g * v) for g, v in zip(grads, check.dirs[j]))
            if not abs(fd - ad) <= check.rtol * max(1.0, abs(fd)):
                failures.append(f"{check.name}: direction {j}: "
                                f"finite differences {fd!r}, gradient {ad!r}")
    return failures


def first_order(cases, rng):
    checks = []
    for k, case in enumerate(cases):
        rtype = case.rtype
        ct = rng.standard_normal(case.out_shape)
        check = _Check(case.name, f"f{k}", case.types, [rtype], case.wrt,
                       case.inputs, [ct], rng, case.h, case.rtol)
        checks.append((check, [_func_text(case, k)], f"f{k}_vjp"))
    return checks


def second_order(cases, rng):
    """Checks the gradient of @f{k}_vjp (the generated gradient function)
    with respect to the same args: a request on a request."""
    checks = []
    for k, case in enumerate(cases):
        rtype = case.rtype
        ct = rng.standard_normal(case.out_shape)
        first = _Check(case.name, f"f{k}", case.types, [rtype], case.wrt,
                       case.inputs, [ct], rng, case.h, case.rtol)
        grad_types = [case.types[i] for i in case.wrt]
        cts = [rng.standard_normal(case.out_shape)]
        cts += [rng.standard_normal(case.inputs[i].shape) for i in case.wrt]
        second = _Check(case.name + " (second order)", f"f{k}_vjp",
                        case.types + [rtype], [rtype] + grad_types, case.wrt,
                        case.inputs + [ct], cts, rng, case.h, case.rtol)
        texts = [_func_text(case, k), first.request(f"f{k}_vjp")]
        checks.append((second, texts, f"f{k}_vjp2"))
    return checks


# Compile time grows with the module, so each group runs as two modules at
# once (the machines have two cores).
WORKERS = 2


def assert_checks(tmp_path, checks):
    chunks = [checks[i::WORKERS] for i in range(WORKERS)]
    dirs = [tmp_path / f"part{i}" for i in range(WORKERS)]
    for d in dirs:
        d.mkdir()
    with ThreadPoolExecutor(WORKERS) as pool:
        results = pool.map(run_checks, dirs, chunks)
    failures = [f for r in results for f in r]
    assert not failures, "\n".join(failures)


#===------------------------------------------------------------------------===#
# Cases
#===------------------------------------------------------------------------===#

def shapes(rng, count=2, max_rank=3):
    out = []
    for _ in range(count):
        rank = int(rng.integers(1, max_rank + 1))
        out.append(tuple(int(d) for d in rng.integers(1, 5, size=rank)))
    return out


def away_from_zero(rng, shape, low=0.2):
    x = rng.uniform(low, 2.0, size=shape)
    return x * rng.choice([-1.0, 1.0], size=shape)


def unary_cases(rng):
    cases = []
    domains = {
        "neg": lambda s: rng.standard_normal(s),
        "abs": lambda s: away_from_zero(rng, s),
        "exp": lambda s: rng.standard_normal(s),
        "log": lambda s: rng.uniform(0.5, 2.0, s),
        "sqrt": lambda s: rng.uniform(0.5, 2.0, s),
        "rsqrt": lambda s: rng.uniform(0.5, 2.0, s),
        "tanh": lambda s: rng.standard_normal(s),
        "sigmoid": lambda s: rng.standard_normal(s),
        "relu": lambda s: away_from_zero(rng, s),
        "erf": lambda s: rng.standard_normal(s),
        "sin": lambda s: rng.standard_normal(s),
        "cos": lambda s: rng.standard_normal(s),
        "gelu": lambda s: rng.standard_normal(s),
        # Piecewise constant: the gradient is 0 away from the jumps.
        "floor": lambda s: rng.integers(-3, 3, s) + rng.uniform(0.2, 0.8, s),
        "ceil": lambda s: rng.integers(-3, 3, s) + rng.uniform(0.2, 0.8, s),
        "round": lambda s: rng.integers(-3, 3, s) + rng.uniform(0.1, 0.4, s),
        "sign": lambda s: away_from_zero(rng, s),
    }
    for op, domain in domains.items():
        for shape in shapes(rng):
            cases.append(Case(f"{op} {shape}", f"%r = paddle.{op} %a0 : {{T0}} -> {{R}}",
                              [domain(shape)], shape))
    shape = shapes(rng, 1)[0]
    cases.append(Case(f"gelu approximate {shape}",
                      "%r = paddle.gelu %a0 {{approximate}} : {T0} -> {R}",
                      [rng.standard_normal(shape)], shape))
    # f64 -> f32 -> f64: the rounding to f32 needs a larger step.
    cases.append(Case("cast f64->f32->f64",
                      "%c = paddle.cast %a0 : {T0} -> tensor<3x4xf32>\n"
                      "%r = paddle.cast %c : tensor<3x4xf32> -> {R}",
                      [rng.standard_normal((3, 4))], (3, 4), h=1e-2, rtol=1e-4))
    return cases


def broadcast_pair(rng):
    """Two random shapes that broadcast, with size-1 and missing dims."""
    rank = int(rng.integers(1, 4))
    full = [int(d) for d in rng.integers(2, 5, size=rank)]
    a = [d if rng.random() < 0.7 else 1 for d in full]
    b = [d if rng.random() < 0.7 else 1 for d in full]
    b = b[int(rng.integers(0, rank)):]
    if rng.random() < 0.5:
        a, b = b, a
    return tuple(a), tuple(b)


def binary_cases(rng):
    cases = []
    for op in ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "rem"]:
        for _ in range(2):
            sa, sb = broadcast_pair(rng)
            out = np.broadcast_shapes(sa, sb)
            if op in ("div",):
                a, b = rng.standard_normal(sa), away_from_zero(rng, sb, 0.5)
            elif op == "pow":
                a, b = rng.uniform(0.5, 2.0, sa), rng.standard_normal(sb)
            elif op in ("maximum", "minimum"):
                # Keep the two operands at least 0.1 apart.
                a = rng.standard_normal(sa)
                b = np.broadcast_to(a, out)[tuple(slice(0, 1) if d == 1 else slice(None)
                                                  for d in (1,) * (len(out) - len(sb)) + sb)]
                b = rng.standard_normal(sb)
                gap = np.abs(np.broadcast_to(a, out) - np.broadcast_to(b, out))
                if gap.min() < 0.1:
                    b = b + 5.0 * rng.choice([-1.0, 1.0])
            elif op == "rem":
                b = rng.uniform(0.5, 1.5, sb) * rng.choice([-1.0, 1.0], size=sb)
                q = rng.integers(-3, 3, size=out) + rng.uniform(0.2, 0.8, size=out)
                a = rng.standard_normal(sa)
                a = None
                # lhs = b * (integer + fraction): quotients stay off integers.
                sa = out
                a = np.broadcast_to(b, out) * q
            else:
                a, b = rng.standard_normal(sa), rng.standard_normal(sb)
            cases.append(Case(f"{op} {sa} {sb}",
                              f"%r = paddle.{op} %a0, %a1 : {{T0}}, {{T1}} -> {{R}}",
                              [a, b], out))
    sa, sb = broadcast_pair(rng)
    out = np.broadcast_shapes(sa, sb)
    cond = rng.random(out) < 0.5
    cases.append(Case(f"select {sa} {sb}",
                      "%r = paddle.select %a2, %a0, %a1 : {T2}, {T0}, {T1} -> {R}",
                      [rng.standard_normal(sa), rng.standard_normal(sb), cond], out))
    return cases


def matmul_cases(rng):
    cases = []
    m, k, n = (int(d) for d in rng.integers(2, 5, size=3))
    for sa, sb, out in [((m, k), (k, n), (m, n)),
                        ((3, m, k), (k, n), (3, m, n)),
                        # batch folded into the rows for the matrix's gradient
                        ((2, 3, m, k), (k, n), (2, 3, m, n)),
                        ((3, m, k), (k,), (3, m)),
                        ((2, 1, m, k), (3, k, n), (2, 3, m, n)),
                        ((k,), (2, k, n), (2, n)),
                        ((m, k), (k,), (m,)),
                        ((k,), (k,), ())]:
        cases.append(Case(f"matmul {sa} {sb}",
                          "%r = paddle.matmul %a0, %a1 : {T0}, {T1} -> {R}",
                          [rng.standard_normal(sa), rng.standard_normal(sb)], out))
    return cases


def reduction_cases(rng):
    cases = []
    for op in ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_mean"]:
        for axes, keep in [(None, False), ([1], False), ([0, -1], True)]:
            shape = tuple(int(d) for d in rng.integers(2, 5, size=3))
            x = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], size=shape)
            if axes is None:
                out = ()
            else:
                norm = [a % 3 for a in axes]
                out = tuple(1 if i in norm else d for i, d in enumerate(shape)
                            if keep or i not in norm)
            attr = (f" axes = [{', '.join(map(str, axes))}]" if axes else "") + \
                (" keepdims" if keep else "")
            cases.append(Case(f"{op} {shape} axes={axes} keepdims={keep}",
                              f"%r = paddle.{op} %a0{attr} : {{T0}} -> {{R}}",
                              [x], out))
    return cases


def shape_cases(rng):
    cases = []
    a, b, c = (int(d) for d in rng.integers(2, 5, size=3))
    x = rng.standard_normal((a, b, c))
    cases.append(Case("reshape", "%r = paddle.reshape %a0 shape = [-1, {c}] : {{T0}} -> {{R}}"
                      .format(c=c), [x], (a * b, c)))
    cases.append(Case("broadcast_to",
                      "%r = paddle.broadcast_to %a0 shape = [2, {a}, {b}, {c}] : {{T0}} -> {{R}}"
                      .format(a=a, b=b, c=c), [rng.standard_normal((a, 1, c))], (2, a, b, c)))
    cases.append(Case("transpose", "%r = paddle.transpose %a0 perm = [2, 0, 1] : {T0} -> {R}",
                      [x], (c, a, b)))
    n = int(rng.integers(5, 9))
    y = rng.standard_normal((n, b))
    m0 = len(range(1, n, 2))
    cases.append(Case("slice strided", "%r = paddle.slice %a0 start = [1, 0] limit = [100, {b}] "
                      "stride = [2, 1] : {{T0}} -> {{R}}".format(b=b), [y], (m0, b)))
    m1 = len(range(1, n - 1, 3))
    cases.append(Case("slice inner", "%r = paddle.slice %a0 start = [1, 1] limit = [{l}, {b}] "
                      "stride = [3, 2] : {{T0}} -> {{R}}".format(l=n - 1, b=b), [y],
                      (m1, len(range(1, b, 2)))))
    cases.append(Case("concat", "%r = paddle.concat %a0, %a1, %a0 axis = -1 : {T0}, {T1}, {T0} -> {R}",
                      [rng.standard_normal((a, b)), rng.standard_normal((a, c))], (a, 2 * b + c)))
    cases.append(Case("pad", "%r = paddle.pad %a0 low = [1, 0] high = [2, 3] value = 0.5 : f64 "
                      ": {T0} -> {R}", [rng.standard_normal((a, b))], (a + 3, b + 3)))
    idx = rng.integers(-b, b, size=(2, 3)).astype(np.int64)
    cases.append(Case("gather (repeated, negative indices)",
                      "%r = paddle.gather %a0, %a1 axis = 1 : {T0}, {T1} -> {R}",
                      [rng.standard_normal((a, b, c)), idx], (a, 2, 3, c)))
    sidx = rng.integers(0, a, size=(4,)).astype(np.int32)
    cases.append(Case("scatter_add",
                      "%r = paddle.scatter_add %a0, %a1, %a2 axis = 0 : {T0}, {T1}, {T2} -> {R}",
                      [rng.standard_normal((a, c)), sidx, rng.standard_normal((4, c))], (a, c)))
    return cases


def normalization_cases(rng):
    cases = []
    for shape, axis in [((3, 5), -1), ((2, 4, 3), 1)]:
        x = rng.standard_normal(shape)
        for op in ["softmax", "log_softmax"]:
            cases.append(Case(f"{op} {shape} axis={axis}",
                              f"%r = paddle.{op} %a0 axis = {axis} : {{T0}} -> {{R}}",
                              [x], shape))
    n, d = (int(v) for v in rng.integers(2, 6, size=2))
    x = rng.standard_normal((n, 3, d))
    cases.append(Case("layer_norm scale bias",
                      "%r = paddle.layer_norm %a0 scale %a1 bias %a2 axes = [-1] "
                      ": {T0}, {T1}, {T2} -> {R}",
                      [x, rng.standard_normal((d,)), rng.standard_normal((3, 1))], x.shape))
    cases.append(Case("layer_norm two axes",
                      "%r = paddle.layer_norm %a0 axes = [1, 2] {{epsilon = 1.0e-3 : f64}} "
                      ": {T0} -> {R}", [x], x.shape))
    c = int(rng.integers(2, 5))
    x = rng.standard_normal((2, c, 3, 2))
    cases.append(Case("batch_norm_inference",
                      "%r = paddle.batch_norm_inference %a0, %a1, %a2, %a3, %a4 "
                      "{{epsilon = 1.0e-3 : f64}} : {T0}, {T1}, {T2}, {T3}, {T4} -> {R}",
                      [x, rng.standard_normal(c), rng.standard_normal(c),
                       rng.standard_normal(c), rng.uniform(0.5, 2.0, c)], x.shape))
    return cases


def conv_out(size, k, stride, lo, hi, dil):
    return (size + lo + hi - dil * (k - 1) - 1) // stride + 1


def pool_out(size, k, stride, lo, hi, ceil):
    span = size + lo + hi - k
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + lo:
        out -= 1
    return out


def i64s(values):
    return "array<i64: " + ", ".join(str(v) for v in values) + ">"


def nn_cases(rng):
    cases = []
    for strides, pad, dil, groups in [((1, 1), (0, 0, 0, 0), (1, 1), 1),
                                      ((2, 1), (1, 0, 2, 1), (1, 1), 1),
                                      ((2, 2), (1, 1, 1, 1), (2, 1), 2),
                                      ((1, 3), (3, 0, 0, 2), (1, 2), 3)]:
        n = int(rng.integers(1, 3))
        c, o = groups * int(rng.integers(1, 3)), groups * int(rng.integers(1, 3))
        kh, kw = (int(v) for v in rng.integers(1, 4, size=2))
        h, w = (int(v) for v in rng.integers(5, 9, size=2))
        out = (n, o, conv_out(h, kh, strides[0], pad[0], pad[2], dil[0]),
               conv_out(w, kw, strides[1], pad[1], pad[3], dil[1]))
        attrs = (f"strides = {i64s(strides)}, padding = {i64s(pad)}, "
                 f"dilations = {i64s(dil)}, groups = {groups}")
        cases.append(Case(f"conv2d {attrs}",
                          f"%r = paddle.conv2d %a0, %a1 {{{{{attrs}}}}} : {{T0}}, {{T1}} -> {{R}}",
                          [rng.standard_normal((n, c, h, w)),
                           rng.standard_normal((o, c // groups, kh, kw))], out))
    for op, kernel, strides, pad, ceil, extra in [
            ("max_pool2d", (3, 3), (1, 1), (1, 1, 1, 1), False, ""),
            ("max_pool2d", (3, 2), (2, 1), (1, 0, 0, 1), True, ""),
            ("avg_pool2d", (2, 3), (2, 2), (1, 1, 1, 1), True, ""),
            ("avg_pool2d", (3, 3), (2, 1), (1, 0, 1, 1), False, ", count_include_pad")]:
        h, w = (int(v) for v in rng.integers(5, 8, size=2))
        out = (2, 3, pool_out(h, kernel[0], strides[0], pad[0], pad[2], ceil),
               pool_out(w, kernel[1], strides[1], pad[1], pad[3], ceil))
        attrs = (f"kernel = {i64s(kernel)}, strides = {i64s(strides)}, "
                 f"padding = {i64s(pad)}" + (", ceil_mode" if ceil else "") + extra)
        cases.append(Case(f"{op} {attrs}",
                          f"%r = paddle.{op} %a0 {{{{{attrs}}}}} : {{T0}} -> {{R}}",
                          [rng.standard_normal((2, 3, h, w))], out))
    return cases


#===------------------------------------------------------------------------===#
# Tests
#===------------------------------------------------------------------------===#

def test_unary(tmp_path):
    rng = np.random.default_rng(1)
    assert_checks(tmp_path, first_order(unary_cases(rng), rng))


def test_binary(tmp_path):
    rng = np.random.default_rng(2)
    assert_checks(tmp_path, first_order(binary_cases(rng), rng))


def test_matmul(tmp_path):
    rng = np.random.default_rng(3)
    assert_checks(tmp_path, first_order(matmul_cases(rng), rng))


def test_reductions(tmp_path):
    rng = np.random.default_rng(4)
    assert_checks(tmp_path, first_order(reduction_cases(rng), rng))


def test_shape_ops(tmp_path):
    rng = np.random.default_rng(5)
    assert_checks(tmp_path, first_order(shape_cases(rng), rng))


def test_normalization(tmp_path):
    rng = np.random.default_rng(6)
    assert_checks(tmp_path, first_order(normalization_cases(rng), rng))


def dynamic_cases(rng):
    """Rules that work on dynamic dims (the leading dim is `?`)."""
    n, d = (int(v) for v in rng.integers(2, 5, size=2))
    x, y = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    dyn = dict(dynamic=(0,))
    return [
        Case("dynamic tanh + mul", "%t = paddle.tanh %a0 : {T0} -> {R}\n"
             "%r = paddle.mul %t, %a1 : {R}, {T1} -> {R}", [x, y], (n, d), **dyn),
        Case("dynamic softmax", "%r = paddle.softmax %a0 axis = -1 : {T0} -> {R}",
             [x], (n, d), **dyn),
        Case("dynamic layer_norm", "%r = paddle.layer_norm %a0 axes = [-1] : {T0} -> {R}",
             [x], (n, d), **dyn),
        # An argument the result does not depend on gets zeros of its
        # dynamic shape.
        Case("dynamic unused argument", "%r = paddle.exp %a0 : {T0} -> {R}",
             [x, y], (n, d), **dyn),
    ]


def test_dynamic_shapes(tmp_path):
    rng = np.random.default_rng(9)
    assert_checks(tmp_path, first_order(dynamic_cases(rng), rng))


def test_nn(tmp_path):
    rng = np.random.default_rng(8)
    assert_checks(tmp_path, first_order(nn_cases(rng), rng))


def second_order_cases(rng):
    """The ops the issue asks grad-of-grad for, on one random shape each."""
    rows, cols = (int(d) for d in rng.integers(2, 5, size=2))
    x = rng.standard_normal((rows, cols))
    pos = rng.uniform(0.5, 2.0, (rows, cols))
    cases = [Case(f"{op}", f"%r = paddle.{op} %a0 : {{T0}} -> {{R}}", [x], x.shape)
             for op in ["tanh", "exp", "sigmoid"]]
    cases.append(Case("mul", "%r = paddle.mul %a0, %a1 : {T0}, {T1} -> {R}",
                      [x, rng.standard_normal((cols,))], x.shape))
    cases.append(Case("div", "%r = paddle.div %a0, %a1 : {T0}, {T1} -> {R}",
                      [x, pos], x.shape))
    cases.append(Case("pow", "%r = paddle.pow %a0, %a1 : {T0}, {T1} -> {R}",
                      [pos, rng.standard_normal((rows, cols))], x.shape))
    cases.append(Case("matmul", "%r = paddle.matmul %a0, %a1 : {T0}, {T1} -> {R}",
                      [x, rng.standard_normal((cols, 3))], (rows, 3)))
    for op in ["softmax", "log_softmax"]:
        cases.append(Case(op, f"%r = paddle.{op} %a0 axis = -1 : {{T0}} -> {{R}}",
                          [x], x.shape))
    cases.append(Case("layer_norm", "%r = paddle.layer_norm %a0 scale %a1 bias %a2 "
                      "axes = [-1] : {T0}, {T1}, {T2} -> {R}",
                      [x, rng.standard_normal((cols,)), rng.standard_normal((cols,))],
                      x.shape))
    return cases


def test_second_order(tmp_path):
    rng = np.random.default_rng(7)
    assert_checks(tmp_path, second_order(second_order_cases(rng), rng))
