"""What pm.nn needs from the tracing frontend, in one place.

- `trace(fn, example_args, name)`: a `_core.Module` holding one public
  function `name` traced from `fn(*tracers) -> tuple of arrays`, with one
  argument per example array (in order; numpy arrays `fn` closes over become
  constants). TrainStep needs the module itself, not just a callable, to
  mark donated arguments (`paddle.aliasing_output`) before compiling, and
  `export` saves it.
- `value_and_grad(f)`: pm.value_and_grad with an auxiliary result.
- `trace_functions([(name, fn, example_args), ...])`: several in one module.
- `compile(module)`: `_core.compile`; `core()`: `_core` itself.
- `donation_problem(array)`: why a compiled call cannot update `array` in
  place, or None (pm.jit's check of donated arguments).
"""

import importlib


def _mod(name):
    # Imported on first use: pm.nn itself is importable (and runs eagerly on
    # numpy) without the native extension.
    return importlib.import_module(f"paddle_mlir.{name}")


def trace(fn, example_args, name):
    return trace_functions([(name, fn, example_args)])


def trace_functions(functions):
    """One module with a public function per (name, fn, example_args)."""
    _core, _trace = _mod("_core"), _mod("_trace")
    module = _core.Module(_trace.context())
    for name, fn, example_args in functions:
        types = [_trace.mlir_type(a.shape, a.dtype) for a in example_args]
        fb = module.add_function(name, types)
        with _trace.Trace(module, fb) as t:
            tracers = [_trace.Tracer(v, t) for v in fb.args]
            results = fn(*tracers)
            fb.ret([t.lift(r) for r in results])
    return module


def value_and_grad(f):
    import paddle_mlir as pm

    return pm.value_and_grad(f, has_aux=True)


def compile(module):  # noqa: A001 (the _core name)
    return _mod("_core").compile(module)


def core():
    return _mod("_core")


def donation_problem(array):
    return _mod("_jit").donation_problem(array)
