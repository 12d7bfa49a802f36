"""NumPy-named functions over traced arrays, mapped onto paddle ops.

Every public function here works inside a trace (jit, grad: it appends
paddle ops) and outside one (numpy arrays in, numpy arrays out: it compiles
a tiny function, cached per signature, and runs it). Array creation
functions (zeros, arange, ...) return numpy arrays, which become constants
when a trace uses them.
"""

import builtins
import functools
import math
import operator

import numpy as np

from ._promote import result_type, ufunc_dtype
from ._trace import (DTypeError, ShapeError, Tracer, current_trace,
                     dtype_error, emit, emit1, shape_error, to_np_dtype,
                     tracing, mlir_type)

_DTYPE_NAMES = {"f32": np.float32, "f64": np.float64}


def _auto(fn):
    """Runs `fn` directly in a trace; outside one, compiles it (arrays as
    arguments, everything else static) and runs it on the given arrays."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if tracing():
            return fn(*args, **kwargs)
        from ._jit import eager_call
        return eager_call(fn, args, kwargs)

    wrapper.__wrapped_op__ = fn
    return wrapper


# -- attribute syntax ---------------------------------------------------------

def _arr(xs):
    xs = [int(x) for x in xs]
    return "array<i64: " + ", ".join(map(str, xs)) + ">" if xs else "array<i64>"


def _i64(v):
    return f"{int(v)} : i64"


def _float_attr(v, ty="f64"):
    v = float(v)
    if math.isfinite(v):
        return f"{v:.17e} : {ty}"
    # MLIR spells inf/nan as the bit pattern of the element type.
    np_ty = {"f64": (np.float64, np.uint64), "f32": (np.float32, np.uint32),
             "f16": (np.float16, np.uint16)}[ty]
    bits = int(np.array(v, dtype=np_ty[0]).view(np_ty[1]))
    return f"0x{bits:X} : {ty}"


_UNIT = "unit"


# -- operands -----------------------------------------------------------------

def _shape(x):
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def _dtype(x):
    if isinstance(x, Tracer):
        return x.dtype
    if isinstance(x, complex):
        raise dtype_error("complex numbers are not supported")
    return to_np_dtype(np.asarray(x).dtype, "an operand")


def _t(x, dtype=None):
    """`x` as a tracer of the current trace, cast to `dtype` if given."""
    tr = current_trace()
    if isinstance(x, Tracer):
        if x._trace is not tr:
            x = Tracer(tr.lift(x), tr, weak=x.weak)
        if dtype is not None and np.dtype(dtype) != x.dtype:
            return _cast(x, dtype)
        return x
    if isinstance(x, complex) or (isinstance(x, np.ndarray)
                                  and x.dtype.kind == "c"):
        raise dtype_error("complex numbers are not supported")
    if isinstance(x, (list, tuple)):
        x = np.array(x)
    if dtype is None:
        dtype = _dtype(x)
    arr = np.asarray(x, dtype=np.dtype(dtype))
    return Tracer(tr.lift(arr), tr, weak=type(x) in (bool, int, float))


def _cast(x, dtype):
    dtype = to_np_dtype(dtype, "astype")
    x = _t(x)
    if x.dtype == dtype:
        return x
    return emit1("paddle.cast", [x], result_types=[mlir_type(x.shape, dtype)])


def _broadcast_shapes(*shapes, what="operands"):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise shape_error(
            f"{what} could not be broadcast together with shapes "
            + " ".join(str(tuple(s)) for s in shapes)) from None


def _weak_all(*xs):
    return all((isinstance(x, Tracer) and x.weak)
               or type(x) in (bool, int, float) for x in xs)


# -- elementwise --------------------------------------------------------------

def _unary(ufunc, opname, x):
    dt = ufunc_dtype(ufunc, x)
    return emit1(opname, [_t(x, dt)])


def _float_unary(opname, x):
    # Ops numpy does not name: float in, same float out; ints promote as
    # numpy's float ufuncs do (int32 -> float64).
    dt = ufunc_dtype("exp", x)
    return emit1(opname, [_t(x, dt)])


@_auto
def exp(x):
    return _unary("exp", "paddle.exp", x)


@_auto
def log(x):
    return _unary("log", "paddle.log", x)


@_auto
def tanh(x):
    return _unary("tanh", "paddle.tanh", x)


@_auto
def sin(x):
    return _unary("sin", "paddle.sin", x)


@_auto
def cos(x):
    return _unary("cos", "paddle.cos", x)


@_auto
def sqrt(x):
    return _unary("sqrt", "paddle.sqrt", x)


@_auto
def rsqrt(x):
    return _float_unary("paddle.rsqrt", x)


@_auto
def floor(x):
    dt = ufunc_dtype("floor", x)
    x = _t(x, dt)
    return x if dt.kind in "biu" else emit1("paddle.floor", [x])


@_auto
def ceil(x):
    dt = ufunc_dtype("ceil", x)
    x = _t(x, dt)
    return x if dt.kind in "biu" else emit1("paddle.ceil", [x])


@_auto
def rint(x):
    dt = ufunc_dtype("rint", x)
    x = _t(x, dt)
    return x if dt.kind in "biu" else emit1("paddle.round", [x])


round = rint  # noqa: A001 (numpy.round with decimals=0)


@_auto
def abs(x):  # noqa: A001
    dt = ufunc_dtype("absolute", x)
    x = _t(x, dt)
    return x if dt == np.bool_ else emit1("paddle.abs", [x])


absolute = abs


@_auto
def negative(x):
    return _unary("negative", "paddle.neg", x)


@_auto
def sign(x):
    return _unary("sign", "paddle.sign", x)


@_auto
def sigmoid(x):
    return _float_unary("paddle.sigmoid", x)


@_auto
def erf(x):
    return _float_unary("paddle.erf", x)


@_auto
def relu(x):
    x = _t(x)
    if x.dtype == np.bool_:
        raise dtype_error("relu is not defined for bool")
    return emit1("paddle.relu", [x])


@_auto
def gelu(x, approximate=False):
    dt = ufunc_dtype("exp", x)
    attrs = {"approximate": _UNIT} if approximate else {}
    return emit1("paddle.gelu", [_t(x, dt)], attrs)


@_auto
def square(x):
    return multiply(x, x)


@_auto
def reciprocal(x):
    if _dtype(x).kind != "f":
        # numpy's integer reciprocal truncates (1 / 2 == 0); nobody wants it.
        raise dtype_error(f"reciprocal of {_dtype(x)} is not supported; "
                          "cast to a float dtype first")
    return divide(1.0, x)


@_auto
def log1p(x):
    return log(add(x, 1.0))


@_auto
def expm1(x):
    return subtract(exp(x), 1.0)


@_auto
def logical_not(x):
    return emit1("paddle.not", [_t(x, np.bool_)])


@_auto
def invert(x):
    dt = ufunc_dtype("invert", x)
    return emit1("paddle.not", [_t(x, dt)])


def _binary(ufunc, opname, x, y, bool_op=None):
    dt = ufunc_dtype(ufunc, x, y)
    _broadcast_shapes(_shape(x), _shape(y))
    if dt == np.bool_:
        if bool_op is None:
            raise dtype_error(f"{ufunc} is not supported for bool operands")
        opname = bool_op
    r = emit1(opname, [_t(x, dt), _t(y, dt)])
    r.weak = _weak_all(x, y)
    return r


@_auto
def add(x, y):
    return _binary("add", "paddle.add", x, y, "paddle.or")


@_auto
def subtract(x, y):
    return _binary("subtract", "paddle.sub", x, y)


@_auto
def multiply(x, y):
    return _binary("multiply", "paddle.mul", x, y, "paddle.and")


@_auto
def divide(x, y):
    return _binary("true_divide", "paddle.div", x, y)


true_divide = divide


@_auto
def floor_divide(x, y):
    dt = ufunc_dtype("floor_divide", x, y)
    if dt.kind == "f":
        return floor(_binary("true_divide", "paddle.div", x, y))
    return _binary("floor_divide", "paddle.div", x, y)


@_auto
def remainder(x, y):
    return _binary("remainder", "paddle.rem", x, y)


mod = remainder


@_auto
def power(x, y):
    # Small non-negative integer exponents as products: exact for integers
    # and cheaper to differentiate than pow.
    if type(y) is int and 0 <= y <= 4 and isinstance(x, Tracer):
        dt = ufunc_dtype("power", x, y)
        x = _t(x, dt)
        if y == 0:
            return _t(np.ones(x.shape, dt))
        r = x
        for _ in range(y - 1):
            r = emit1("paddle.mul", [r, x])
        return r
    return _binary("power", "paddle.pow", x, y)


@_auto
def maximum(x, y):
    return _binary("maximum", "paddle.maximum", x, y, "paddle.or")


@_auto
def minimum(x, y):
    return _binary("minimum", "paddle.minimum", x, y, "paddle.and")


@_auto
def logical_and(x, y):
    return _binary("logical_and", "paddle.and", x, y, "paddle.and")


@_auto
def logical_or(x, y):
    return _binary("logical_or", "paddle.or", x, y, "paddle.or")


@_auto
def logical_xor(x, y):
    return _binary("logical_xor", "paddle.xor", x, y, "paddle.xor")


@_auto
def bitwise_and(x, y):
    return _binary("bitwise_and", "paddle.and", x, y, "paddle.and")


@_auto
def bitwise_or(x, y):
    return _binary("bitwise_or", "paddle.or", x, y, "paddle.or")


@_auto
def bitwise_xor(x, y):
    return _binary("bitwise_xor", "paddle.xor", x, y, "paddle.xor")


def _compare(direction, ufunc, x, y):
    ufunc_dtype(ufunc, x, y)  # rejects what numpy rejects
    dt = result_type(x, y)
    _broadcast_shapes(_shape(x), _shape(y))
    return emit1("paddle.compare", [_t(x, dt), _t(y, dt)],
                 {"direction": f"#paddle<direction {direction}>"})


@_auto
def equal(x, y):
    return _compare("eq", "equal", x, y)


@_auto
def not_equal(x, y):
    return _compare("ne", "not_equal", x, y)


@_auto
def less(x, y):
    return _compare("lt", "less", x, y)


@_auto
def less_equal(x, y):
    return _compare("le", "less_equal", x, y)


@_auto
def greater(x, y):
    return _compare("gt", "greater", x, y)


@_auto
def greater_equal(x, y):
    return _compare("ge", "greater_equal", x, y)


@_auto
def where(condition, x=None, y=None):
    if x is None or y is None:
        raise shape_error("where(condition) with one argument has a "
                          "data-dependent shape; pass x and y")
    dt = result_type(x, y)
    _broadcast_shapes(_shape(condition), _shape(x), _shape(y))
    return emit1("paddle.select",
                 [_t(condition, np.bool_), _t(x, dt), _t(y, dt)])


@_auto
def clip(x, a_min=None, a_max=None):
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return _t(x)


@_auto
def astype(x, dtype):
    return _cast(x, dtype)


# -- reductions ---------------------------------------------------------------

def _axes(axis, ndim, what):
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise shape_error(f"{what}: axis {a} is out of bounds for an "
                              f"array of rank {ndim}")
        a %= ndim if ndim else 1
        if a in out:
            raise shape_error(f"{what}: repeated axis {a}")
        out.append(a)
    return out


def _reduce(opname, x, axis, keepdims, what):
    axes = _axes(axis, x.ndim, what)
    attrs = {}
    if axes is not None:
        attrs["axes"] = _arr(axes)
    if keepdims:
        attrs["keepdims"] = _UNIT
    return emit1(opname, [x], attrs)


@_auto
def sum(x, axis=None, keepdims=False, dtype=None):  # noqa: A001
    x = _t(x)
    if dtype is not None:
        x = _cast(x, dtype)
    elif x.dtype.kind in "bi" and x.dtype.itemsize < 8:
        x = _cast(x, np.int64)  # numpy sums small ints in the default int
    return _reduce("paddle.reduce_sum", x, axis, keepdims, "sum")


@_auto
def prod(x, axis=None, keepdims=False, dtype=None):
    x = _t(x)
    if dtype is not None:
        x = _cast(x, dtype)
    elif x.dtype.kind in "bi" and x.dtype.itemsize < 8:
        x = _cast(x, np.int64)
    return _reduce("paddle.reduce_prod", x, axis, keepdims, "prod")


@_auto
def mean(x, axis=None, keepdims=False, dtype=None):
    x = _t(x)
    if dtype is not None:
        x = _cast(x, dtype)
    elif x.dtype.kind in "bi":
        x = _cast(x, np.float64)
    return _reduce("paddle.reduce_mean", x, axis, keepdims, "mean")


def _minmax(opname, x, axis, keepdims, what):
    x = _t(x)
    if x.ndim and 0 in x.shape and (axis is None or any(
            x.shape[a] == 0 for a in _axes(axis, x.ndim, what))):
        raise shape_error(f"{what} of an empty array has no identity")
    if x.dtype == np.bool_:
        r = _reduce(opname, _cast(x, np.int8), axis, keepdims, what)
        return _cast(r, np.bool_)
    return _reduce(opname, x, axis, keepdims, what)


@_auto
def max(x, axis=None, keepdims=False):  # noqa: A001
    return _minmax("paddle.reduce_max", x, axis, keepdims, "max")


amax = max


@_auto
def min(x, axis=None, keepdims=False):  # noqa: A001
    return _minmax("paddle.reduce_min", x, axis, keepdims, "min")


amin = min


@_auto
def argmax(x, axis=None, keepdims=False):
    x = _t(x)
    if x.dtype == np.bool_:
        x = _cast(x, np.int8)
    if axis is None:
        r = emit1("paddle.argmax", [reshape(x, (-1,))], {"axis": _i64(0)})
        return reshape(r, (1,) * x.ndim) if keepdims else r
    (a,) = _axes(axis, x.ndim, "argmax")
    attrs = {"axis": _i64(a)}
    if keepdims:
        attrs["keepdims"] = _UNIT
    return emit1("paddle.argmax", [x], attrs)


@_auto
def argmin(x, axis=None, keepdims=False):
    x = _t(x)
    flipped = logical_not(x) if x.dtype == np.bool_ else negative(x)
    return argmax(flipped, axis, keepdims)


@_auto
def var(x, axis=None, ddof=0, keepdims=False):
    x = _t(x)
    if x.dtype.kind in "bi":
        x = _cast(x, np.float64)
    axes = _axes(axis, x.ndim, "var")
    n = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
    d = subtract(x, mean(x, axis, keepdims=True))
    s = sum(multiply(d, d), axis, keepdims)
    return divide(s, float(builtins.max(n - ddof, 0)))


@_auto
def std(x, axis=None, ddof=0, keepdims=False):
    return sqrt(var(x, axis, ddof, keepdims))


@_auto
def logsumexp(x, axis=None, keepdims=False):
    x = _t(x)
    m = max(x, axis, keepdims=True)
    s = log(sum(exp(subtract(x, m)), axis, keepdims=True))
    r = add(s, m)
    if not keepdims:
        axes = _axes(axis, x.ndim, "logsumexp")
        axes = range(x.ndim) if axes is None else axes
        r = reshape(r, tuple(d for i, d in enumerate(x.shape)
                             if i not in axes))
    return r


# -- shapes -------------------------------------------------------------------

def _norm_shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


@_auto
def reshape(x, shape):
    x = _t(x)
    shape = list(_norm_shape(shape))
    if shape.count(-1) > 1:
        raise shape_error(f"reshape: can only specify one unknown "
                          f"dimension, got {tuple(shape)}")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            raise shape_error(f"reshape: cannot reshape array of shape "
                              f"{x.shape} into shape {tuple(shape)}")
        shape[shape.index(-1)] = x.size // known
    if any(s < 0 for s in shape) or int(np.prod(shape, dtype=np.int64)) \
            != x.size:
        raise shape_error(f"reshape: cannot reshape array of size {x.size} "
                          f"(shape {x.shape}) into shape {tuple(shape)}")
    if tuple(shape) == x.shape:
        return x
    return emit1("paddle.reshape", [x], {"shape": _arr(shape)})


@_auto
def ravel(x):
    return reshape(x, (-1,))


@_auto
def transpose(x, axes=None):
    x = _t(x)
    if axes is None:
        axes = tuple(range(x.ndim))[::-1]
    perm = _axes(axes, x.ndim, "transpose")
    if len(perm) != x.ndim:
        raise shape_error(f"transpose: axes {tuple(axes)} do not match an "
                          f"array of rank {x.ndim}")
    if perm == list(range(x.ndim)):
        return x
    return emit1("paddle.transpose", [x], {"perm": _arr(perm)})


permute_dims = transpose


@_auto
def swapaxes(x, axis1, axis2):
    x = _t(x)
    a, b = _axes((axis1,), x.ndim, "swapaxes")[0], \
        _axes((axis2,), x.ndim, "swapaxes")[0]
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


@_auto
def moveaxis(x, source, destination):
    x = _t(x)
    (s,) = _axes(source, x.ndim, "moveaxis")
    (d,) = _axes(destination, x.ndim, "moveaxis")
    perm = [i for i in range(x.ndim) if i != s]
    perm.insert(d, s)
    return transpose(x, perm)


@_auto
def expand_dims(x, axis):
    x = _t(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = x.ndim + len(axes)
    axes = _axes(axes, nd, "expand_dims")
    shape, it = [], iter(x.shape)
    for i in range(nd):
        shape.append(1 if i in axes else next(it))
    return reshape(x, shape)


@_auto
def squeeze(x, axis=None):
    x = _t(x)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = _axes(axis, x.ndim, "squeeze")
        for a in axes:
            if x.shape[a] != 1:
                raise shape_error(f"squeeze: cannot select an axis to "
                                  f"squeeze out which has size not equal "
                                  f"to one (axis {a} of shape {x.shape})")
    return reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])


@_auto
def broadcast_to(x, shape):
    x = _t(x)
    shape = _norm_shape(shape)
    out = _broadcast_shapes(x.shape, shape, what="broadcast_to: operands")
    if tuple(out) != shape:
        raise shape_error(f"broadcast_to: cannot broadcast shape {x.shape} "
                          f"to {shape}")
    if shape == x.shape:
        return x
    return emit1("paddle.broadcast_to", [x], {"shape": _arr(shape)})


@_auto
def concatenate(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise shape_error("concatenate: need at least one array")
    dt = result_type(*arrays)
    ts = [_t(a, dt) for a in arrays]
    if axis is None:
        ts = [ravel(t) for t in ts]
        axis = 0
    nd = ts[0].ndim
    if nd == 0:
        raise shape_error("concatenate: zero-dimensional arrays cannot be "
                          "concatenated")
    (ax,) = _axes(axis, nd, "concatenate")
    for t in ts[1:]:
        if t.ndim != nd or any(a != b for i, (a, b) in enumerate(
                zip(t.shape, ts[0].shape)) if i != ax):
            raise shape_error(
                "concatenate: all the input array dimensions except for the "
                f"concatenation axis must match: {ts[0].shape} and {t.shape}"
                f" along axis {ax}")
    if len(ts) == 1:
        return ts[0]
    return emit1("paddle.concat", ts, {"axis": _i64(ax)})


concat = concatenate


@_auto
def stack(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise shape_error("stack: need at least one array")
    shapes = {tuple(_shape(a)) for a in arrays}
    if len(shapes) != 1:
        raise shape_error(f"stack: all input arrays must have the same "
                          f"shape, got {sorted(shapes)}")
    nd = len(shapes.pop()) + 1
    (ax,) = _axes(axis, nd, "stack")
    return concatenate([expand_dims(_t(a), ax) for a in arrays], ax)


@_auto
def pad(x, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise shape_error(f"pad: mode {mode!r} is not supported (only "
                          "'constant')")
    x = _t(x)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64),
                         (x.ndim, 2))
    if (pw < 0).any():
        raise shape_error("pad: negative pad widths")
    ty = {"f": None}.get(x.dtype.kind)
    et = mlir_type((), x.dtype)[7:-1]
    if x.dtype.kind == "f":
        value = _float_attr(constant_values, et)
    else:
        value = f"{int(constant_values)} : {et}"
    del ty
    return emit1("paddle.pad", [x], {"low": _arr(pw[:, 0]),
                                     "high": _arr(pw[:, 1]),
                                     "value": value})


def _index_t(indices):
    i = _t(indices)
    if i.dtype not in (np.int32, np.int64):
        if i.dtype.kind in "bi":
            i = _cast(i, np.int64)
        else:
            raise dtype_error(f"indices must be integers, not {i.dtype}")
    return i


@_auto
def take(x, indices, axis=None):
    x = _t(x)
    if axis is None:
        x, axis = ravel(x), 0
    (ax,) = _axes(axis, x.ndim, "take")
    return emit1("paddle.gather", [x, _index_t(indices)], {"axis": _i64(ax)})


gather = take


@_auto
def take_along_axis(x, indices, axis):
    """numpy.take_along_axis: `result[..., j, ...] = x[..., indices[..., j,
    ...], ...]` along `axis` (e.g. the log-probability of each label)."""
    x = _t(x)
    idx = _index_t(indices)
    if idx.ndim != x.ndim:
        raise shape_error(f"take_along_axis: indices of rank {idx.ndim} for "
                          f"an array of rank {x.ndim}")
    (ax,) = _axes(axis, x.ndim, "take_along_axis")
    xt, it = moveaxis(x, ax, -1), moveaxis(idx, ax, -1)
    lead = tuple(_broadcast_shapes(xt.shape[:-1], it.shape[:-1],
                                   what="take_along_axis: x and indices"))
    if lead != xt.shape[:-1]:
        raise shape_error(f"take_along_axis: indices {idx.shape} do not fit "
                          f"x {x.shape}")
    it = broadcast_to(it, lead + it.shape[-1:])
    n = xt.shape[-1]
    # Offsets of each row in the flattened array, a constant.
    rows = int(np.prod(lead, dtype=np.int64))
    base = (np.arange(rows, dtype=np.int64).reshape(lead + (1,)) * n).astype(it.dtype)
    flat = emit1("paddle.add", [_t(base, it.dtype), _broadcast_idx(it, n)])
    # An index outside [-n, n) would land in a neighbouring row of the
    # flattened array: send it past the end instead, where the gather's
    # run-time check reports it at this line.
    outside = logical_or(less(it, -n), greater_equal(it, n))
    flat = where(outside, _t(np.array(rows * n, np.int64), it.dtype), flat).astype(it.dtype)
    r = take(ravel(xt), flat)
    return moveaxis(r, -1, ax)


def _broadcast_idx(it, n):
    # Negative indices count from the end, as numpy's.
    neg = less(it, 0)
    return where(neg, add(it, n), it).astype(it.dtype)


@_auto
def scatter_add(x, indices, updates, axis=0):
    x = _t(x)
    (ax,) = _axes(axis, x.ndim, "scatter_add")
    return emit1("paddle.scatter_add",
                 [x, _index_t(indices), _t(updates, x.dtype)],
                 {"axis": _i64(ax)})


def _slice(x, start, limit, stride):
    if list(start) == [0] * x.ndim and list(limit) == list(x.shape) and \
            list(stride) == [1] * x.ndim:
        return x
    return emit1("paddle.slice", [x], {"start": _arr(start),
                                       "limit": _arr(limit),
                                       "stride": _arr(stride)})


def _getitem(x, key):
    x = _t(x)
    if not isinstance(key, tuple):
        key = (key,)
    if builtins.any(k is Ellipsis for k in key):
        if builtins.sum(1 for k in key if k is Ellipsis) > 1:
            raise shape_error("an index can only have a single ellipsis")
    n_real = builtins.sum(1 for k in key if k is not None and k is not
                          Ellipsis)
    if n_real > x.ndim:
        raise shape_error(f"too many indices for array: array is "
                          f"{x.ndim}-dimensional, but {n_real} were indexed")
    expanded = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (x.ndim - n_real))
        else:
            expanded.append(k)
    if not builtins.any(k is Ellipsis for k in key):
        expanded.extend([slice(None)] * (x.ndim - n_real))
    start, limit, stride = [], [], []
    out_shape = []   # result shape after the slice, with None/int handled
    int_pos, arr_pos, arr_index = [], None, None
    dim = 0
    for kpos, k in enumerate(expanded):
        if k is None:
            out_shape.append(("new", 1))
            continue
        n = x.shape[dim]
        if isinstance(k, (bool, np.bool_)):
            raise shape_error("boolean scalar indices are not supported")
        if isinstance(k, (int, np.integer)):
            i = int(k)
            if not -n <= i < n:
                raise shape_error(f"index {i} is out of bounds for axis "
                                  f"{dim} with size {n}")
            i %= n
            start.append(i), limit.append(i + 1), stride.append(1)
            int_pos.append(kpos)
        elif isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if isinstance(part, Tracer):
                    raise shape_error("slice bounds must be static Python "
                                      "integers, not traced values")
            if k.step is not None and k.step <= 0:
                raise shape_error(
                    f"slice step {k.step} on axis {dim}: negative or zero "
                    "strides are not supported (use pm.flip-free "
                    "formulations or take with reversed indices)")
            s, e, st = k.indices(n)
            cnt = builtins.max(0, -(-(e - s) // st))
            start.append(s), limit.append(builtins.max(s, e)),
            stride.append(st)
            out_shape.append(("dim", cnt))
        else:
            if arr_pos is not None:
                raise shape_error("indexing with more than one integer "
                                  "array is not supported")
            idx = k
            dt = _dtype(idx)
            if dt == np.bool_:
                raise shape_error("boolean mask indexing has a "
                                  "data-dependent shape and is not "
                                  "supported; use pm.where")
            if dt.kind != "i":
                raise dtype_error(f"arrays used as indices must be of "
                                  f"integer type, not {dt}")
            if not isinstance(idx, Tracer):
                ia = np.asarray(idx)
                if ia.size and (ia.min() < -n or ia.max() >= n):
                    bad = ia.max() if ia.max() >= n else ia.min()
                    raise shape_error(f"index {bad} is out of bounds for "
                                      f"axis {dim} with size {n}")
            start.append(0), limit.append(n), stride.append(1)
            arr_pos, arr_index, arr_kpos = dim, idx, kpos
            out_shape.append(("arr", dim))
        dim += 1
    y = _slice(x, start, limit, stride)
    if arr_pos is None:
        return reshape(y, [e[1] for e in out_shape])
    # One integer array: drop the int dims, gather along the array's dim,
    # then put in the None axes.
    kept = [e for e in out_shape if e[0] != "new"]
    y = reshape(y, [x.shape[arr_pos] if e[0] == "arr" else e[1]
                    for e in kept])
    ax = [i for i, e in enumerate(kept) if e[0] == "arr"][0]
    idx_t = _index_t(arr_index)
    g = emit1("paddle.gather", [y, idx_t], {"axis": _i64(ax)})
    ni = idx_t.ndim
    has_new = builtins.any(e[0] == "new" for e in out_shape)
    # numpy puts the array's dims first when the advanced indices (the
    # array and the ints) are not next to each other.
    adv = sorted(int_pos + [arr_kpos])
    if adv != list(range(adv[0], adv[-1] + 1)):
        if has_new:
            raise shape_error("mixing None with non-adjacent advanced "
                              "indices is not supported")
        perm = list(range(ax, ax + ni)) + [i for i in range(g.ndim)
                                           if not ax <= i < ax + ni]
        return transpose(g, perm)
    if not has_new:
        return g
    final = []
    for e in out_shape:
        final.extend([1] if e[0] == "new" else
                     list(idx_t.shape) if e[0] == "arr" else [e[1]])
    return reshape(g, final)


# -- linear algebra -----------------------------------------------------------

@_auto
def matmul(x, y):
    xs, ys = _shape(x), _shape(y)
    if len(xs) == 0 or len(ys) == 0:
        raise shape_error("matmul: input operand does not have enough "
                          f"dimensions (shapes {tuple(xs)} and {tuple(ys)})")
    k1 = xs[-1]
    k2 = ys[0] if len(ys) == 1 else ys[-2]
    if k1 != k2:
        raise shape_error(f"matmul: contracted dims differ: {tuple(xs)} @ "
                          f"{tuple(ys)} ({k1} != {k2})")
    if len(xs) > 2 and len(ys) > 2:
        _broadcast_shapes(xs[:-2], ys[:-2], what="matmul batch dims")
    dt = ufunc_dtype("matmul", x, y)
    if dt == np.bool_:
        raise dtype_error("matmul of bool arrays is not supported")
    return emit1("paddle.matmul", [_t(x, dt), _t(y, dt)])


@_auto
def dot(x, y):
    if len(_shape(x)) == 0 or len(_shape(y)) == 0:
        return multiply(x, y)
    if len(_shape(y)) > 2:
        raise shape_error("dot with a rank > 2 second operand is not "
                          "supported; use matmul")
    return matmul(x, y)


@_auto
def outer(x, y):
    return multiply(reshape(x, (-1, 1)), reshape(y, (1, -1)))


# -- neural-network pieces ------------------------------------------------------

def _pair(v, what):
    if isinstance(v, (int, np.integer)):
        return [int(v), int(v)]
    v = [int(a) for a in v]
    if len(v) != 2:
        raise shape_error(f"{what} takes an int or a pair, got {v}")
    return v


def _padding4(p):
    # int, (ph, pw) or (top, left, bottom, right) as the dialect takes it.
    if isinstance(p, (int, np.integer)):
        return [int(p)] * 4
    p = [int(a) for a in p]
    if len(p) == 2:
        return [p[0], p[1], p[0], p[1]]
    if len(p) == 4:
        return p
    raise shape_error(f"padding takes an int, (ph, pw) or (top, left, "
                      f"bottom, right), got {p}")


def _float_common(*xs):
    dt = result_type(*xs)
    if dt.kind != "f":
        dt = ufunc_dtype("exp", _t(xs[0], dt))
    return dt


@_auto
def conv2d(x, w, stride=1, padding=0, dilation=1, groups=1):
    """NCHW input, OIHW filter (as PyTorch's conv2d without bias)."""
    xs, ws = _shape(x), _shape(w)
    if len(xs) != 4 or len(ws) != 4:
        raise shape_error(f"conv2d: expects a 4-D NCHW input and a 4-D OIHW "
                          f"filter, got {tuple(xs)} and {tuple(ws)}")
    if xs[1] != ws[1] * groups:
        raise shape_error(f"conv2d: input has {xs[1]} channels but the "
                          f"filter {tuple(ws)} with groups={groups} expects "
                          f"{ws[1] * groups}")
    dt = _float_common(x, w)
    return emit1("paddle.conv2d", [_t(x, dt), _t(w, dt)],
                 {"strides": _arr(_pair(stride, "stride")),
                  "padding": _arr(_padding4(padding)),
                  "dilations": _arr(_pair(dilation, "dilation")),
                  "groups": _i64(groups)})


def _pool_attrs(kernel_size, stride, padding, ceil_mode):
    k = _pair(kernel_size, "kernel_size")
    attrs = {"kernel": _arr(k),
             "strides": _arr(k if stride is None else _pair(stride,
                                                           "stride")),
             "padding": _arr(_padding4(padding))}
    if ceil_mode:
        attrs["ceil_mode"] = _UNIT
    return attrs


@_auto
def max_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False):
    """NCHW max pooling; `stride` defaults to `kernel_size` (PyTorch)."""
    x = _t(x)
    if x.ndim != 4:
        raise shape_error(f"max_pool2d: expects a 4-D NCHW input, got "
                          f"shape {x.shape}")
    return emit1("paddle.max_pool2d", [x],
                 _pool_attrs(kernel_size, stride, padding, ceil_mode))


