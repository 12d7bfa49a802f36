"""grad, value_and_grad, vjp over pytrees, on top of the `paddle-autodiff`
pass.

The function is traced into a function `f` of a fresh module, next to a
private declaration `f_vjp(f's args, one cotangent per result) -> (f's
results, one gradient per wrt arg)` with `paddle.vjp_of = @f`; the pass
gives it a body, and `f_vjp` is inlined into the enclosing trace. Because
the inlined gradient is plain paddle ops, grad of grad works, and jit and
grad compose in either order. Called on concrete arrays (no trace active),
the transformed function is itself jit-compiled and cached per signature.
"""

import numbers

import numpy as np

from . import _core
from ._jit import _LRU, Jitted, _Aval, _aval_of, trace_function
from ._trace import (Tracer, context, current_trace, dtype_error, mlir_type,
                     shape_error, tracing, user_location)
from ._tree import tree_flatten, tree_unflatten

PIPELINE = "builtin.module(inline,paddle-autodiff,canonicalize,cse)"


class _VjpModule:
    """`fun` traced for some primals, with `f_vjp` built by the pass."""

    def __init__(self, fun, args, kwargs, argnums, has_aux,
                 require_scalar=False):
        leaves, self.in_tree = tree_flatten((list(args), kwargs))
        self.avals = [_aval_of(x, f"argument leaf {i}")
                      for i, x in enumerate(leaves)]
        self.leaves = leaves
        self.has_aux = has_aux
        # Flat indices of the leaves of the differentiated arguments.
        self.wrt, self.wrt_trees = [], []
        offset = 0
        for i, a in enumerate(args):
            n = len(tree_flatten(a)[0])
            if i in argnums:
                self.wrt_trees.append((i, tree_flatten(a)[1],
                                       list(range(offset, offset + n))))
                for j in range(offset, offset + n):
                    if self.avals[j].dtype.kind != "f":
                        raise dtype_error(
                            f"grad: argument {i} has a leaf of dtype "
                            f"{self.avals[j].dtype}; only float arguments "
                            "can be differentiated")
                self.wrt.extend(range(offset, offset + n))
            offset += n

        m = self.module = _core.Module(context())
        trees = {}

        def flat_fun(tracers):
            a, kw = tree_unflatten(self.in_tree, tracers)
            out = fun(*a, **kw)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise TypeError(f"{user_location_str()}: has_aux=True "
                                    "needs the function to return a pair "
                                    "(output, aux)")
                out, aux = out
            out_leaves, trees["out"] = tree_flatten(out)
            aux_leaves, trees["aux"] = tree_flatten(aux)
            trees["n_out"] = len(out_leaves)
            return out_leaves + aux_leaves

        name = "f_full" if has_aux else "f"
        self.captures, all_avals = trace_function(m, name, flat_fun,
                                                  self.avals)
        self.out_tree, self.aux_tree = trees["out"], trees["aux"]
        n_out = trees["n_out"]
        self.out_avals = all_avals[:n_out]
        self.full_name = name
        arg_types = [a.type for a in self.avals] + [
            mlir_type(c.shape, c.dtype) for c in self.captures]
        if has_aux:
            fb = m.add_function("f", arg_types, loc=user_location())
            res = fb.inline_call(m, "f_full", fb.args)
            fb.ret(res[:n_out])
        if require_scalar and (len(self.out_avals) != 1
                               or self.out_avals[0].shape != ()):
            shapes = [a.shape for a in self.out_avals]
            raise shape_error(f"grad needs a function returning one scalar, "
                              f"got outputs of shapes {shapes}")
        if require_scalar and self.out_avals[0].dtype.kind != "f":
            raise dtype_error(f"grad needs a float result, got "
                              f"{self.out_avals[0].dtype}")
        out_types = [a.type for a in self.out_avals]
        wrt_types = [self.avals[i].type for i in self.wrt]
        m.add_declaration("f_vjp", arg_types + out_types,
                          out_types + wrt_types)
        m.set_function_attr("f_vjp", "paddle.vjp_of", "@f")
        m.set_function_attr("f_vjp", "paddle.wrt", "array<i64: " + ", ".join(
            map(str, self.wrt)) + ">" if self.wrt else "array<i64>")
        m.run_passes(PIPELINE)

    def _operands(self):
        return list(self.leaves) + list(self.captures)

    def primal(self):
        """(outputs, aux) computed in the current trace."""
        tr = current_trace()
        vals = tr.fb.inline_call(self.module, self.full_name,
                                 [tr.lift(x) for x in self._operands()],
                                 loc=user_location())
        ts = [Tracer(v, tr) for v in vals]
        n = len(self.out_avals)
        out = tree_unflatten(self.out_tree, ts[:n])
        aux = tree_unflatten(self.aux_tree, ts[n:]) if self.has_aux else None
        return out, aux

    def pullback(self, cts_leaves):
        """Gradients (flat, one per wrt leaf) for the output cotangents."""
        tr = current_trace()
        cts = []
        for ct, a in zip(cts_leaves, self.out_avals):
            from ._ops import _t
            t = _t(ct, a.dtype)
            if t.shape != a.shape:
                raise shape_error(f"vjp: cotangent of shape {t.shape} for "
                                  f"an output of shape {a.shape}")
            cts.append(t)
        ops = [tr.lift(x) for x in self._operands()] + [tr.lift(c)
                                                        for c in cts]
        vals = tr.fb.inline_call(self.module, "f_vjp", ops,
                                 loc=user_location())
        return [Tracer(v, tr) for v in vals[len(self.out_avals):]]

    def grads_tree(self, flat_grads, argnums_int):
        by_flat = dict(zip(self.wrt, flat_grads))
        trees = [tree_unflatten(tree, [by_flat[j] for j in idx])
                 for _, tree, idx in self.wrt_trees]
        return trees[0] if argnums_int else tuple(trees)


