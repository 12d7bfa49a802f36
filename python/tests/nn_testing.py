"""Running a pm.nn module eagerly (numpy) or compiled (pm.jit), for tests.

"compiled" traces `functional_call(model, params, buffers, inputs)` with
the parameters and buffers as jit arguments, so the test exercises the
paddle ops, the lowering and the runtime; "eager" runs the same layer code
on numpy arrays. Both are compared with nn_numpy_reference.
"""

import numpy as np
import pytest


def has_frontend():
    try:
        import paddle_mlir as pm
    except ImportError:
        return False
    return hasattr(pm, "jit") and hasattr(pm, "value_and_grad")


# Compiled runs need the tracing frontend (pm.jit, pm.value_and_grad); a
# checkout without it runs the eager halves only and says why.
requires_frontend = pytest.mark.skipif(
    not has_frontend(), reason="the tracing frontend (pm.jit, pm.value_and_grad) is not in "
    "this checkout")

MODES = ["eager", "compiled"]
# conv2d and pooling also as slices + matmul / reductions (_ops.DECOMPOSE).
KERNEL_MODES = MODES + ["compiled-decomposed"]


def forward(mode, model, *inputs):
    """Returns (output(s) as numpy, new buffers dict as numpy)."""
    import paddle_mlir as pm
    from paddle_mlir import nn

    from paddle_mlir.nn import _ops

    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    if mode == "eager":
        out, new_buffers = nn.functional_call(model, params, buffers, inputs)
    else:
        if not has_frontend():
            pytest.skip("the tracing frontend (pm.jit) is not in this checkout")
        def f(p, b, xs):
            return nn.functional_call(model, p, b, xs)

        import paddle_mlir as pm

        saved = dict(_ops.DECOMPOSE)
        if mode == "compiled-decomposed":
            _ops.DECOMPOSE.update(conv2d=True, pool2d=True)
        try:
            out, new_buffers = pm.jit(f)(params, buffers, tuple(inputs))
        finally:
            _ops.DECOMPOSE.update(saved)
    if isinstance(out, (tuple, list)):
        out = tuple(np.asarray(o) for o in out)
    else:
        out = np.asarray(out)
    return out, {k: np.asarray(v) for k, v in new_buffers.items()}


def assert_close(actual, expected, rtol, atol, what=""):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=rtol, atol=atol,
                               err_msg=what)