@_auto
def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """NCHW average pooling with PyTorch's defaults."""
    x = _t(x)
    if x.ndim != 4:
        raise shape_error(f"avg_pool2d: expects a 4-D NCHW input, got "
                          f"shape {x.shape}")
    if x.dtype.kind != "f":
        x = _cast(x, ufunc_dtype("exp", x))
    attrs = _pool_attrs(kernel_size, stride, padding, ceil_mode)
    if count_include_pad:
        attrs["count_include_pad"] = _UNIT
    return emit1("paddle.avg_pool2d", [x], attrs)


@_auto
def softmax(x, axis=-1):
    x = _t(x, ufunc_dtype("exp", x))
    (a,) = _axes(axis, x.ndim, "softmax")
    return emit1("paddle.softmax", [x], {"axis": _i64(a)})


@_auto
def log_softmax(x, axis=-1):
    x = _t(x, ufunc_dtype("exp", x))
    (a,) = _axes(axis, x.ndim, "log_softmax")
    return emit1("paddle.log_softmax", [x], {"axis": _i64(a)})


@_auto
def layer_norm(x, scale=None, bias=None, axis=-1, epsilon=1e-5):
    """(x - mean) / sqrt(var + epsilon) * scale + bias over `axis` (an int
    or a tuple); `scale` and `bias` broadcast against x."""
    ops = [x] + [v for v in (scale, bias) if v is not None]
    dt = _float_common(*ops)
    x = _t(x, dt)
    axes = _axes(axis, x.ndim, "layer_norm")
    operands = [x]
    for v in (scale, bias):
        if v is not None:
            operands.append(_t(v, dt))
            _broadcast_shapes(x.shape, _shape(v), what="layer_norm: x and "
                              "scale/bias")
    seg = [1, int(scale is not None), int(bias is not None)]
    return emit1("paddle.layer_norm", operands,
                 {"axes": _arr(axes), "epsilon": _float_attr(epsilon),
                  "operandSegmentSizes": "array<i32: " +
                  ", ".join(map(str, seg)) + ">"})


