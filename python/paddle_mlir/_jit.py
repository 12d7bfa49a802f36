"""@jit: trace once per input signature, compile, cache, run.

The cache key of a call is the pytree structure of the arguments, each array
leaf's (shape, dtype, weak) and the values of the static arguments. Calls
made while another function is being traced (jit inside jit, grad, vjp)
are traced inline: the enclosing trace compiles the whole thing once.
"""

import functools
import inspect
import re

import numpy as np

from . import _core
from ._trace import (DTypeError, Trace, Tracer, TracerError, _NewCapture,
                     _WEAK_DTYPES, context, dtype_error, mlir_type,
                     to_np_dtype, tracing, user_location, where)
from ._tree import tree_flatten, tree_unflatten

_stats = {"compiles": 0, "traces": 0}
# opt_level of jit calls that do not give one: 3 (the CPU pipeline's full
# optimization) unless set_default_opt_level changed it. 0 compiles about
# ten times faster, which tests of the IR building use.
_config = {"opt_level": 3}


def set_default_opt_level(level):
    """Sets the opt_level jit uses when none is given (also for eager ops
    and grad on concrete arrays); returns the previous one."""
    if level not in (0, 1, 2, 3):
        raise ValueError(f"opt_level must be 0..3, got {level!r}")
    prev, _config["opt_level"] = _config["opt_level"], level
    return prev


def compile_count():
    """How many modules the frontend has compiled in this process."""
    return _stats["compiles"]


class _Aval:
    """What a traced argument is known to be: shape, dtype, weak typing."""
    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak=False):
        self.shape, self.dtype, self.weak = tuple(shape), np.dtype(dtype), weak

    def key(self):
        return (self.shape, self.dtype.str, self.weak)

    @property
    def type(self):
        return mlir_type(self.shape, self.dtype)


def _is_array_leaf(x):
    return isinstance(x, (np.ndarray, np.generic, Tracer))


def _aval_of(x, what):
    if type(x) in _WEAK_DTYPES:
        return _Aval((), _WEAK_DTYPES[type(x)], weak=True)
    if isinstance(x, Tracer):
        return _Aval(x.shape, x.dtype, x.weak)
    dt = np.asarray(x).dtype if not isinstance(x, np.ndarray) else x.dtype
    if dt.kind == "c":
        raise dtype_error(f"unsupported dtype {dt} for {what}: complex "
                          "numbers are not supported")
    return _Aval(np.shape(x), to_np_dtype(dt, what))


def _sanitize(name):
    name = re.sub(r"[^A-Za-z0-9_]", "_", name or "f")
    return name if name[0].isalpha() or name[0] == "_" else "f_" + name


def trace_function(module, name, flat_fun, avals, captures=(),
                   visibility="public"):
    """Traces `flat_fun(list_of_tracers) -> list_of_leaves` into function
    `name` of `module`. Tracers of enclosing traces that the function uses
    become extra arguments after `avals`; returns those (the outer tracers)
    and the avals of the results."""
    captures = list(captures)
    while True:
        arg_types = [a.type for a in avals] + [
            mlir_type(c.shape, c.dtype) for c in captures]
        fb = module.add_function(name, arg_types, visibility=visibility,
                                 loc=user_location())
        trace = Trace(module, fb, captures)
        try:
            with trace:
                ins = [Tracer(v, trace, a.weak)
                       for v, a in zip(fb.args, avals)]
                outs = flat_fun(ins)
                vals, out_avals = [], []
                for o in outs:
                    v = trace.lift(o)
                    vals.append(v)
                    t = o if isinstance(o, Tracer) else Tracer(v, trace)
                    out_avals.append(_Aval(t.shape, t.dtype, False))
                fb.ret(vals, loc=user_location())
        except _NewCapture as e:
            if e.trace is not trace:
                raise
            captures.append(e.tracer)
            module.erase_function(name)
            continue
        except BaseException:
            try:
                module.erase_function(name)
            except Exception:  # noqa: BLE001 (the first error matters)
                pass
            raise
        _stats["traces"] += 1
        return captures, out_avals


class _Compiled:
    def __init__(self, module, name, exe, out_tree, donated):
        self.module, self.name, self.exe = module, name, exe
        self.out_tree, self.donated = out_tree, donated


