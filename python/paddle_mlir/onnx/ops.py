"""ONNX operator handlers: one function per op type, registered in `OPS`.

Each handler gets the `GraphImporter` (`imp`), whose current node is
`imp.node`, reads its inputs (`imp.value(i)` for IR values, `imp.known(i)`
for import-time constants and shape values), and sets its outputs. Every
attribute of every node is checked against the handler's list: an unknown
attribute, or a value the handler does not implement, is an
`OnnxImportError` naming the node, never a silently different result.
"""

import math

import numpy as np

from .importer import (FLOAT_TYPES, INT_TYPES, MLIR_TO_NUMPY, NUMPY_TO_MLIR, UNKNOWN,
                       ELEMENT_TYPES, Dim, Tensor, _type_name, arr, fmt_float, fmt_scalar,
                       is_static, tensor_type)

OPS = {}

# Folding computes shape arithmetic (and other integer/bool constants) with
# numpy at import time; float math is left to the compiler so that results
# do not depend on numpy's rounding. Larger tensors are not folded.
FOLD_LIMIT = 4096
# Import-time arrays that are not folded (a Range) become IR constants; one
# is at most what one ONNX tensor can hold (protobuf's 2 GiB).
MAX_CONST_BYTES = 2**31


def op(name, attrs=None, outputs=1):
    """Registers a handler for op `name`.

    `attrs` maps every attribute the handler understands to its default;
    `outputs` is how many outputs it can produce.
    """
    def register(fn):
        OPS[name] = (fn, dict(attrs or {}), outputs)
        return fn
    return register


def import_node(imp):
    node = imp.node
    if node.domain not in ("", "ai.onnx"):
        imp.fail(f"op domain '{node.domain}' is not supported (only the default ONNX domain)")
    entry = OPS.get(node.op_type)
    if entry is None:
        imp.fail(f"op type {node.op_type} is not supported by the ONNX importer")
    fn, spec, max_outputs = entry
    outputs = [i for i, o in enumerate(node.output) if o]
    if outputs and outputs[-1] >= max_outputs:
        imp.fail(f"output {outputs[-1]} ('{node.output[outputs[-1]]}') is not supported; "
                 f"only the first {max_outputs} output(s) of {node.op_type} are")
    fn(imp, read_attrs(imp, spec))


def read_attrs(imp, spec):
    from onnx import helper
    values = dict(spec)
    for a in imp.node.attribute:
        if a.name not in spec:
            imp.fail(f"attribute '{a.name}' is not supported")
        if a.ref_attr_name:
            imp.fail(f"attribute '{a.name}' refers to a function attribute, which is not supported")
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        values[a.name] = v
    return values


def require(imp, cond, message):
    if not cond:
        imp.fail(message)


def check_choice(imp, attrs, name, allowed):
    if attrs[name] not in allowed:
        imp.fail(f"attribute {name}={attrs[name]!r} is not supported "
                 f"(supported: {', '.join(map(repr, allowed))})")


def norm_axis(imp, axis, rank, what="axis"):
    if not -rank <= axis < rank:
        imp.fail(f"{what} {axis} is out of range for rank {rank}", unsupported=False)
    return axis + rank if axis < 0 else axis


def check_shape(imp, dims, what, allow=()):
    """The static entries of a shape input: sizes >= 0 (or a value in
    `allow`, such as Reshape's -1) whose product fits in int64. The values
    are checked here because the importer folds with numpy before any op
    exists; the ops' types then go through the dialect's size check."""
    static = [int(d) for d in dims if is_static(d)]
    shown = "[" + ", ".join(str(d) if is_static(d) else "?" for d in dims) + "]"
    bad = [d for d in static if d < 0 and d not in allow]
    if bad:
        imp.fail(f"{what} {shown} has a negative size {bad[0]}", unsupported=False)
    if math.prod(d for d in static if d >= 0) >= 2**63:
        imp.fail(f"{what} {shown} has more elements than fit in 64 bits",
                 unsupported=False)


def has_unknown(a):
    return a.dtype == object and any(x is UNKNOWN for x in a.reshape(-1))


def set_known(imp, k, result, build=None):
    """Sets output `k` to a folded numpy result.

    An object array (a shape value) keeps its dynamic dims; entries computed
    from dynamic dims (UNKNOWN) can only be turned into IR by re-running the
    op on IR values, which `build` does on demand.
    """
    result = np.asarray(result)
    if result.dtype == object:
        if all(is_static(x) for x in result.reshape(-1)):
            imp.set_output(k, const=result.astype(np.int64))
            return
        t = Tensor(sym=result)
        if has_unknown(result):
            if build is None:
                imp.fail("a value computed from dynamic dims is needed here")
            node, index = imp.node, imp.node_index
            t.lazy = (node, index, build)
        if k < len(imp.node.output) and imp.node.output[k]:
            imp.env[imp.node.output[k]] = t
        return
    imp.set_output(k, const=result)


def foldable(imp, *indices):
    """Inputs `indices` as numpy when all are known and small, else None."""
    vals = []
    for i in indices:
        if not imp.has(i):
            vals.append(None)
            continue
        k = imp.known(i)
        if k is None or k.size > FOLD_LIMIT:
            return None
        if k.dtype != object and k.dtype.kind == "f":
            return None
        vals.append(k)
    return vals


def out_type(imp, shape, elt):
    return tensor_type([None if isinstance(d, Dim) else d for d in shape], elt)


# --- elementwise ---------------------------------------------------------------

UNARY = {
    "Relu": "paddle.relu", "Sigmoid": "paddle.sigmoid", "Tanh": "paddle.tanh",
    "Erf": "paddle.erf", "Sqrt": "paddle.sqrt", "Exp": "paddle.exp", "Log": "paddle.log",
    "Abs": "paddle.abs", "Neg": "paddle.neg", "Floor": "paddle.floor",
    "Ceil": "paddle.ceil", "Round": "paddle.round", "Sin": "paddle.sin",
    "Cos": "paddle.cos", "Sign": "paddle.sign", "Not": "paddle.not",
}


def _unary(name):
    def handler(imp, attrs):
        imp.set_output(0, imp.op1(name, [imp.value(0)]))
    return handler


for _onnx_name, _paddle_name in UNARY.items():
    op(_onnx_name)(_unary(_paddle_name))


def _trunc_div(a, b):
    if isinstance(a, Dim) or isinstance(b, Dim):
        return UNKNOWN
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


FOLDERS = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
}

BINARY = {"Add": "paddle.add", "Sub": "paddle.sub", "Mul": "paddle.mul",
          "Div": "paddle.div", "And": "paddle.and", "Or": "paddle.or", "Xor": "paddle.xor"}


def _binary(onnx_name, paddle_name):
    def build(imp):
        a, b = imp.value(0), imp.value(1)
        if onnx_name == "Div" and a.dtype in INT_TYPES:
            return int_trunc_div(imp, a, b)
        return imp.op1(paddle_name, [a, b])

    def handler(imp, attrs):
        known = foldable(imp, 0, 1)
        if known is not None:
            a, b = known
            if onnx_name == "Div":
                f = np.frompyfunc(_trunc_div, 2, 1)
                res = np.asarray(f(a.astype(object), b.astype(object)))
                if a.dtype != object and b.dtype != object:
                    res = res.astype(a.dtype)
            elif onnx_name in FOLDERS:
                res = FOLDERS[onnx_name](a, b)
                if a.dtype != object and b.dtype != object:
                    res = np.asarray(res).astype(a.dtype)
            else:
                res = {"And": np.logical_and, "Or": np.logical_or,
                       "Xor": np.logical_xor}[onnx_name](a, b)
            set_known(imp, 0, res, build)
            return
        imp.set_output(0, build(imp))
    return handler


for _onnx_name, _paddle_name in BINARY.items():
    op(_onnx_name)(_binary(_onnx_name, _paddle_name))