@_auto
def batch_norm_inference(x, scale, bias, mean, variance, epsilon=1e-5):
    dt = _float_common(x, scale, bias, mean, variance)
    return emit1("paddle.batch_norm_inference",
                 [_t(v, dt) for v in (x, scale, bias, mean, variance)],
                 {"epsilon": _float_attr(epsilon)})


@_auto
def one_hot(labels, num_classes, dtype=np.float32):
    labels = _index_t(labels)
    hit = equal(expand_dims(labels, -1), np.arange(num_classes,
                                                   dtype=labels.dtype))
    return _cast(hit, dtype)


def _random_uniform(seed, shape, low, high, dtype):
    dt = to_np_dtype(dtype, "random_uniform")
    if dt.kind != "f":
        raise dtype_error(f"random_uniform makes floats, not {dt}")
    shape = _norm_shape(shape)
    seed = _t(seed, np.int64)
    if seed.ndim != 0:
        seed = reshape(seed, ())
    return emit1("paddle.rng_uniform", [seed],
                 {"low": _float_attr(low), "high": _float_attr(high)},
                 result_types=[mlir_type(shape, dt)])


_random_uniform_auto = _auto(_random_uniform)


def random_uniform(seed, shape, low=0.0, high=1.0, dtype=np.float32):
    """Uniform numbers in [low, high): a pure function of the int64 `seed`
    (a Python int or a traced value) and the position (paddle.rng_uniform)."""
    if not isinstance(seed, Tracer):
        # An array, so eager calls with a new seed reuse the compiled code.
        seed = np.asarray(seed, dtype=np.int64)
    return _random_uniform_auto(seed, tuple(_norm_shape(shape)), low, high,
                                np.dtype(dtype))


