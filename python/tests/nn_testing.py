"""Running a pm.nn module eagerly (numpy) or compiled (pm.jit), for tests.

"compiled" traces `functional_call(model, params, buffers, inputs)` with
the parameters and buffers as jit arguments, so the test exercises the
paddle ops, the lowering and the runtime; "eager" runs the same layer code
on numpy arrays. Both are compared with nn_numpy_reference.
"""

import numpy as np


MODES = ["eager", "compiled"]


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
        def f(p, b, xs):
            return nn.functional_call(model, p, b, xs)

        import paddle_mlir as pm

        out, new_buffers = pm.jit(f)(params, buffers, tuple(inputs))
    if isinstance(out, (tuple, list)):
        out = tuple(np.asarray(o) for o in out)
    else:
        out = np.asarray(out)
    return out, {k: np.asarray(v) for k, v in new_buffers.items()}


def assert_close(actual, expected, rtol, atol, what=""):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=rtol, atol=atol,
                               err_msg=what)
