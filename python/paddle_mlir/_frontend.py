"""The public frontend API, re-exported by `paddle_mlir/__init__.py`.

docs/python.md lists it; keep the two in step.
"""

import numpy as _np

from . import _ops
from ._autodiff import grad, value_and_grad, vjp
from ._jit import (Jitted, ShapeDtype, compile_count, eval_shape, jit,
                   lower, save, compile_aot, set_default_opt_level)
from ._sharding import Mesh, P, ShardedArray, device_put, shard
from ._trace import DTypeError, ShapeError, Tracer, TracerError
from ._tree import (register_pytree_node, tree_flatten, tree_leaves,
                    tree_map, tree_structure, tree_unflatten)

_OPS = [
    # elementwise
    "exp", "log", "tanh", "sin", "cos", "sqrt", "rsqrt", "floor", "ceil",
    "rint", "round", "abs", "absolute", "negative", "sign", "sigmoid", "erf",
    "relu", "gelu", "square", "reciprocal", "log1p", "expm1", "logical_not",
    "invert", "add", "subtract", "multiply", "divide", "true_divide",
    "floor_divide", "remainder", "mod", "power", "maximum", "minimum",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "where", "clip", "astype",
    # reductions
    "sum", "prod", "mean", "max", "amax", "min", "amin", "argmax", "argmin",
    "var", "std", "logsumexp",
    # shapes and indexing
    "reshape", "ravel", "transpose", "permute_dims", "swapaxes", "moveaxis",
    "expand_dims", "squeeze", "broadcast_to", "concatenate", "concat",
    "stack", "pad", "take", "gather", "take_along_axis", "scatter_add",
    # linear algebra
    "matmul", "dot", "outer",
    # neural-network pieces
    "conv2d", "max_pool2d", "avg_pool2d", "softmax", "log_softmax",
    "layer_norm", "batch_norm_inference", "one_hot", "random_uniform",
    # creation
    "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
    "arange", "eye", "asarray", "array", "shape", "ndim",
]

for _name in _OPS:
    globals()[_name] = getattr(_ops, _name)

# The array type user code sees inside traces (outside them: numpy arrays).
Tensor = Tracer

float16, float32, float64 = _np.float16, _np.float32, _np.float64
int8, int32, int64, bool_ = _np.int8, _np.int32, _np.int64, _np.bool_

__all__ = _OPS + [
    "jit", "Jitted", "lower", "save", "compile_aot", "compile_count", "eval_shape",
    "ShapeDtype", "set_default_opt_level",
    "Mesh", "P", "ShardedArray", "device_put", "shard",
    "grad", "value_and_grad", "vjp",
    "Tracer", "Tensor", "ShapeError", "DTypeError", "TracerError",
    "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves",
    "tree_structure", "register_pytree_node",
    "float16", "float32", "float64", "int8", "int32", "int64", "bool_",
]