class Jitted:
    """A function compiled per input signature; see `jit`."""

    def __init__(self, fun, static_argnums=(), static_argnames=(),
                 donate_argnums=(), auto_static=False, opt_level=None):
        self.fun = fun
        self.opt_level = opt_level
        self._sig = None
        try:
            self._sig = inspect.signature(fun)
        except (TypeError, ValueError):
            pass
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        if isinstance(donate_argnums, int):
            donate_argnums = (donate_argnums,)
        self.static_argnums = tuple(static_argnums)
        self.static_argnames = tuple(static_argnames)
        self.donate_argnums = tuple(donate_argnums)
        self.auto_static = auto_static
        self._cache = {}
        self.name = _sanitize(getattr(fun, "__name__", "f"))
        functools.update_wrapper(self, fun, updated=())

    # -- signature -------------------------------------------------------------

    def _check_args(self, args, kwargs):
        if self._sig is None:
            return
        try:
            self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{where()}: {self.name}(): {e}") from None

    def _split(self, args, kwargs):
        """(dynamic leaves, their avals, key of everything else, rebuild)."""
        n = len(args)
        static_pos = {i % n if n else i for i in self.static_argnums
                      if -n <= i < n}
        dyn_args = [None if i in static_pos else a
                    for i, a in enumerate(args)]
        stat_args = tuple((i, args[i]) for i in sorted(static_pos))
        dyn_kwargs = {k: v for k, v in kwargs.items()
                      if k not in self.static_argnames}
        stat_kwargs = tuple(sorted((k, v) for k, v in kwargs.items()
                                   if k in self.static_argnames))
        leaves, tree = tree_flatten((dyn_args, dyn_kwargs))
        dyn, avals, stat_leaves, kinds = [], [], [], []
        for i, leaf in enumerate(leaves):
            is_arr = _is_array_leaf(leaf) or (
                not self.auto_static and type(leaf) in _WEAK_DTYPES)
            if is_arr:
                avals.append(_aval_of(leaf, f"argument leaf {i}"))
                dyn.append(leaf)
                kinds.append(None)
            elif self.auto_static:
                kinds.append(("static", leaf))
            else:
                raise TypeError(
                    f"{where()}: argument leaf {i} of {self.name}() is a "
                    f"{type(leaf).__name__}, not an array; mark it static "
                    "with static_argnums / static_argnames")
        key_static = (stat_args, stat_kwargs, tuple(kinds))
        try:
            hash(key_static)
        except TypeError:
            raise TypeError(f"{where()}: static arguments of {self.name}() "
                            "must be hashable") from None
        key = (tree, key_static, tuple(a.key() for a in avals))

        def rebuild(tracers):
            it = iter(tracers)
            full = [next(it) if k is None else k[1] for k in kinds]
            d_args, d_kwargs = tree_unflatten(tree, full)
            a = list(d_args)
            for i, v in stat_args:
                a[i] = v
            kw = dict(d_kwargs)
            kw.update(stat_kwargs)
            return a, kw

        return dyn, avals, key, rebuild

    # -- tracing and compiling -------------------------------------------------------

    def _trace(self, args, kwargs):
        self._check_args(args, kwargs)
        dyn, avals, key, rebuild = self._split(args, kwargs)
        module = _core.Module(context())
        out_tree = []

        def flat_fun(tracers):
            a, kw = rebuild(tracers)
            out = self.fun(*a, **kw)
            leaves, tree = tree_flatten(out)
            out_tree.append(tree)
            return leaves

        captures, out_avals = trace_function(module, self.name, flat_fun,
                                             avals)
        assert not captures
        donated = {}
        for pos in self.donate_argnums:
            donated.update(self._donate(module, args, pos, avals, out_avals))
        return module, dyn, key, out_tree[-1], donated

    def _donate(self, module, args, pos, avals, out_avals):
        """Marks the leaves of positional argument `pos` as donated to the
        first unclaimed result of the same type."""
        before = tree_flatten(args[:pos])[0]
        first = sum(1 for lf in before if _is_array_leaf(lf)
                    or type(lf) in _WEAK_DTYPES)
        count = len([lf for lf in tree_flatten(args[pos])[0]])
        out = {}
        for i in range(first, first + count):
            for j, oa in enumerate(out_avals):
                if j not in out.values() and oa.key()[:2] == \
                        avals[i].key()[:2]:
                    module.set_arg_attr(self.name, i,
                                        "paddle.aliasing_output",
                                        f"{j} : i64")
                    out[i] = j
                    break
        return out

    def _get(self, args, kwargs):
        dyn, avals, key, _ = self._split(args, kwargs)
        level = self.opt_level
        if level is None:
            level = _config["opt_level"]
        key = (key, level)
        hit = self._cache.get(key)
        if hit is None:
            module, _, _, out_tree, donated = self._trace(args, kwargs)
            exe = _core.compile(module, opt_level=level)
            _stats["compiles"] += 1
            if donated:
                # The runtime's view wins: inputs it writes results into.
                sig = exe.signature(self.name)
                donated = {int(i): int(j)
                           for i, j in sig.get("aliases", {}).items()}
            hit = _Compiled(module, self.name, exe, out_tree, donated)
            self._cache[key] = hit
        return hit, dyn, avals

    def __call__(self, *args, **kwargs):
        if tracing():
            self._check_args(args, kwargs)
            return self.fun(*args, **kwargs)
        c, dyn, avals = self._get(args, kwargs)
        inputs = []
        for leaf, a in zip(dyn, avals):
            arr = np.asarray(leaf, dtype=a.dtype)  # no copy when it fits
            if not arr.flags.c_contiguous:
                arr = arr.copy(order="C")
            inputs.append(arr)
        outs = c.exe.run(c.name, inputs)
        if c.donated:
            outs = list(outs)
            for i, j in sorted(c.donated.items(), key=lambda p: p[1]):
                outs.insert(j, inputs[i])
        return tree_unflatten(c.out_tree, list(outs))

    # -- users' views of the IR -----------------------------------------------------

    def lower(self, *args, debug_info=False, **kwargs):
        """The paddle IR built for these arguments, as text."""
        module = self._trace(args, kwargs)[0]
        return module.to_text(debug_info=debug_info)

    def export(self, path, *args, **kwargs):
        """Writes the IR for these arguments to `path` (MLIR bytecode when it
        ends in .mlirbc, text otherwise), for paddle-compile / paddle-run."""
        module = self._trace(args, kwargs)[0]
        module.save(str(path))
        return str(path)

    def cache_size(self):
        """Number of compiled signatures held."""
        return len(self._cache)

    def clear_cache(self):
        self._cache.clear()