# -- array creation (numpy arrays: constants in a trace) ----------------------

def _np_dtype_or(dtype, default):
    return to_np_dtype(default if dtype is None else dtype, "an array")


def zeros(shape, dtype=np.float32):
    return np.zeros(shape, _np_dtype_or(dtype, np.float32))


def ones(shape, dtype=np.float32):
    return np.ones(shape, _np_dtype_or(dtype, np.float32))


def full(shape, fill_value, dtype=None):
    return np.full(shape, fill_value, dtype=None if dtype is None else
                   _np_dtype_or(dtype, None))


def zeros_like(x, dtype=None):
    return np.zeros(_shape(x), _np_dtype_or(dtype, _dtype(x)))


def ones_like(x, dtype=None):
    return np.ones(_shape(x), _np_dtype_or(dtype, _dtype(x)))


def full_like(x, fill_value, dtype=None):
    return np.full(_shape(x), fill_value, _np_dtype_or(dtype, _dtype(x)))


def arange(*args, dtype=None):
    return np.arange(*args, dtype=dtype)


def eye(n, m=None, k=0, dtype=np.float32):
    return np.eye(n, m, k, dtype=_np_dtype_or(dtype, np.float32))


def asarray(x, dtype=None):
    """Tracers stay tracers (cast to `dtype`); anything else becomes a
    numpy array."""
    if isinstance(x, Tracer):
        return x if dtype is None else astype(x, dtype)
    arr = np.asarray(x, dtype=dtype)
    to_np_dtype(arr.dtype, "asarray")
    return arr