def int_trunc_div(imp, a, b):
    """ONNX integer Div truncates toward zero; paddle.div floors."""
    q = imp.op1("paddle.div", [a, b])
    r = imp.op1("paddle.rem", [a, b])
    zero = imp.scalar(0, a.dtype)
    inexact = imp.op1("paddle.compare", [r, zero], {"direction": "#paddle<direction ne>"})
    a_neg = imp.op1("paddle.compare", [a, zero], {"direction": "#paddle<direction lt>"})
    b_neg = imp.op1("paddle.compare", [b, zero], {"direction": "#paddle<direction lt>"})
    signs = imp.op1("paddle.xor", [a_neg, b_neg])
    fix = imp.op1("paddle.and", [inexact, signs])
    q1 = imp.op1("paddle.add", [q, imp.scalar(1, a.dtype)])
    return imp.op1("paddle.select", [fix, q1, q])


def _mod(fmod):
    def f(a, b):
        if isinstance(a, Dim) or isinstance(b, Dim):
            return UNKNOWN
        if b == 0:
            return 0
        return int(math.fmod(a, b)) if fmod else a % b
    return f


@op("Mod", {"fmod": 0})
def mod(imp, attrs):
    check_choice(imp, attrs, "fmod", [0, 1])
    known = foldable(imp, 0, 1)
    if known is not None:
        a, b = known
        res = np.asarray(np.frompyfunc(_mod(attrs["fmod"]), 2, 1)(a.astype(object),
                                                                  b.astype(object)))
        if a.dtype != object and b.dtype != object:
            res = np.asarray(res).astype(a.dtype)
        set_known(imp, 0, res, lambda imp: _mod_ir(imp, attrs))
        return
    imp.set_output(0, _mod_ir(imp, attrs))


def _mod_ir(imp, attrs):
    a, b = imp.value(0), imp.value(1)
    # fmod=0 takes the sign of the divisor (numpy.mod), also for floats as
    # the ONNX reference and onnxruntime do.
    r = imp.op1("paddle.rem", [a, b])
    if attrs["fmod"] == 1:
        # C fmod takes the sign of the dividend: move a remainder whose sign
        # differs back by one divisor (exact, no rounding).
        zero = imp.scalar(0, a.dtype)
        nonzero = imp.op1("paddle.compare", [r, zero], {"direction": "#paddle<direction ne>"})
        r_neg = imp.op1("paddle.compare", [r, zero], {"direction": "#paddle<direction lt>"})
        a_neg = imp.op1("paddle.compare", [a, zero], {"direction": "#paddle<direction lt>"})
        fix = imp.op1("paddle.and", [nonzero, imp.op1("paddle.xor", [r_neg, a_neg])])
        r = imp.op1("paddle.select", [fix, imp.op1("paddle.sub", [r, b]), r])
    return r


@op("Pow")
def pow_(imp, attrs):
    a, b = imp.value(0), imp.value(1)
    if a.dtype != b.dtype:
        # ONNX allows a different exponent type; converting it is exact only
        # within the same kind (float to float, int to int).
        if (a.dtype in FLOAT_TYPES) != (b.dtype in FLOAT_TYPES):
            imp.fail(f"Pow of {a.dtype} by a {b.dtype} exponent is not supported "
                     "(mixed integer/float types)")
        b = imp.op1("paddle.cast", [b], result_types=[out_type(imp, b.shape, a.dtype)])
    imp.set_output(0, imp.op1("paddle.pow", [a, b]))


@op("Reciprocal")
def reciprocal(imp, attrs):
    x = imp.value(0)
    imp.set_output(0, imp.op1("paddle.div", [imp.scalar(1, x.dtype), x]))


COMPARE = {"Equal": "eq", "Less": "lt", "LessOrEqual": "le", "Greater": "gt",
           "GreaterOrEqual": "ge"}


def _compare(onnx_name, direction):
    def handler(imp, attrs):
        known = foldable(imp, 0, 1)
        if known is not None and all(k.dtype != object for k in known):
            f = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                 "ge": np.greater_equal}[direction]
            imp.set_output(0, const=f(*known))
            return
        imp.set_output(0, imp.op1("paddle.compare", [imp.value(0), imp.value(1)],
                                  {"direction": f"#paddle<direction {direction}>"}))
    return handler


for _onnx_name, _direction in COMPARE.items():
    op(_onnx_name)(_compare(_onnx_name, _direction))


def _variadic(paddle_name, mean=False):
    def handler(imp, attrs):
        acc = imp.value(0)
        for i in range(1, len(imp.node.input)):
            acc = imp.op1(paddle_name, [acc, imp.value(i)])
        if mean:
            acc = imp.op1("paddle.div", [acc, imp.scalar(len(imp.node.input), acc.dtype)])
        imp.set_output(0, acc)
    return handler


op("Max")(_variadic("paddle.maximum"))
op("Min")(_variadic("paddle.minimum"))
op("Sum")(_variadic("paddle.add"))
op("Mean")(_variadic("paddle.add", mean=True))


@op("Where")
def where(imp, attrs):
    known = foldable(imp, 0, 1, 2)
    if known is not None and known[0].dtype != object:
        set_known(imp, 0, np.where(*known))
        return
    imp.set_output(0, imp.op1("paddle.select", [imp.value(0), imp.value(1), imp.value(2)]))


@op("Clip")
def clip(imp, attrs):
    x = imp.value(0)
    for i, name in ((1, "paddle.maximum"), (2, "paddle.minimum")):
        if imp.has(i):
            bound = imp.value(i)
            if bound.rank != 0:
                imp.fail(f"input {i} (min/max) must be a scalar", unsupported=False)
            x = imp.op1(name, [x, bound])
    imp.set_output(0, x)


@op("Gelu", {"approximate": "none"})
def gelu(imp, attrs):
    check_choice(imp, attrs, "approximate", ["none", "tanh"])
    a = {"approximate": "unit"} if attrs["approximate"] == "tanh" else {}
    imp.set_output(0, imp.op1("paddle.gelu", [imp.value(0)], a))


@op("LeakyRelu", {"alpha": 0.01})
def leaky_relu(imp, attrs):
    x = imp.value(0)
    neg = imp.op1("paddle.compare", [x, imp.scalar(0, x.dtype)],
                  {"direction": "#paddle<direction lt>"})
    scaled = imp.op1("paddle.mul", [x, imp.scalar(attrs["alpha"], x.dtype)])
    imp.set_output(0, imp.op1("paddle.select", [neg, scaled, x]))


@op("PRelu")
def prelu(imp, attrs):
    x, slope = imp.value(0), imp.value(1)
    neg = imp.op1("paddle.compare", [x, imp.scalar(0, x.dtype)],
                  {"direction": "#paddle<direction lt>"})
    scaled = imp.op1("paddle.mul", [x, slope])
    imp.set_output(0, imp.op1("paddle.select", [neg, scaled, x]))


@op("HardSigmoid", {"alpha": 0.2, "beta": 0.5})
def hard_sigmoid(imp, attrs):
    x = imp.value(0)
    y = imp.op1("paddle.add", [imp.op1("paddle.mul", [x, imp.scalar(attrs["alpha"], x.dtype)]),
                               imp.scalar(attrs["beta"], x.dtype)])
    y = imp.op1("paddle.maximum", [y, imp.scalar(0, x.dtype)])
    imp.set_output(0, imp.op1("paddle.minimum", [y, imp.scalar(1, x.dtype)]))


@op("HardSwish")
def hard_swish(imp, attrs):
    x = imp.value(0)
    y = imp.op1("paddle.add", [imp.op1("paddle.mul", [x, imp.scalar(1 / 6, x.dtype)]),
                               imp.scalar(0.5, x.dtype)])
    y = imp.op1("paddle.maximum", [y, imp.scalar(0, x.dtype)])
    y = imp.op1("paddle.minimum", [y, imp.scalar(1, x.dtype)])
    imp.set_output(0, imp.op1("paddle.mul", [x, y]))


