"""NumPy's dtype rules, asked of numpy itself.

The result dtype of an operation is what the numpy ufunc gives on empty
arrays of the operands' dtypes; Python scalars (and tracers made from Python
scalars) take part as Python scalars, so they are weakly typed exactly as
numpy 2 (NEP 50) treats them: `float32_array * 2.0` stays float32.
"""

import functools
import warnings

import numpy as np

from ._trace import Tracer, dtype_error, to_np_dtype

_WEAK = {"weak_bool": True, "weak_int": 1, "weak_float": 1.0}


def _key(x):
    if isinstance(x, Tracer):
        if x.weak:
            return {np.bool_: "weak_bool", np.int64: "weak_int",
                    np.float64: "weak_float"}[x.dtype.type]
        return x.dtype.str
    if isinstance(x, (bool, np.bool_)) and not isinstance(x, np.ndarray) \
            and type(x) is bool:
        return "weak_bool"
    if type(x) is int:
        return "weak_int"
    if type(x) is float:
        return "weak_float"
    if isinstance(x, complex):
        raise dtype_error("complex numbers are not supported")
    arr = np.asarray(x)
    return to_np_dtype(arr.dtype, "an operand").str


def _dummy(k):
    if k in _WEAK:
        return _WEAK[k]
    return np.empty((0,), dtype=np.dtype(k))


@functools.lru_cache(maxsize=None)
def _ufunc_dtype(ufunc_name, keys):
    uf = getattr(np, ufunc_name)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            r = uf(*[_dummy(k) for k in keys])
        except TypeError as e:
            return e
    return np.asarray(r).dtype


def ufunc_dtype(ufunc_name, *operands):
    """The dtype numpy's `ufunc_name` gives for these operands, or a
    DTypeError naming the operands' dtypes."""
    keys = tuple(_key(o) for o in operands)
    r = _ufunc_dtype(ufunc_name, keys)
    if isinstance(r, Exception):
        names = ", ".join(k if k.startswith("weak") else str(np.dtype(k))
                          for k in keys)
        raise dtype_error(f"{ufunc_name} is not defined for dtypes "
                          f"({names}): {r}")
    return to_np_dtype(r, f"the result of {ufunc_name}")


def result_type(*operands):
    """The common dtype of the operands (numpy's promotion with weak Python
    scalars)."""
    keys = tuple(_key(o) for o in operands)
    dts = [_dummy(k) for k in keys]
    return to_np_dtype(np.result_type(*dts), "the promoted operands")