def jit(fun=None, *, static_argnums=(), static_argnames=(),
        donate_argnums=(), opt_level=None):
    """Compiles `fun` per input signature (shapes, dtypes, static args).

    Usable as `@jit`, `@jit(static_argnums=...)` or `jit(f, ...)`. Results
    are numpy arrays in the pytree structure `fun` returns.
    `donate_argnums` lets the compiled code write results into the given
    arguments' buffers (they must be writable, C-contiguous arrays).
    `opt_level` (0..3) defaults to set_default_opt_level's value (3).
    """
    if fun is None:
        return lambda f: Jitted(f, static_argnums, static_argnames,
                                donate_argnums, opt_level=opt_level)
    return Jitted(fun, static_argnums, static_argnames, donate_argnums,
                  opt_level=opt_level)


class ShapeDtype(tuple):
    """The shape and dtype of a result, as eval_shape gives them."""
    __slots__ = ()

    def __new__(cls, shape, dtype):
        return tuple.__new__(cls, (tuple(shape), np.dtype(dtype)))

    shape = property(lambda self: self[0])
    dtype = property(lambda self: self[1])

    def __repr__(self):
        return f"ShapeDtype(shape={self.shape}, dtype={self.dtype})"


def eval_shape(fun, *args, **kwargs):
    """Traces `fun` without compiling it and returns its results' pytree
    with a ShapeDtype(shape, dtype) per leaf."""
    results = []

    def probe(*a, **kw):
        out = fun(*a, **kw)
        leaves, tree = tree_flatten(out)
        results.append((tree, [ShapeDtype(
            x.shape if isinstance(x, Tracer) else np.shape(x),
            x.dtype if isinstance(x, Tracer) else np.asarray(x).dtype)
            for x in leaves]))
        return out

    j = Jitted(probe)
    j.name = _sanitize(getattr(fun, "__name__", "f"))
    j._trace(args, kwargs)
    tree, shapes = results[-1]
    return tree_unflatten(tree, shapes)
def save(fun, *example_args, path="model.mlirbc", **kwargs):
    """Traces `fun` on the example arguments and saves the IR to `path`."""
    f = fun if isinstance(fun, Jitted) else Jitted(fun)
    return f.export(path, *example_args, **kwargs)


def lower(fun, *args, **kwargs):
    f = fun if isinstance(fun, Jitted) else Jitted(fun)
    return f.lower(*args, **kwargs)


_EAGER = {}


def eager_call(fn, args, kwargs):
    """Runs a numpy-like op on concrete values: compiled once per signature
    (arrays dynamic, every other argument static)."""
    j = _EAGER.get(fn)
    if j is None:
        j = _EAGER[fn] = Jitted(fn, auto_static=True)
    return j(*args, **kwargs)