@op("Softsign")
def softsign(imp, attrs):
    x = imp.value(0)
    d = imp.op1("paddle.add", [imp.op1("paddle.abs", [x]), imp.scalar(1, x.dtype)])
    imp.set_output(0, imp.op1("paddle.div", [x, d]))


@op("Elu", {"alpha": 1.0})
def elu(imp, attrs):
    x = imp.value(0)
    neg = imp.op1("paddle.compare", [x, imp.scalar(0, x.dtype)],
                  {"direction": "#paddle<direction lt>"})
    e = imp.op1("paddle.sub", [imp.op1("paddle.exp", [x]), imp.scalar(1, x.dtype)])
    e = imp.op1("paddle.mul", [e, imp.scalar(attrs["alpha"], x.dtype)])
    imp.set_output(0, imp.op1("paddle.select", [neg, e, x]))


@op("Identity")
def identity(imp, attrs):
    imp.env[imp.node.output[0]] = imp.tensor(0)


@op("Dropout", {"seed": 0})
def dropout(imp, attrs):
    # Inference: the identity. Training mode (input 2) must be a constant
    # false; a mask output is not produced.
    if imp.has(2):
        training = imp.const_input(2, "training_mode")
        if bool(np.asarray(training).reshape(-1)[0]):
            imp.fail("training_mode=true is not supported (inference only)")
    imp.env[imp.node.output[0]] = imp.tensor(0)


@op("Cast", {"to": 0, "saturate": 1})
def cast(imp, attrs):
    target = ELEMENT_TYPES.get(attrs["to"])
    if target is None:
        imp.fail(f"cast to {_type_name(attrs['to'])} is not supported "
                 "(the paddle dialect has no such element type)")
    elt, np_type = target
    t = imp.tensor(0)
    if t.const is not None and np_type is not None and t.const.dtype.kind != "f":
        imp.set_output(0, const=t.const.astype(np_type))
        return
    if t.const is not None and np_type is not None and t.const.size <= FOLD_LIMIT:
        # Float -> anything: numpy's astype truncates toward zero, as ONNX.
        with np.errstate(invalid="ignore"):
            imp.set_output(0, const=t.const.astype(np_type))
        return
    if t.sym is not None and elt == "i64":
        imp.env[imp.node.output[0]] = t
        return
    x = imp.value(0)
    if x.dtype == elt:
        imp.set_output(0, x)
        return
    imp.set_output(0, imp.op1("paddle.cast", [x], result_types=[out_type(imp, x.shape, elt)]))


# --- constants and shapes --------------------------------------------------------------

@op("Constant", {"value": None, "value_float": None, "value_floats": None,
                 "value_int": None, "value_ints": None, "sparse_value": None,
                 "value_string": None, "value_strings": None})
def constant(imp, attrs):
    from onnx import numpy_helper
    given = [k for k, v in attrs.items() if v is not None]
    if len(given) != 1:
        imp.fail("exactly one value attribute must be given", unsupported=False)
    k = given[0]
    v = attrs[k]
    if k == "value":
        array = numpy_helper.to_array(v)
    elif k in ("value_float", "value_floats"):
        array = np.array(v, np.float32)
    elif k in ("value_int", "value_ints"):
        array = np.array(v, np.int64)
    else:
        imp.fail(f"attribute '{k}' is not supported (sparse and string constants)")
    if array.dtype not in NUMPY_TO_MLIR:
        imp.fail(f"constant of type {array.dtype} is not supported")
    imp.set_output(0, const=array)


@op("Shape", {"start": 0, "end": None})
def shape(imp, attrs):
    dims = list(imp.shape_of(0))
    r = len(dims)
    start = attrs["start"]
    end = r if attrs["end"] is None else attrs["end"]
    start = min(max(start + r if start < 0 else start, 0), r)
    end = min(max(end + r if end < 0 else end, 0), r)
    set_known(imp, 0, np.array(dims[start:end] if start < end else [], dtype=object)
              if dims[start:end] else np.zeros(0, np.int64))


@op("Size")
def size(imp, attrs):
    dims = imp.shape_of(0)
    if not all(is_static(d) for d in dims):
        imp.fail("Size of a tensor with dynamic dims is not supported")
    imp.set_output(0, const=np.array(math.prod(dims), np.int64))


@op("ConstantOfShape", {"value": None})
def constant_of_shape(imp, attrs):
    from onnx import numpy_helper
    value = np.zeros(1, np.float32) if attrs["value"] is None else \
        numpy_helper.to_array(attrs["value"])
    if value.size != 1:
        imp.fail("attribute 'value' must hold one element", unsupported=False)
    if value.dtype not in NUMPY_TO_MLIR:
        imp.fail(f"value of type {value.dtype} is not supported")
    target = imp.known(0)
    if target is None:
        imp.fail("the shape (input 0) must be known at import time (a constant "
                 "or computed from the shapes of tensors)", needs_constant=True)
    dims = list(target.reshape(-1))
    check_shape(imp, dims, "the shape (input 0)")
    if all(is_static(d) for d in dims):
        dims = [int(d) for d in dims]
        if math.prod(dims) <= FOLD_LIMIT:
            imp.set_output(0, const=np.full(dims, value.reshape(()), value.dtype))
            return
        scalar = imp.const_value(value.reshape(()))
        imp.set_output(0, imp.op1("paddle.broadcast_to", [scalar], {"shape": arr(dims)}))
        return
    imp.set_output(0, fill_dynamic(imp, dims, value.reshape(()), NUMPY_TO_MLIR[value.dtype]))


def fill_dynamic(imp, dims, value, elt):
    """A tensor of shape `dims` (ints and Dims) filled with `value`."""
    sizes = imp.dim_indices(dims)
    mask_type = out_type(imp, dims, "i64")
    iota = imp.op1("paddle.iota", sizes, {"dimension": "0 : i64"}, [mask_type])
    mask = imp.op1("paddle.compare", [iota, iota], {"direction": "#paddle<direction eq>"})
    scalar = imp.const_value(np.array(value, MLIR_TO_NUMPY[elt]))
    return imp.op1("paddle.select", [mask, scalar, scalar])


@op("Expand")
def expand(imp, attrs):
    target = imp.known(1)
    if target is None:
        imp.fail("the shape (input 1) must be known at import time (a constant or "
                 "computed from the shapes of tensors)", needs_constant=True)
    target = list(target.reshape(-1))
    check_shape(imp, target, "the shape (input 1)")
    known = foldable(imp, 0)
    in_shape = list(imp.shape_of(0))
    rank = max(len(target), len(in_shape))
    target = [1] * (rank - len(target)) + target
    padded = [1] * (rank - len(in_shape)) + in_shape
    attr = []
    static_out = []
    for k, (s, d) in enumerate(zip(target, padded)):
        aligned = k >= rank - len(in_shape)
        if is_static(s) and s == 1:
            attr.append(-1 if not is_static(d) else d)
            static_out.append(d)
        elif is_static(s):
            if is_static(d) and d not in (1, s):
                imp.fail(f"cannot expand dim {d} to {s}", unsupported=False)
            attr.append(s)
            static_out.append(s)
        elif not is_static(d) and aligned and s.value is d.value and s.index == d.index:
            attr.append(-1)
            static_out.append(d)
        elif is_static(d) and d != 1:
            attr.append(d)
            static_out.append(d)
        else:
            imp.fail("Expand to a dynamic size that is not a dim of the input "
                     "is not supported")
    if known is not None and known[0] is not None and all(is_static(d) for d in static_out) \
            and math.prod(static_out) <= FOLD_LIMIT:
        set_known(imp, 0, np.broadcast_to(known[0], [int(d) for d in static_out]).copy())
        return
    x = imp.value(0)
    if [d for d in static_out] == in_shape:
        imp.set_output(0, x)
        return
    imp.set_output(0, imp.op1("paddle.broadcast_to", [x], {"shape": arr(attr)}))


