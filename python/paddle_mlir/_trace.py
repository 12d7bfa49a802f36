"""Tracing: tracers over `_core.Value`s, the trace stack, op emission.

A trace owns one function being built in a `_core.Module`. Tracers are the
values user code sees while a function is traced; every numpy-like function
turns its inputs into tracers of the innermost trace and appends paddle ops
to it, with the user's `file:line:col` as the op's location.

A tracer of an enclosing trace used inside an inner one (a closure over an
outer value, e.g. `grad(lambda x: f(x, w))` under `jit`) becomes an extra
argument of the inner function: the inner trace stops with `_NewCapture`,
the tracer is added to the inner function's arguments, and the function is
traced again.
"""

import os
import sys
import threading

import numpy as np

from . import _core

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# numpy dtype <-> paddle element type. bf16 has no numpy dtype and stays
# out of the frontend.
_NP_TO_MLIR = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.float16): "f16",
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
}
_MLIR_TO_NP = {v: k for k, v in _NP_TO_MLIR.items()}

# Python scalars passed to jit are weakly typed: they take the dtype of the
# arrays they meet (x * 2.0 stays f32), as numpy 2 (NEP 50) and JAX do.
# These are the dtypes they are stored in until then.
_WEAK_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64),
                float: np.dtype(np.float64)}


class ShapeError(ValueError):
    """Shapes that do not fit an operation; the message starts with the
    user's file:line."""


class DTypeError(TypeError):
    """An unsupported dtype or a dtype combination numpy rejects; the
    message starts with the user's file:line."""


class TracerError(TypeError):
    """A tracer used where a concrete value is needed (bool(), int(),
    numpy conversion, shapes), or used after its trace ended."""


def user_frame():
    """The innermost Python frame outside the paddle_mlir package."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not os.path.abspath(fn).startswith(_PKG_DIR):
            return f
        f = f.f_back
    return None


def user_location():
    """(file, line, col) of the user's code calling into the package."""
    f = user_frame()
    if f is None:
        return None
    col = 1
    try:
        pos = list(f.f_code.co_positions())[f.f_lasti // 2]
        if pos[2] is not None:
            col = pos[2] + 1
    except (AttributeError, IndexError):
        pass
    return (f.f_code.co_filename, f.f_lineno, col)


def where():
    """'file:line' of the user's code, the prefix of every frontend error."""
    loc = user_location()
    return f"{loc[0]}:{loc[1]}" if loc else "<unknown>"


def shape_error(msg):
    return ShapeError(f"{where()}: {msg}")


def dtype_error(msg):
    return DTypeError(f"{where()}: {msg}")


def to_np_dtype(dtype, what="value"):
    """A supported numpy dtype, or a DTypeError naming it."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise dtype_error(f"unsupported dtype {dtype!r} for {what}") from None
    if dt not in _NP_TO_MLIR:
        raise dtype_error(
            f"unsupported dtype {dt} for {what} (supported: float16, "
            "float32, float64, bool, int8, int32, int64)")
    return dt


def mlir_type(shape, dtype):
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{_NP_TO_MLIR[np.dtype(dtype)]}>"


_state = threading.local()


def _stack():
    s = getattr(_state, "stack", None)
    if s is None:
        s = _state.stack = []
    return s


def current_trace():
    s = _stack()
    return s[-1] if s else None


def tracing():
    return bool(_stack())


_ctx = None


def context():
    """The one Context every module of the frontend lives in (inline_call
    needs caller and callee in the same Context)."""
    global _ctx
    if _ctx is None:
        _ctx = _core.Context()
    return _ctx


class _NewCapture(BaseException):
    # BaseException: user code catching Exception must not swallow it.
    def __init__(self, trace, tracer):
        super().__init__("internal: new capture")
        self.trace = trace
        self.tracer = tracer


class Trace:
    def __init__(self, module, fb, captures=()):
        self.module = module
        self.fb = fb
        self.active = True
        # id(outer tracer) -> (outer tracer, inner Value)
        self.capture_map = {}
        n = len(fb.args) - len(captures)
        for c, v in zip(captures, fb.args[n:]):
            self.capture_map[id(c)] = (c, v)
        self._consts = {}

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        s = _stack()
        assert s and s[-1] is self
        s.pop()
        self.active = False
        return False

    def lift(self, x, dtype=None):
        """The Value of `x` in this trace: a tracer of this trace, a
        captured outer tracer, or a constant made from an array/scalar."""
        if isinstance(x, Tracer):
            if x._trace is self:
                return x._value
            hit = self.capture_map.get(id(x))
            if hit is not None:
                return hit[1]
            if not x._trace.active:
                raise TracerError(
                    f"{where()}: a tracer escaped the trace that made it "
                    "(stored in a global or returned through a side "
                    "channel); return values from the traced function "
                    "instead")
            raise _NewCapture(self, x)
        arr = np.asarray(x, dtype=dtype)
        to_np_dtype(arr.dtype, "a constant")
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")  # (ascontiguousarray makes 0-d 1-d)
        return self.fb.constant(arr, loc=user_location())

    def emit(self, name, operands, attributes=None, result_types=None):
        vals = [self.lift(o) for o in operands]
        try:
            res = self.fb.op(name, vals, attributes=attributes or {},
                             result_types=result_types, loc=user_location())
        except _core.MLIRError as e:
            # The diagnostic holds the location; lead with it as every
            # frontend error does.
            msg = str(e)
            here = where()
            if not msg.startswith(here):
                msg = f"{here}: {msg}"
            raise ShapeError(msg) from None
        return [Tracer(v, self) for v in res]


def emit(name, operands, attributes=None, result_types=None):
    """Appends op `name` to the innermost trace and returns its results as
    tracers (one list)."""
    return current_trace().emit(name, operands, attributes, result_types)


def emit1(name, operands, attributes=None, result_types=None):
    return emit(name, operands, attributes, result_types)[0]


class Tracer:
    """An array value inside a trace (jit, grad). It has a static `shape` and
    `dtype` and the NumPy-like methods and operators; its elements are only
    known when the compiled function runs."""

    __slots__ = ("_value", "_trace", "shape", "dtype", "weak")
    # numpy_array + tracer: numpy defers to Tracer.__radd__ and friends.
    __array_ufunc__ = None

    def __init__(self, value, trace, weak=False):
        self._value = value
        self._trace = trace
        shape = value.shape
        if any(d is None for d in shape):
            raise TracerError("internal: dynamic shape in a trace")
        self.shape = tuple(shape)
        dt = _MLIR_TO_NP.get(value.dtype)
        if dt is None:
            raise DTypeError(f"{where()}: unsupported element type "
                             f"{value.dtype} in the frontend")
        self.dtype = dt
        self.weak = weak

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError(f"{where()}: len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError(f"{where()}: iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        return f"Tracer(shape={self.shape}, dtype={self.dtype})"

    def _concrete(self, what):
        raise TracerError(
            f"{where()}: {what} needs a concrete value, but this array is "
            f"traced (shape {self.shape}, dtype {self.dtype}); use pm.where "
            "for data-dependent choices, or mark the argument static "
            "(static_argnums / static_argnames)")

    def __bool__(self):
        self._concrete("bool()")

    def __int__(self):
        self._concrete("int()")

    def __float__(self):
        self._concrete("float()")

    def __index__(self):
        self._concrete("use as an index")

    def __array__(self, *a, **k):
        self._concrete("conversion to a numpy array")

    __hash__ = object.__hash__


def is_tracer(x):
    return isinstance(x, Tracer)