def user_location_str():
    loc = user_location()
    return f"{loc[0]}:{loc[1]}" if loc else "<unknown>"


def _check_transform(who, fun, argnums):
    """What grad / value_and_grad can check before the first call."""
    if not callable(fun):
        raise TypeError(f"{user_location_str()}: {who} needs a function, got "
                        f"{type(fun).__name__} {fun!r}")
    nums = argnums if isinstance(argnums, (tuple, list)) else (argnums,)
    if not all(isinstance(a, numbers.Integral) and not isinstance(a, bool)
               for a in nums):
        raise TypeError(f"{user_location_str()}: {who}: argnums must be an "
                        f"int or a tuple of ints (argument positions), got "
                        f"{argnums!r}")


def _norm_argnums(argnums, nargs):
    single = isinstance(argnums, numbers.Integral)
    nums = (argnums,) if single else tuple(argnums)
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise TypeError(f"{user_location_str()}: argnums {argnums} out "
                            f"of range for {nargs} positional arguments")
        out.append(int(a) % nargs)
    return single, tuple(out)


# Bounded: a transform of a function made per call (a lambda in a loop)
# would otherwise keep every compiled module alive.
_TRANSFORMS = _LRU(128)


def _eager(key, traced):
    """`traced` jit-compiled, shared by every transform of the same
    (function, options)."""
    j = _TRANSFORMS.get(key)
    if j is None:
        j = Jitted(traced)
        _TRANSFORMS.put(key, j)
        j.name = "grad_" + j.name
    return j


def _hashable(argnums):
    return int(argnums) if isinstance(argnums, numbers.Integral) \
        else tuple(int(a) for a in argnums)


def value_and_grad(fun, argnums=0, has_aux=False):
    """`f(*args) -> (value, grads)` (with has_aux: ((value, aux), grads)).
    The value must be a float scalar; grads match the pytree structure of
    the arguments in `argnums` (one tree for an int, a tuple for a tuple)."""
    _check_transform("value_and_grad", fun, argnums)

    def traced(*args, **kwargs):
        single, nums = _norm_argnums(argnums, len(args))
        vm = _VjpModule(fun, args, kwargs, nums, has_aux,
                        require_scalar=True)
        out, aux = vm.primal()
        one = np.ones((), vm.out_avals[0].dtype)
        grads = vm.grads_tree(vm.pullback([one]), single)
        return ((out, aux) if has_aux else out), grads

    def wrapper(*args, **kwargs):
        if tracing():
            return traced(*args, **kwargs)
        return _eager((fun, "vg", _hashable(argnums), has_aux), traced)(*args, **kwargs)

    wrapper.__name__ = "value_and_grad_" + getattr(fun, "__name__", "f")
    wrapper.__wrapped__ = fun
    return wrapper


def grad(fun, argnums=0, has_aux=False):
    """The gradient of a float-scalar function (see value_and_grad)."""
    _check_transform("grad", fun, argnums)
    vg = value_and_grad(fun, argnums, has_aux)

    def traced(*args, **kwargs):
        v, g = vg(*args, **kwargs)
        return (g, v[1]) if has_aux else g

    def wrapper(*args, **kwargs):
        if tracing():
            return traced(*args, **kwargs)
        return _eager((fun, "g", _hashable(argnums), has_aux), traced)(*args, **kwargs)

    wrapper.__name__ = "grad_" + getattr(fun, "__name__", "f")
    wrapper.__wrapped__ = fun
    return wrapper


def _vjp_eval(fun, has_aux, primals, cts):
    vm = _VjpModule(fun, primals, {}, tuple(range(len(primals))), has_aux)
    out, aux = vm.primal()
    if cts is None:
        return out, aux, None
    ct_leaves, ct_tree = tree_flatten(cts)
    if ct_tree != vm.out_tree:
        raise shape_error("vjp: the cotangents' structure differs from the "
                          "function's outputs")
    flat = vm.pullback(ct_leaves)
    return out, aux, vm.grads_tree(flat, False)


_VJP_JIT = Jitted(_vjp_eval, static_argnums=(0, 1))
_VJP_JIT.name = "vjp"


def vjp(fun, *primals, has_aux=False):
    """`(outputs, vjp_fn)` (with has_aux: `(outputs, vjp_fn, aux)`);
    `vjp_fn(cotangents)` returns a tuple with one gradient tree per primal.
    """
    _check_transform("vjp", fun, 0)
    if tracing():
        vm = _VjpModule(fun, primals, {}, tuple(range(len(primals))),
                        has_aux)
        out, aux = vm.primal()

        def vjp_fn(cts):
            ct_leaves, ct_tree = tree_flatten(cts)
            if ct_tree != vm.out_tree:
                raise shape_error("vjp: the cotangents' structure differs "
                                  "from the function's outputs")
            return vm.grads_tree(vm.pullback(ct_leaves), False)
    else:
        out, aux, _ = _VJP_JIT(fun, has_aux, primals, None)

        def vjp_fn(cts):
            return _VJP_JIT(fun, has_aux, primals, cts)[2]

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