def reshape_value(imp, x, dims):
    """Reshapes IR value `x` to `dims` (ints, Dims, at most one -1)."""
    unknown = [k for k, d in enumerate(dims) if not is_static(d) or d == -1]
    if len(unknown) <= 1:
        # One size not known at import time: -1 recovers it from the element
        # count, whatever expression the model computes it with.
        if tuple(x.shape) == tuple(None if not is_static(d) else d for d in dims) \
                and not unknown:
            return x
        shape = [-1 if k in unknown else int(d) for k, d in enumerate(dims)]
        return imp.op1("paddle.reshape", [x], {"shape": arr(shape)})
    return reshape_dims(imp, x, dims)


def _same_dim(a, b):
    return (not is_static(a) and not is_static(b) and a.value is not None
            and b.value is not None and a.index == b.index and a.value == b.value)


def _match_groups(imp, src, dst):
    """Pairs consecutive groups of `src` and `dst` dims with equal sizes:
    a dynamic dim only with the same dim, static dims by their products."""
    pairs, i, j = [], 0, 0
    pend_s, pend_d = [], []  # size-1 dims waiting for the next group

    def add(gs, gd):
        pairs.append((pend_s + gs, pend_d + gd))
        pend_s.clear()
        pend_d.clear()
    while i < len(src) or j < len(dst):
        if i < len(src) and j < len(dst) and _same_dim(src[i], dst[j]):
            add([i], [j])
            i, j = i + 1, j + 1
            continue
        gs, gd, ps, pd = [], [], 1, 1
        while True:
            if ps == pd and gs and gd:
                break
            if (ps <= pd or j >= len(dst)) and i < len(src) and is_static(src[i]):
                gs.append(i)
                ps *= src[i]
                i += 1
            elif j < len(dst) and is_static(dst[j]):
                gd.append(j)
                pd *= dst[j]
                j += 1
            elif ps == pd and (gs or gd):
                break
            else:
                return None
        # Size-1 dims on either side join the group just closed.
        while i < len(src) and is_static(src[i]) and src[i] == 1 and \
                not (j < len(dst) and is_static(dst[j]) and dst[j] == 1):
            gs.append(i)
            i += 1
        while j < len(dst) and is_static(dst[j]) and dst[j] == 1 and \
                not (i < len(src) and is_static(src[i]) and src[i] == 1):
            gd.append(j)
            j += 1
        if gs and gd:
            add(gs, gd)
        else:
            pend_s.extend(gs)
            pend_d.extend(gd)
    if pend_s or pend_d:
        if not pairs:
            return None
        pairs[-1][0].extend(pend_s)
        pairs[-1][1].extend(pend_d)
    return pairs