array = asarray


def shape(x):
    return tuple(_shape(x))


def ndim(x):
    return len(_shape(x))


# -- tracer methods and operators ---------------------------------------------

def _swap(f):
    return lambda a, b: f(b, a)


def _install():
    T = Tracer
    T.__add__, T.__radd__ = add, _swap(add)
    T.__sub__, T.__rsub__ = subtract, _swap(subtract)
    T.__mul__, T.__rmul__ = multiply, _swap(multiply)
    T.__truediv__, T.__rtruediv__ = divide, _swap(divide)
    T.__floordiv__, T.__rfloordiv__ = floor_divide, _swap(floor_divide)
    T.__mod__, T.__rmod__ = remainder, _swap(remainder)
    T.__pow__, T.__rpow__ = power, _swap(power)
    T.__matmul__, T.__rmatmul__ = matmul, _swap(matmul)
    T.__and__, T.__rand__ = bitwise_and, _swap(bitwise_and)
    T.__or__, T.__ror__ = bitwise_or, _swap(bitwise_or)
    T.__xor__, T.__rxor__ = bitwise_xor, _swap(bitwise_xor)
    T.__neg__ = negative
    T.__pos__ = lambda x: x
    T.__abs__ = abs
    T.__invert__ = invert
    T.__lt__, T.__le__ = less, less_equal
    T.__gt__, T.__ge__ = greater, greater_equal
    T.__eq__, T.__ne__ = equal, not_equal
    T.__hash__ = object.__hash__
    T.__getitem__ = _getitem
    T.T = property(lambda x: transpose(x))
    T.mT = property(lambda x: swapaxes(x, -1, -2))
    T.reshape = lambda x, *s: reshape(x, s[0] if len(s) == 1 else s)
    T.transpose = lambda x, *a: transpose(
        x, None if not a else (a[0] if len(a) == 1 and not isinstance(
            a[0], int) else a))
    T.astype = astype
    T.sum, T.mean, T.prod = sum, mean, prod
    T.max, T.min = max, min
    T.argmax, T.argmin = argmax, argmin
    T.var, T.std = var, std
    T.clip = clip
    T.ravel = T.flatten = ravel
    T.squeeze = squeeze
    T.swapaxes = swapaxes
    T.dot = dot


_install()