def reshape_dims(imp, x, dims):
    """A reshape whose target keeps several dynamic dims of `x`: the dims
    are paired with the same dims of `x`, static ones by their products,
    and the reshape becomes tensor.collapse_shape then tensor.expand_shape
    (neither needs the dynamic sizes at import time)."""
    src = [Dim(x, k) if d is None else d for k, d in enumerate(x.shape)]
    dims = list(dims)
    if any(is_static(d) and d == -1 for d in dims):
        # -1 is the product of what the other entries leave over; that is
        # known when the dynamic dims of x all appear in the target.
        rest = [d for d in src if not any(_same_dim(d, e) for e in dims)]
        if not all(is_static(d) for d in rest):
            imp.fail("Reshape with -1 and dynamic dims in the target shape that "
                     "cannot be matched to the input's dims is not supported")
        known = math.prod(d for d in dims if is_static(d) and d != -1)
        total = math.prod(rest)
        if known == 0 or total % known:
            imp.fail(f"cannot reshape {len(src)}-D input to {dims}", unsupported=False)
        dims = [total // known if is_static(d) and d == -1 else d for d in dims]
    if any(d is UNKNOWN for d in dims):
        imp.fail("Reshape to several sizes computed at run time is not supported")
    pairs = _match_groups(imp, src, dims)
    if pairs is None:
        imp.fail("Reshape to a shape with several dynamic dims is only supported "
                 "when the dynamic dims are carried over from the input")
    mid = []
    for gs, gd in pairs:
        ds = [src[k] for k in gs]
        mid.append(math.prod(ds) if all(is_static(d) for d in ds) else None)

    out = [None if not is_static(d) else d for d in dims]
    mid_t, out_t = tensor_type(mid, x.dtype), tensor_type(out, x.dtype)
    y = x
    if len(mid) != len(src):
        y = imp.reshape_groups("tensor.collapse_shape", y, [gs for gs, _ in pairs], mid_t)
    if len(out) != len(mid):
        # Sizes of the result: static ones as numbers, a dynamic one is the
        # dynamic dim of its group in the collapsed tensor.
        sizes = [imp.dim_of(y, k) if out[j] is None else int(out[j])
                 for k, (_, gd) in enumerate(pairs) for j in gd]
        y = imp.reshape_groups("tensor.expand_shape", y, [gd for _, gd in pairs], out_t, sizes)
    return y


@op("Reshape", {"allowzero": 0})
def reshape(imp, attrs):
    check_choice(imp, attrs, "allowzero", [0, 1])
    target = imp.known(1)
    if target is None:
        imp.fail("the shape (input 1) must be known at import time (a constant or "
                 "computed from the shapes of tensors)", needs_constant=True)
    target = list(target.reshape(-1))
    in_shape = list(imp.shape_of(0))
    dims = []
    for k, e in enumerate(target):
        if is_static(e) and e == 0 and not attrs["allowzero"]:
            if k >= len(in_shape):
                imp.fail(f"shape entry {k} is 0 (copy) but the input has rank "
                         f"{len(in_shape)}", unsupported=False)
            e = in_shape[k]
        dims.append(e)
    check_shape(imp, dims, "the shape (input 1)", allow=(-1,))
    unknown = [k for k, e in enumerate(dims) if not is_static(e) or e == -1]
    known = foldable(imp, 0)
    if known is not None and not unknown:
        if math.prod(dims) != known[0].size:
            imp.fail(f"cannot reshape {known[0].size} elements (shape {list(known[0].shape)}) "
                     f"to {[int(d) for d in dims]}", unsupported=False)
        set_known(imp, 0, known[0].reshape([int(d) for d in dims]))
        return
    imp.set_output(0, reshape_value(imp, imp.value(0), dims))


@op("Flatten", {"axis": 1})
def flatten(imp, attrs):
    dims = list(imp.shape_of(0))
    r = len(dims)
    axis = attrs["axis"]
    if not -r <= axis <= r:
        imp.fail(f"axis {axis} is out of range for rank {r}", unsupported=False)
    axis = axis + r if axis < 0 else axis
    outer, inner = dims[:axis], dims[axis:]

    def prod(ds):
        return math.prod(ds) if all(is_static(d) for d in ds) else None
    po, pi = prod(outer), prod(inner)
    x = imp.value(0)
    if po is not None or pi is not None:
        shape = [-1 if po is None else po, -1 if pi is None else pi]
        imp.set_output(0, imp.op1("paddle.reshape", [x], {"shape": arr(shape)}))
        return
    # Both sides dynamic: merging dims needs no sizes.
    groups = [list(range(0, axis)), list(range(axis, r))]
    t = tensor_type([None, None], x.dtype)
    imp.set_output(0, imp.reshape_groups("tensor.collapse_shape", x, groups, t))


def axes_input(imp, i, attrs=None, name="axes"):
    """Axes from input `i` (opset 13+/18+) or from an attribute; None if absent."""
    if attrs is not None and attrs.get(name) is not None:
        if imp.has(i):
            imp.fail(f"both attribute '{name}' and input {i} give the axes", unsupported=False)
        return [int(a) for a in attrs[name]]
    if imp.has(i):
        return [int(a) for a in np.asarray(imp.const_input(i, name)).reshape(-1)]
    return None


@op("Unsqueeze")
def unsqueeze(imp, attrs):
    axes = axes_input(imp, 1)
    if axes is None:
        imp.fail("axes (input 1) is required", unsupported=False)
    in_shape = list(imp.shape_of(0))
    r = len(in_shape) + len(axes)
    axes = sorted(norm_axis(imp, a, r) for a in axes)
    dims, it = [], iter(in_shape)
    for k in range(r):
        dims.append(1 if k in axes else next(it))
    known = foldable(imp, 0)
    if known is not None:
        set_known(imp, 0, known[0].reshape(dims) if known[0].dtype != object else
                  _reshape_obj(known[0], dims), lambda imp: reshape_value(imp, imp.value(0), dims))
        return
    imp.set_output(0, reshape_value(imp, imp.value(0), dims))


def _reshape_obj(a, dims):
    return a.reshape([int(d) for d in dims])


@op("Squeeze")
def squeeze(imp, attrs):
    in_shape = list(imp.shape_of(0))
    axes = axes_input(imp, 1)
    r = len(in_shape)
    if axes is None:
        if not all(is_static(d) for d in in_shape):
            imp.fail("Squeeze without axes on a tensor with dynamic dims is not "
                     "supported (which dims are 1 is unknown)")
        axes = [k for k, d in enumerate(in_shape) if d == 1]
    axes = [norm_axis(imp, a, r) for a in axes]
    for a in axes:
        if is_static(in_shape[a]) and in_shape[a] != 1:
            imp.fail(f"cannot squeeze dim {a} of size {in_shape[a]}", unsupported=False)
    dims = [d for k, d in enumerate(in_shape) if k not in axes]
    known = foldable(imp, 0)
    if known is not None:
        set_known(imp, 0, _reshape_obj(known[0], dims),
                  lambda imp: reshape_value(imp, imp.value(0), dims))
        return
    x = imp.value(0)
    if any(not is_static(in_shape[a]) for a in axes):
        # A dynamic dim that the model says is 1: reshape checks that the
        # element counts agree at run time.
        pass
    imp.set_output(0, reshape_value(imp, x, dims))


@op("Transpose", {"perm": None})
def transpose(imp, attrs):
    r = imp.rank(0)
    perm = list(range(r))[::-1] if attrs["perm"] is None else list(attrs["perm"])
    if sorted(perm) != list(range(r)):
        imp.fail(f"perm {perm} is not a permutation of the {r} dims", unsupported=False)
    known = foldable(imp, 0)
    if known is not None:
        set_known(imp, 0, np.transpose(known[0], perm))
        return
    imp.set_output(0, imp.op1("paddle.transpose", [imp.value(0)], {"perm": arr(perm)}))


@op("Concat", {"axis": None})
def concat(imp, attrs):
    if attrs["axis"] is None:
        imp.fail("attribute 'axis' is required", unsupported=False)
    n = len(imp.node.input)
    known = foldable(imp, *range(n))
    if known is not None:
        objs = any(k.dtype == object for k in known)
        parts = [k.astype(object) if objs else k for k in known]

        def build(imp):
            return imp.op1("paddle.concat", [imp.value(i) for i in range(n)],
                           {"axis": f"{attrs['axis']} : i64"})
        set_known(imp, 0, np.concatenate(parts, axis=attrs["axis"]), build)
        return
    imp.set_output(0, imp.op1("paddle.concat", [imp.value(i) for i in range(n)],
                              {"axis": f"{attrs['axis']} : i64"}))


@op("Gather", {"axis": 0})
def gather(imp, attrs):
    axis = attrs["axis"]
    known = foldable(imp, 0, 1)
    if known is not None and known[1].dtype != object:
        data, idx = known
        n = data.shape[norm_axis(imp, axis, data.ndim)]
        if np.any((idx < -n) | (idx >= n)):
            imp.fail(f"an index is out of range for a dim of size {n}", unsupported=False)

        def build(imp):
            return imp.op1("paddle.gather", [imp.value(0), imp.value(1)],
                           {"axis": f"{axis} : i64"})
        set_known(imp, 0, np.take(data, idx, axis=axis), build)
        return
    imp.set_output(0, imp.op1("paddle.gather", [imp.value(0), imp.value(1)],
                              {"axis": f"{axis} : i64"}))


def slice_ir(imp, x, starts, ends, axes, steps):
    """ONNX Slice semantics on IR value `x` (constant starts/ends/steps)."""
    shape = list(x.shape)
    r = len(shape)
    start = [0] * r
    limit = [2**62] * r
    stride = [1] * r
    reverse = []
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = norm_axis(imp, a, r)
        n = shape[a]
        if st == 0:
            imp.fail("a slice step is 0", unsupported=False)
        if st < 0:
            if n is None:
                imp.fail(f"a negative step on dynamic dim {a} is not supported")
            reverse.append((a, list(range(n))[slice(s, e, st)]))
            continue
        if n is None:
            if s < 0 or e < 0:
                imp.fail(f"a negative start or end on dynamic dim {a} is not supported")
        else:
            s = min(max(s + n if s < 0 else s, 0), n)
            e = min(max(e + n if e < 0 else e, 0), n)
        start[a], limit[a], stride[a] = s, e, st
    if any(start[k] != 0 or stride[k] != 1 or (shape[k] is None or limit[k] < shape[k])
           for k in range(r)):
        x = imp.op1("paddle.slice", [x], {"start": arr(start), "limit": arr(limit),
                                          "stride": arr(stride)})
    for a, indices in reverse:
        idx = imp.const_value(np.array(indices, np.int64))
        x = imp.op1("paddle.gather", [x, idx], {"axis": f"{a} : i64"})
    return x


@op("Slice")
def slice_(imp, attrs):
    starts = [int(v) for v in imp.const_input(1, "starts").reshape(-1)]
    ends = [int(v) for v in imp.const_input(2, "ends").reshape(-1)]
    r = imp.rank(0)
    axes = axes_input(imp, 3) if imp.has(3) else list(range(len(starts)))
    steps = [int(v) for v in imp.const_input(4, "steps").reshape(-1)] if imp.has(4) \
        else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        imp.fail("starts, ends, axes and steps differ in length", unsupported=False)
    known = foldable(imp, 0)
    if known is not None:
        index = [slice(None)] * r
        for s, e, a, st in zip(starts, ends, axes, steps):
            index[norm_axis(imp, a, r)] = slice(s, e, st)
        set_known(imp, 0, known[0][tuple(index)],
                  lambda imp: slice_ir(imp, imp.value(0), starts, ends, axes, steps))
        return
    imp.set_output(0, slice_ir(imp, imp.value(0), starts, ends, axes, steps))


@op("Split", {"axis": 0, "num_outputs": None}, outputs=1 << 30)
def split(imp, attrs):
    shape = list(imp.shape_of(0))
    r = len(shape)
    axis = norm_axis(imp, attrs["axis"], r)
    n_out = len(imp.node.output)
    if imp.has(1):
        sizes = [int(v) for v in imp.const_input(1, "split").reshape(-1)]
        if len(sizes) != n_out:
            imp.fail(f"split has {len(sizes)} sizes for {n_out} outputs", unsupported=False)
    else:
        n = shape[axis]
        if not is_static(n):
            imp.fail(f"splitting dynamic dim {axis} without explicit sizes is not supported")
        parts = attrs["num_outputs"] or n_out
        chunk = -(-n // parts)  # the last part is smaller (opset 18)
        sizes = [min(chunk, n - k * chunk) for k in range(parts)]
    x = imp.value(0)
    offset = 0
    for k, s in enumerate(sizes):
        start = [0] * r
        limit = [2**62] * r
        start[axis], limit[axis] = offset, offset + s
        offset += s
        imp.set_output(k, imp.op1("paddle.slice", [x], {
            "start": arr(start), "limit": arr(limit), "stride": arr([1] * r)}))


@op("Trilu", {"upper": 1})
def trilu(imp, attrs):
    check_choice(imp, attrs, "upper", [0, 1])
    x = imp.value(0)
    k = int(np.asarray(imp.const_input(1, "k")).reshape(-1)[0]) if imp.has(1) else 0
    shape = list(imp.shape_of(0))
    if len(shape) < 2:
        imp.fail("the input must have rank >= 2", unsupported=False)
    dims = shape[-2:]
    sizes = imp.dim_indices(dims)
    t = out_type(imp, dims, "i64")
    rows = imp.op1("paddle.iota", sizes, {"dimension": "0 : i64"}, [t])
    cols = imp.op1("paddle.iota", sizes, {"dimension": "1 : i64"}, [t])
    diff = imp.op1("paddle.sub", [cols, rows])
    direction = "ge" if attrs["upper"] else "le"
    mask = imp.op1("paddle.compare", [diff, imp.scalar(k, "i64")],
                   {"direction": f"#paddle<direction {direction}>"})
    zero = imp.scalar(False, "i1") if x.dtype == "i1" else imp.scalar(0, x.dtype)
    imp.set_output(0, imp.op1("paddle.select", [mask, x, zero]))


@op("Pad", {"mode": "constant"})
def pad(imp, attrs):
    mode = attrs["mode"]
    if mode != "constant":
        imp.fail(f"attribute mode={mode!r} is not supported (only 'constant')")
    x = imp.value(0)
    r = x.rank
    pads = [int(v) for v in imp.const_input(1, "pads").reshape(-1)]
    axes = axes_input(imp, 3) if imp.has(3) else list(range(r))
    axes = [norm_axis(imp, a, r) for a in axes]
    if len(pads) != 2 * len(axes):
        imp.fail(f"pads has {len(pads)} entries for {len(axes)} axes", unsupported=False)
    low, high = [0] * r, [0] * r
    for k, a in enumerate(axes):
        low[a], high[a] = pads[k], pads[k + len(axes)]
    value = 0
    if imp.has(2):
        cv = np.asarray(imp.const_input(2, "constant_value")).reshape(-1)
        if cv.size != 1:
            imp.fail("constant_value must be a scalar", unsupported=False)
        value = cv[0].item()
    # Negative pads remove elements: pad the positive parts, then slice.
    y = x
    if any(v > 0 for v in low + high):
        y = imp.op1("paddle.pad", [x], {
            "low": arr([max(v, 0) for v in low]), "high": arr([max(v, 0) for v in high]),
            "value": fmt_scalar(value, x.dtype)})
    if any(v < 0 for v in low + high):
        shape = list(y.shape)
        start, limit = [0] * r, [2**62] * r
        for a in range(r):
            start[a] = max(-low[a], 0)
            if high[a] < 0:
                if shape[a] is None:
                    imp.fail(f"a negative pad on dynamic dim {a} is not supported")
                limit[a] = shape[a] + high[a]
        y = imp.op1("paddle.slice", [y], {"start": arr(start), "limit": arr(limit),
                                          "stride": arr([1] * r)})
    imp.set_output(0, y)


# --- linear algebra and nn ------------------------------------------------------------------

@op("MatMul")
def matmul(imp, attrs):
    imp.set_output(0, imp.op1("paddle.matmul", [imp.value(0), imp.value(1)]))


@op("Gemm", {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0})
def gemm(imp, attrs):
    a, b = imp.value(0), imp.value(1)
    if a.rank != 2 or b.rank != 2:
        imp.fail("A and B must be 2-D", unsupported=False)
    if attrs["transA"]:
        a = imp.op1("paddle.transpose", [a], {"perm": arr([1, 0])})
    if attrs["transB"]:
        b = imp.op1("paddle.transpose", [b], {"perm": arr([1, 0])})
    y = imp.op1("paddle.matmul", [a, b])
    if attrs["alpha"] != 1.0:
        y = imp.op1("paddle.mul", [y, imp.scalar(attrs["alpha"], y.dtype)])
    if imp.has(2) and attrs["beta"] != 0.0:
        c = imp.value(2)
        if attrs["beta"] != 1.0:
            c = imp.op1("paddle.mul", [c, imp.scalar(attrs["beta"], c.dtype)])
        y = imp.op1("paddle.add", [y, c])
    imp.set_output(0, y)


def spatial_attrs(imp, attrs, kernel, in_shape, dilations):
    """strides, [top, left, bottom, right] padding from ONNX pool/conv attributes."""
    strides = list(attrs["strides"] or [1, 1])
    if len(strides) != 2:
        imp.fail("only 2-D (NCHW) windows are supported; strides has "
                 f"{len(strides)} entries")
    auto_pad = attrs["auto_pad"]
    check_choice(imp, attrs, "auto_pad", ["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])
    if auto_pad == "NOTSET":
        pads = list(attrs["pads"] or [0, 0, 0, 0])
        if len(pads) != 4:
            imp.fail(f"pads has {len(pads)} entries; 4 expected for 2-D", unsupported=False)
        return strides, pads
    if attrs["pads"]:
        imp.fail("pads and auto_pad are both given", unsupported=False)
    if auto_pad == "VALID":
        return strides, [0, 0, 0, 0]
    begin, end = [], []
    for k in range(2):
        n = in_shape[2 + k]
        if not is_static(n):
            imp.fail(f"auto_pad={auto_pad} on a dynamic spatial dim is not supported")
        out = -(-n // strides[k])
        total = max(0, (out - 1) * strides[k] + (kernel[k] - 1) * dilations[k] + 1 - n)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return strides, begin + end


@op("Conv", {"auto_pad": "NOTSET", "dilations": None, "group": 1, "kernel_shape": None,
             "pads": None, "strides": None})
def conv(imp, attrs):
    x, w = imp.value(0), imp.value(1)
    if x.rank == 3 and w.rank == 3:
        # 1-D convolution: as 2-D over a unit H dim, then drop it.
        attrs = as_2d(attrs, [("kernel_shape", 1), ("strides", 1), ("dilations", 1),
                              ("pads", 0)])
        tx, tw = imp.tensor(0), imp.tensor(1)
        saved = tx.value, tw.value
        tx.value = unit_h(imp, x)
        wdims = [Dim(w, k) if d is None else d for k, d in enumerate(w.shape)]
        tw.value = reshape_value(imp, w, wdims[:2] + [1] + wdims[2:])
        try:
            conv(imp, attrs)
        finally:
            tx.value, tw.value = saved
        y = imp.env[imp.node.output[0]].value
        out = [Dim(y, k) if d is None else d for k, d in enumerate(y.shape)]
        imp.set_output(0, reshape_value(imp, y, out[:2] + out[3:]))
        return
    if x.rank != 4 or w.rank != 4:
        imp.fail(f"only 2-D convolution (rank-4 input) is supported; the input has rank {x.rank}")
    kernel = list(w.shape[2:])
    if attrs["kernel_shape"] is not None and list(attrs["kernel_shape"]) != kernel:
        imp.fail(f"kernel_shape {list(attrs['kernel_shape'])} differs from the weight "
                 f"shape {kernel}", unsupported=False)
    dilations = list(attrs["dilations"] or [1, 1])
    strides, pads = spatial_attrs(imp, attrs, kernel, imp.shape_of(0), dilations)
    y = imp.op1("paddle.conv2d", [x, w], {
        "strides": arr(strides), "padding": arr(pads), "dilations": arr(dilations),
        "groups": f"{attrs['group']} : i64"})
    if imp.has(2):
        b = imp.value(2)
        b = imp.op1("paddle.reshape", [b], {"shape": arr([1, -1, 1, 1])})
        y = imp.op1("paddle.add", [y, b])
    imp.set_output(0, y)


def as_2d(attrs, keys_pairs):
    """ONNX 1-D window attributes as 2-D ones over a unit H dim."""
    attrs = dict(attrs)
    for key, fill in keys_pairs:
        v = attrs.get(key)
        if v is None:
            continue
        v = list(v)
        attrs[key] = [fill] + v if key != "pads" else [0, v[0], 0, v[1]]
    return attrs


def unit_h(imp, x):
    """[N, C, W] -> [N, C, 1, W] (a 1-D op run as 2-D)."""
    dims = list(imp.shape_of(0))
    return reshape_value(imp, x, dims[:2] + [1] + dims[2:])


def _pool(imp, attrs, name, extra):
    x = imp.value(0)
    if x.rank == 3:
        # 1-D pooling: as 2-D over a unit H dim, then drop it.
        attrs = as_2d(attrs, [("kernel_shape", 1), ("strides", 1), ("dilations", 1),
                              ("pads", 0)])
        dims = list(imp.shape_of(0))
        t = imp.tensor(0)
        saved = t.value
        t.value = unit_h(imp, x)
        try:
            _pool(imp, attrs, name, extra)
        finally:
            t.value = saved
        y = imp.env[imp.node.output[0]].value
        out = [Dim(y, k) if d is None else d for k, d in enumerate(y.shape)]
        imp.set_output(0, reshape_value(imp, y, out[:2] + out[3:]))
        return
    if x.rank != 4:
        imp.fail(f"only 2-D pooling (rank-4 input) is supported; the input has rank {x.rank}")
    kernel = list(attrs["kernel_shape"] or [])
    if len(kernel) != 2:
        imp.fail("kernel_shape must have 2 entries", unsupported=False)
    dilations = list(attrs["dilations"] or [1, 1])
    if dilations != [1, 1]:
        imp.fail(f"attribute dilations={dilations} is not supported (only 1)")
    check_choice(imp, attrs, "ceil_mode", [0, 1])
    strides, pads = spatial_attrs(imp, attrs, kernel, imp.shape_of(0), dilations)
    a = {"kernel": arr(kernel), "strides": arr(strides)}
    if attrs["ceil_mode"]:
        a["ceil_mode"] = "unit"
    a.update(extra)
    large = any(2 * p > kernel[k % 2] for k, p in enumerate(pads))
    if large and not attrs["ceil_mode"]:
        # The paddle pools take at most half a kernel of padding (as
        # PyTorch); ONNX allows more. Pad explicitly, then pool unpadded.
        imp.set_output(0, _pool_prepadded(imp, x, name, a, pads))
        return
    a["padding"] = arr(pads)
    imp.set_output(0, imp.op1(name, [x], a))


def _pool_prepadded(imp, x, name, a, pads):
    low, high = [0, 0] + pads[:2], [0, 0] + pads[2:]
    if name == "paddle.max_pool2d":
        # Padded positions never win: the lowest value of the type.
        lowest = -np.inf if x.dtype in FLOAT_TYPES else np.iinfo(MLIR_TO_NUMPY[x.dtype]).min
        padded = imp.op1("paddle.pad", [x], {"low": arr(low), "high": arr(high),
                                             "value": fmt_scalar(lowest, x.dtype)})
        return imp.op1(name, [padded], a)
    zero = fmt_scalar(0, x.dtype)
    padded = imp.op1("paddle.pad", [x], {"low": arr(low), "high": arr(high), "value": zero})
    a = dict(a)
    include = a.pop("count_include_pad", None) is not None
    mean = imp.op1(name, [padded], a)  # every window lies inside the padded input
    if include:
        return mean
    # Without count_include_pad the divisor is the number of input elements
    # in the window: the same pool over ones padded with zeros gives
    # count / window size, and the ratio cancels the window size.
    h, w = imp.shape_of(0)[2:]
    if not (is_static(h) and is_static(w)):
        imp.fail("padding larger than half the kernel on dynamic spatial dims is not supported")
    ones = imp.const_value(np.ones((1, 1, h, w), MLIR_TO_NUMPY.get(x.dtype, np.float32)))
    ones = imp.op1("paddle.pad", [ones], {"low": arr(low), "high": arr(high), "value": zero})
    frac = imp.op1(name, [ones], a)
    return imp.op1("paddle.div", [mean, frac])


POOL_ATTRS = {"auto_pad": "NOTSET", "ceil_mode": 0, "dilations": None,
              "kernel_shape": None, "pads": None, "strides": None}


@op("MaxPool", dict(POOL_ATTRS, storage_order=0))
def max_pool(imp, attrs):
    check_choice(imp, attrs, "storage_order", [0])
    _pool(imp, attrs, "paddle.max_pool2d", {})


@op("AveragePool", dict(POOL_ATTRS, count_include_pad=0))
def average_pool(imp, attrs):
    check_choice(imp, attrs, "count_include_pad", [0, 1])
    _pool(imp, attrs, "paddle.avg_pool2d",
          {"count_include_pad": "unit"} if attrs["count_include_pad"] else {})


def _global_pool(name):
    def handler(imp, attrs):
        x = imp.value(0)
        if x.rank < 3:
            imp.fail("the input must have rank >= 3", unsupported=False)
        imp.set_output(0, imp.op1(name, [x], {"axes": arr(range(2, x.rank)),
                                              "keepdims": "unit"}))
    return handler


op("GlobalAveragePool")(_global_pool("paddle.reduce_mean"))
op("GlobalMaxPool")(_global_pool("paddle.reduce_max"))


@op("BatchNormalization", {"epsilon": 1e-5, "momentum": 0.9, "training_mode": 0})
def batch_norm(imp, attrs):
    check_choice(imp, attrs, "training_mode", [0])
    x = imp.value(0)
    if x.rank < 2:
        imp.fail("the input must have rank >= 2", unsupported=False)
    operands = [x] + [imp.value(i) for i in range(1, 5)]
    imp.set_output(0, imp.op1("paddle.batch_norm_inference", operands,
                              {"epsilon": fmt_float(attrs["epsilon"], "f64")}))


@op("LayerNormalization", {"axis": -1, "epsilon": 1e-5, "stash_type": 1})
def layer_norm(imp, attrs):
    check_choice(imp, attrs, "stash_type", [1])
    x = imp.value(0)
    axis = norm_axis(imp, attrs["axis"], x.rank)
    operands = [x, imp.value(1)]
    if imp.has(2):
        operands.append(imp.value(2))
    imp.set_output(0, imp.op1("paddle.layer_norm", operands, {
        "axes": arr(range(axis, x.rank)), "epsilon": fmt_float(attrs["epsilon"], "f64"),
        "operandSegmentSizes": f"array<i32: 1, 1, {len(operands) - 2}>"}))


def _softmax(name):
    def handler(imp, attrs):
        x = imp.value(0)
        axis = norm_axis(imp, attrs["axis"], x.rank)
        imp.set_output(0, imp.op1(name, [x], {"axis": f"{axis} : i64"}))
    return handler


op("Softmax", {"axis": -1})(_softmax("paddle.softmax"))
op("LogSoftmax", {"axis": -1})(_softmax("paddle.log_softmax"))


@op("ArgMax", {"axis": 0, "keepdims": 1, "select_last_index": 0})
def argmax(imp, attrs):
    check_choice(imp, attrs, "select_last_index", [0])
    check_choice(imp, attrs, "keepdims", [0, 1])
    x = imp.value(0)
    a = {"axis": f"{norm_axis(imp, attrs['axis'], x.rank)} : i64"}
    if attrs["keepdims"]:
        a["keepdims"] = "unit"
    imp.set_output(0, imp.op1("paddle.argmax", [x], a))


# --- reductions -----------------------------------------------------------------------------

def _reduce(name, pre=None, post=None):
    def handler(imp, attrs):
        check_choice(imp, attrs, "keepdims", [0, 1])
        check_choice(imp, attrs, "noop_with_empty_axes", [0, 1])
        x = imp.value(0)
        axes = axes_input(imp, 1, attrs)
        a = {}
        if axes is not None and len(axes) > 0:
            a["axes"] = arr(norm_axis(imp, v, x.rank) for v in axes)
        elif attrs["noop_with_empty_axes"]:
            imp.set_output(0, pre(imp, x) if pre else x)
            return
        if attrs["keepdims"]:
            a["keepdims"] = "unit"
        if name in ("paddle.reduce_max", "paddle.reduce_min"):
            # ONNX: over nothing, the lowest (max) or highest (min) value.
            a["allow_empty"] = "unit"
        if x.dtype == "i1" and name in ("paddle.reduce_max", "paddle.reduce_min"):
            # any / all: reduce 0/1 as i8.
            x8 = imp.op1("paddle.cast", [x], result_types=[out_type(imp, x.shape, "i8")])
            y = imp.op1(name, [x8], a)
            # > 0, not a cast: an empty max (any) gives the lowest i8, false;
            # an empty min (all) the highest, true.
            imp.set_output(0, imp.op1("paddle.compare", [y, imp.scalar(0, "i8")],
                                      {"direction": "#paddle<direction gt>"}))
            return
        y = imp.op1(name, [pre(imp, x) if pre else x], a)
        imp.set_output(0, post(imp, y) if post else y)
    return handler


REDUCE_ATTRS = {"keepdims": 1, "noop_with_empty_axes": 0, "axes": None}


def _square(imp, x):
    return imp.op1("paddle.mul", [x, x])


op("ReduceSum", REDUCE_ATTRS)(_reduce("paddle.reduce_sum"))
op("ReduceMean", REDUCE_ATTRS)(_reduce("paddle.reduce_mean"))
op("ReduceMax", REDUCE_ATTRS)(_reduce("paddle.reduce_max"))
op("ReduceMin", REDUCE_ATTRS)(_reduce("paddle.reduce_min"))
op("ReduceProd", REDUCE_ATTRS)(_reduce("paddle.reduce_prod"))
op("ReduceSumSquare", REDUCE_ATTRS)(_reduce("paddle.reduce_sum", pre=_square))
op("ReduceL1", REDUCE_ATTRS)(_reduce("paddle.reduce_sum",
                                     pre=lambda imp, x: imp.op1("paddle.abs", [x])))
op("ReduceL2", REDUCE_ATTRS)(_reduce("paddle.reduce_sum", pre=_square,
                                     post=lambda imp, y: imp.op1("paddle.sqrt", [y])))
op("ReduceLogSum", REDUCE_ATTRS)(_reduce("paddle.reduce_sum",
                                         post=lambda imp, y: imp.op1("paddle.log", [y])))


@op("ReduceLogSumExp", REDUCE_ATTRS)
def reduce_log_sum_exp(imp, attrs):
    # log(sum(exp(x - m))) + m with m the max over the same axes: no
    # overflow for large inputs.
    check_choice(imp, attrs, "keepdims", [0, 1])
    check_choice(imp, attrs, "noop_with_empty_axes", [0, 1])
    x = imp.value(0)
    axes = axes_input(imp, 1, attrs)
    if not axes and attrs["noop_with_empty_axes"]:
        imp.set_output(0, x)
        return
    a = {"keepdims": "unit"}
    if axes:
        a["axes"] = arr(norm_axis(imp, v, x.rank) for v in axes)
    m = imp.op1("paddle.reduce_max", [x], {**a, "allow_empty": "unit"})
    # An all -inf slice would give nan from -inf - -inf; use 0 there.
    finite = imp.op1("paddle.compare", [m, imp.scalar(-np.inf, x.dtype)],
                     {"direction": "#paddle<direction ne>"})
    m = imp.op1("paddle.select", [finite, m, imp.scalar(0, x.dtype)])
    e = imp.op1("paddle.exp", [imp.op1("paddle.sub", [x, m])])
    y = imp.op1("paddle.log", [imp.op1("paddle.reduce_sum", [e], a)])
    y = imp.op1("paddle.add", [y, m])
    if not attrs["keepdims"]:
        reduced = set(norm_axis(imp, v, x.rank) for v in axes) if axes else set(range(x.rank))
        dims = [d for k, d in enumerate(imp.shape_of(0)) if k not in reduced]
        y = reshape_value(imp, y, dims)
    imp.set_output(0, y)


@op("CastLike", {"saturate": 1})
def cast_like(imp, attrs):
    x = imp.value(0)
    elt = imp.dtype(1)
    if x.dtype == elt:
        imp.set_output(0, x)
        return
    imp.set_output(0, imp.op1("paddle.cast", [x], result_types=[out_type(imp, x.shape, elt)]))


@op("Range")
def range_(imp, attrs):
    start, limit, delta = (np.asarray(imp.const_input(i, w)).reshape(())
                           for i, w in enumerate(("start", "limit", "delta")))
    if delta == 0:
        imp.fail("delta is 0", unsupported=False)
    n = max(int(math.ceil((float(limit) - float(start)) / float(delta))), 0)
    dtype = start.dtype
    if n * dtype.itemsize > MAX_CONST_BYTES:
        imp.fail(f"the range has {n} elements: too large for an import-time constant "
                 f"(at most {MAX_CONST_BYTES} bytes, as one ONNX tensor)")
    # ONNX: output[i] = start + i * delta, in the input type.
    values = (start + np.arange(n, dtype=dtype) * delta).astype(dtype)
    if n <= FOLD_LIMIT or dtype.kind != "f":
        imp.set_output(0, const=values)
        return
    imp.set_output(0, imp.const_value(values))


@op("ArgMin", {"axis": 0, "keepdims": 1, "select_last_index": 0})
def argmin(imp, attrs):
    # argmin(x) = argmax(-x) for floats (NaN stays NaN, so the first NaN
    # still wins) and argmax(~x) for integers (~x = -x - 1 never overflows).
    check_choice(imp, attrs, "select_last_index", [0])
    check_choice(imp, attrs, "keepdims", [0, 1])
    x = imp.value(0)
    flipped = imp.op1("paddle.neg" if x.dtype in FLOAT_TYPES else "paddle.not", [x])
    a = {"axis": f"{norm_axis(imp, attrs['axis'], x.rank)} : i64"}
    if attrs["keepdims"]:
        a["keepdims"] = "unit"
    imp.set_output(0, imp.op1("paddle.argmax", [flipped], a))


@op("Softplus")
def softplus(imp, attrs):
    # log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)): no overflow.
    x = imp.value(0)
    t = imp.op1("paddle.exp", [imp.op1("paddle.neg", [imp.op1("paddle.abs", [x])])])
    t = imp.op1("paddle.log", [imp.op1("paddle.add", [t, imp.scalar(1, x.dtype)])])
    imp.set_output(0, imp.op1("paddle.add", [imp.op1("paddle.relu", [x]), t]))


@op("Selu", {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875})
def selu(imp, attrs):
    x = imp.value(0)
    neg = imp.op1("paddle.compare", [x, imp.scalar(0, x.dtype)],
                  {"direction": "#paddle<direction le>"})
    e = imp.op1("paddle.sub", [imp.op1("paddle.exp", [x]), imp.scalar(1, x.dtype)])
    e = imp.op1("paddle.mul", [e, imp.scalar(attrs["alpha"], x.dtype)])
    y = imp.op1("paddle.select", [neg, e, x])
    imp.set_output(0, imp.op1("paddle.mul", [y, imp.scalar(attrs["gamma"], x.dtype)]))


@op("Celu", {"alpha": 1.0})
def celu(imp, attrs):
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    x = imp.value(0)
    alpha = imp.scalar(attrs["alpha"], x.dtype)
    e = imp.op1("paddle.sub", [imp.op1("paddle.exp", [imp.op1("paddle.div", [x, alpha])]),
                               imp.scalar(1, x.dtype)])
    e = imp.op1("paddle.minimum", [imp.op1("paddle.mul", [e, alpha]), imp.scalar(0, x.dtype)])
    imp.set_output(0, imp.op1("paddle.add", [imp.op1("paddle.relu", [x]), e]))


@op("ThresholdedRelu", {"alpha": 1.0})
def thresholded_relu(imp, attrs):
    x = imp.value(0)
    keep = imp.op1("paddle.compare", [x, imp.scalar(attrs["alpha"], x.dtype)],
                   {"direction": "#paddle<direction gt>"})
    imp.set_output(0, imp.op1("paddle.select", [keep, x, imp.scalar(0, x.dtype)]))


SUPPORTED_OPS = sorted(OPS)
