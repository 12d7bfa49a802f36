"""@jit: trace once per input signature, compile, cache, run.

The cache key of a call is the pytree structure of the arguments, each array
leaf's (shape, dtype, weak) and the values of the static arguments. Calls
made while another function is being traced (jit inside jit, grad, vjp)
are traced inline: the enclosing trace compiles the whole thing once.
"""

import collections
import collections.abc
import functools
import inspect
import os
import numbers
import re

import numpy as np

from . import _core, _sharding
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
    if type(x) is int and not -2**63 <= x < 2**63:
        raise dtype_error(f"{what} is the int {x}, which does not fit in "
                          "int64 (mark the argument static to use it as a "
                          "Python value)")
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


def donation_problem(leaf):
    """Why the compiled code cannot write a result into `leaf`'s buffer
    in place ("a float, not a numpy array", "read-only", ...), or None."""
    if not isinstance(leaf, np.ndarray):
        return f"a {type(leaf).__name__}, not a numpy array"
    if not leaf.flags.c_contiguous:
        return f"not C-contiguous (shape {leaf.shape})"
    if not leaf.flags.aligned:
        return f"not aligned (shape {leaf.shape})"
    if not leaf.flags.writeable:
        return f"read-only (shape {leaf.shape})"
    return None


def _check_donated(dyn, donated, fname):
    """Refuses donated leaves the compiled call cannot write into: it writes
    results into the argument's own buffer, so a converted or packed copy
    would leave the caller's array stale."""
    for i, owner in donated:
        problem = donation_problem(dyn[i])
        if problem:
            error = ValueError if isinstance(dyn[i], np.ndarray) else TypeError
            raise error(
                f"{where()}: {owner} of {fname}() is donated (donate_argnums),"
                f" but a leaf of it is {problem}: the call writes its result "
                "into that array's buffer, and a copy would leave your array "
                "stale. Pass a writable C-contiguous numpy array "
                "(np.ascontiguousarray(x) or x.copy()), or do not donate it")


class _Compiled:
    def __init__(self, module, name, exe, out_tree, donated):
        self.module, self.name, self.exe = module, name, exe
        self.out_tree, self.donated = out_tree, donated


class _LRU:
    """A dict that keeps its `limit` most recently used entries. Safe to
    share between threads: a lookup racing an eviction is a miss."""

    def __init__(self, limit):
        self.limit, self._d = limit, collections.OrderedDict()

    def get(self, key):
        hit = self._d.get(key)
        if hit is not None:
            try:
                self._d.move_to_end(key)
            except KeyError:
                pass
        return hit

    def put(self, key, value):
        self._d[key] = value
        while len(self._d) > self.limit:
            try:
                self._d.popitem(last=False)
            except KeyError:
                break

    def __len__(self):
        return len(self._d)

    def clear(self):
        self._d.clear()


def static_key(x):
    """The cache key of a static value. Floats are keyed by their exact
    value (float.hex), so NaN finds NaN and 0.0, -0.0 stay apart; the type is
    part of the key, so 1, 1.0 and True (equal in Python, different weak
    types in a trace) compile separately."""
    t = type(x)
    if t is float or isinstance(x, np.floating):
        return (t, float(x).hex())
    if isinstance(x, tuple):
        return (t, tuple(static_key(e) for e in x))
    if isinstance(x, frozenset):
        return (t, frozenset(static_key(e) for e in x))
    return (t, x)


def _int_list(what, value):
    """`value` (an int or a sequence of ints) as a tuple of ints."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (str, bytes)) or not isinstance(
            value, collections.abc.Iterable):
        raise TypeError(f"{where()}: jit: {what} must be an int or a "
                        f"sequence of ints, got {value!r}")
    items = tuple(value)
    for v in items:
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"{where()}: jit: {what} must hold ints "
                            f"(argument positions), got {v!r}")
    return tuple(int(v) for v in items)


def _name_list(what, value):
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, collections.abc.Iterable):
        raise TypeError(f"{where()}: jit: {what} must be a str or a "
                        f"sequence of str, got {value!r}")
    items = tuple(value)
    for v in items:
        if not isinstance(v, str):
            raise TypeError(f"{where()}: jit: {what} must hold parameter "
                            f"names (str), got {v!r}")
    return items


def compile_options_text(options):
    """Compile options given as keywords (device="h200", library="onednn",
    fuse=False, vector_bits=256, ...) as the option text the compiler
    parses, which checks them: "device=h200 library=onednn fuse=false
    vector-bits=256". The names are those of the tools' flags with "_" for
    "-"; a device is a built-in spec name or the path of a spec file."""
    parts = []
    for name, value in options.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        value = os.fspath(value) if isinstance(value, os.PathLike) \
            else str(value)
        if not value or any(c in value for c in " {}\"'"):
            value = '"' + value + '"'
        parts.append(f"{name.replace('_', '-')}={value}")
    return " ".join(parts)


def _check_options(static_argnums, static_argnames, donate_argnums,
                   opt_level, max_cache_size):
    """jit's options checked for their types; the argnums and argnames as
    tuples."""
    if opt_level is not None and (type(opt_level) is not int
                                  or opt_level not in (0, 1, 2, 3)):
        raise ValueError(f"{where()}: jit: opt_level must be 0..3 or None, "
                         f"got {opt_level!r}")
    if (not isinstance(max_cache_size, numbers.Integral)
            or isinstance(max_cache_size, bool) or max_cache_size < 1):
        raise ValueError(f"{where()}: jit: max_cache_size must be an int "
                         f">= 1, got {max_cache_size!r}")
    return (_int_list("static_argnums", static_argnums),
            _name_list("static_argnames", static_argnames),
            _int_list("donate_argnums", donate_argnums))


class _Params:
    """What the signature of the jitted function says about its
    parameters, for checking argnums and argnames when jit() is called."""

    def __init__(self, sig, fname):
        self.fname = fname
        self.known = sig is not None
        self.positional, self.var_positional = [], False
        self.keyword, self.var_keyword = set(), False
        if sig is None:
            return
        P = inspect.Parameter
        for p in sig.parameters.values():
            if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
                self.positional.append(p.name)
            if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
                self.keyword.add(p.name)
            self.var_positional |= p.kind == P.VAR_POSITIONAL
            self.var_keyword |= p.kind == P.VAR_KEYWORD

    def positions(self, what, nums):
        """`nums` checked against the positional parameters; negative
        positions made non-negative where the count is fixed."""
        if not self.known or self.var_positional:
            return nums
        n = len(self.positional)
        out = []
        for i in nums:
            if not -n <= i < n:
                names = ", ".join(self.positional) or "none"
                raise ValueError(
                    f"{where()}: jit: {what} has {i}, but {self.fname}() "
                    f"takes {n} positional parameter(s) ({names})")
            out.append(i % n)
        return tuple(out)

    def names(self, what, names):
        if not self.known or self.var_keyword:
            return names
        for name in names:
            if name not in self.keyword:
                hint = (" (it is positional-only: use static_argnums)"
                        if name in self.positional else "")
                params = ", ".join(sorted(self.keyword)) or "none"
                raise ValueError(
                    f"{where()}: jit: {what} has '{name}', which is not a "
                    f"keyword parameter of {self.fname}() (those are: "
                    f"{params}){hint}")
        return names

    def name_of(self, i):
        return (self.positional[i]
                if 0 <= i < len(self.positional) else None)


class Jitted:
    """A function compiled per input signature; see `jit`."""

    def __init__(self, fun, static_argnums=(), static_argnames=(),
                 donate_argnums=(), auto_static=False, opt_level=None,
                 max_cache_size=64, compile_options=None, mesh=None,
                 in_shardings=None, out_shardings=None):
        if mesh is not None and not isinstance(mesh, _sharding.Mesh):
            raise TypeError(f"{where()}: jit: mesh must be a pm.Mesh, got "
                            f"{mesh!r}")
        if mesh is None and (in_shardings is not None or
                             out_shardings is not None):
            raise ValueError(f"{where()}: jit: in_shardings and out_shardings "
                             "need a mesh (mesh=pm.Mesh(...))")
        self.mesh = mesh
        # "auto": the cost model chooses every split (paddle-auto-shard).
        self.auto_shard = isinstance(in_shardings, str) and \
            in_shardings == "auto"
        if self.auto_shard:
            if out_shardings is not None:
                raise ValueError(f"{where()}: jit: in_shardings=\"auto\" "
                                 "chooses the result splits too; leave "
                                 "out_shardings out")
            in_shardings = None
        self.in_shardings = _sharding.normalize_specs("in_shardings",
                                                      in_shardings)
        self.out_shardings = _sharding.normalize_specs("out_shardings",
                                                       out_shardings)
        if not callable(fun):
            raise TypeError(f"{where()}: jit needs a function, got "
                            f"{type(fun).__name__} {fun!r}")
        static_argnums, static_argnames, donate_argnums = _check_options(
            static_argnums, static_argnames, donate_argnums, opt_level,
            max_cache_size)
        self.options = compile_options_text(compile_options or {})
        if self.options:
            try:
                _core.check_compile_options(self.options)
            except ValueError as e:
                raise ValueError(f"{where()}: jit: {e}") from None
        self.fun = fun
        self.opt_level = opt_level
        self._sig = None
        try:
            self._sig = inspect.signature(fun)
        except (TypeError, ValueError):
            pass
        self.name = _sanitize(getattr(fun, "__name__", "f"))
        params = self._params = _Params(self._sig, self.name)
        static = params.positions("static_argnums", static_argnums)
        names = params.names("static_argnames", static_argnames)
        donate = params.positions("donate_argnums", donate_argnums)
        # A static parameter is static however it is passed: by position or
        # by name (calls are normalized to positions where they can be).
        static_names = set(names) | (
            {params.name_of(i) for i in static} - {None})
        static = set(static) | {i for i, n in enumerate(params.positional)
                                if n in static_names}
        both = static & set(donate)
        if both:
            raise ValueError(f"{where()}: jit: argument {min(both)} of "
                             f"{self.name}() is both static and donated")
        self.static_argnums = tuple(sorted(static))
        self.static_argnames = tuple(sorted(static_names))
        self.donate_argnums = tuple(donate)
        self._donate_names = {params.name_of(i) for i in donate} - {None}
        self.auto_static = auto_static
        self._cache = _LRU(max_cache_size)
        functools.update_wrapper(self, fun, updated=())

    # -- signature -------------------------------------------------------------

    def _bind(self, args, kwargs):
        """The call's arguments checked against the signature, with every
        parameter that can be positional given by position (so f(x, y=1)
        and f(x, 1) are one cache entry, and static_argnums apply)."""
        if self._sig is None:
            return args, kwargs
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{where()}: {self.name}(): {e}") from None
        return bound.args, bound.kwargs

    @staticmethod
    def _positions(nums, n):
        return {i % n for i in nums if -n <= i < n} if n else set()

    def _split(self, args, kwargs):
        """(dynamic leaves, their avals, key of everything else, rebuild,
        indices into the dynamic leaves of the donated ones)."""
        n = len(args)
        static_pos = self._positions(self.static_argnums, n)
        dyn_args = [None if i in static_pos else a
                    for i, a in enumerate(args)]
        stat_args = tuple((i, args[i]) for i in sorted(static_pos))
        dyn_kwargs = {k: v for k, v in kwargs.items()
                      if k not in self.static_argnames}
        stat_kwargs = tuple(sorted((k, v) for k, v in kwargs.items()
                                   if k in self.static_argnames))
        leaves, tree = tree_flatten((dyn_args, dyn_kwargs))
        owners = self._donors(dyn_args, dyn_kwargs) \
            if self.donate_argnums else None
        dyn, avals, kinds, donated = [], [], [], []
        for i, leaf in enumerate(leaves):
            is_arr = _is_array_leaf(leaf) or (
                not self.auto_static and type(leaf) in _WEAK_DTYPES)
            if is_arr:
                if owners is not None and owners[i] is not None:
                    donated.append((len(dyn), owners[i]))
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
        try:
            key_static = (
                tuple((i, static_key(v)) for i, v in stat_args),
                tuple((k, static_key(v)) for k, v in stat_kwargs),
                tuple(k and ("static", static_key(k[1])) for k in kinds))
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

        return dyn, avals, key, rebuild, donated

    def _donors(self, dyn_args, dyn_kwargs):
        """Per leaf of (dyn_args, dyn_kwargs): a description of the donated
        argument it belongs to, or None."""
        donate = self._positions(self.donate_argnums, len(dyn_args))
        owners = []
        for i, a in enumerate(dyn_args):
            label = None
            if i in donate:
                name = self._params.name_of(i)
                label = f"argument {i}" + (f" ('{name}')" if name else "")
            owners += [label] * len(tree_flatten(a)[0])
        for k in sorted(dyn_kwargs):
            label = (f"argument '{k}'" if k in self._donate_names else None)
            owners += [label] * len(tree_flatten(dyn_kwargs[k])[0])
        return owners

    # -- tracing and compiling -------------------------------------------------------

    def _unwrap_sharded(self, args):
        """Arguments with sharded arrays replaced by their values, and the
        split of each positional argument: in_shardings, else a sharded
        array's own spec."""
        if self.mesh is None:
            return args, ()
        specs, plain = [], []
        for i, a in enumerate(args):
            spec = _sharding.spec_at(self.in_shardings, i)
            if isinstance(a, _sharding.ShardedArray):
                if a.mesh != self.mesh:
                    raise ValueError(f"{where()}: argument {i} of {self.name}()"
                                     f" is on {a.mesh!r}, the jit runs on "
                                     f"{self.mesh!r}")
                spec = spec if spec is not None else a.spec
                a = a.value
            specs.append(spec)
            plain.append(a)
        return tuple(plain), tuple(specs)

    def _trace(self, args, kwargs, specs=None):
        args, kwargs = self._bind(args, kwargs)
        if specs is None:
            args, specs = self._unwrap_sharded(args)
        if self.auto_shard:
            specs = ()  # a sharded array's own split is not a constraint
        dyn, avals, key, rebuild, donated_leaves = self._split(args, kwargs)
        module = _core.Module(context())
        out_tree = []
        mesh = self.mesh
        if mesh is not None:
            # Even unannotated, the function runs on every device (each
            # computing everything): the module has the mesh.
            module.add_grid(_sharding.MESH_SYMBOL, list(mesh.shape))

        def flat_fun(tracers):
            a, kw = rebuild(tracers)
            if mesh is None:
                out = self.fun(*a, **kw)
            else:
                a = [_sharding.annotate_tree(
                    x, mesh, specs[i] if i < len(specs) else None,
                    f"argument {i} of {self.name}()")
                    for i, x in enumerate(a)]
                with mesh:
                    out = self.fun(*a, **kw)
                if isinstance(self.out_shardings, tuple) and isinstance(
                        out, (tuple, list)):
                    out = type(out)(_sharding.annotate_tree(
                        o, mesh, _sharding.spec_at(self.out_shardings, i),
                        f"result {i} of {self.name}()", for_users=True)
                        for i, o in enumerate(out))
                else:
                    out = _sharding.annotate_tree(
                        out, mesh, _sharding.spec_at(self.out_shardings, 0),
                        f"the result of {self.name}()", for_users=True)
            leaves, tree = tree_flatten(out)
            out_tree.append(tree)
            return leaves

        captures, out_avals = trace_function(module, self.name, flat_fun,
                                             avals)
        assert not captures
        if self.auto_shard:
            module.set_function_attr(self.name, "paddle.auto_shard", "unit")
        # What the module is compiled for is part of it (#paddle.target):
        # lower() and export() show it, paddle-run and paddle-compile keep it.
        if self.options:
            _core.set_target(module, self.options)
        # Each donated leaf gets the first unclaimed result of its type.
        donated = {}
        for i, _ in donated_leaves:
            for j, oa in enumerate(out_avals):
                if j not in donated.values() and \
                        oa.key()[:2] == avals[i].key()[:2]:
                    module.set_arg_attr(self.name, i,
                                        "paddle.aliasing_output", f"{j} : i64")
                    donated[i] = j
                    break
        return module, dyn, key, out_tree[-1], donated

    def _get(self, args, kwargs, specs=()):
        dyn, avals, key, _, donated_leaves = self._split(args, kwargs)
        level = self.opt_level
        if level is None:
            level = _config["opt_level"]
        key = (key, level, specs)
        hit = self._cache.get(key)
        if hit is None:
            # Checked before compiling, so a bad call costs no compile.
            _check_donated(dyn, donated_leaves, self.name)
            module, _, _, out_tree, donated = self._trace(args, kwargs, specs)
            exe = _core.compile(module, opt_level=level,
                                options=self.options)
            _stats["compiles"] += 1
            if donated:
                # The runtime's view wins: inputs it writes results into.
                sig = exe.signature(self.name)
                donated = {int(i): int(j)
                           for i, j in sig.get("aliases", {}).items()}
            hit = _Compiled(module, self.name, exe, out_tree, donated)
            self._cache.put(key, hit)
        elif hit.donated:
            _check_donated(dyn, donated_leaves, self.name)
        return hit, dyn, avals

    def __call__(self, *args, **kwargs):
        args, kwargs = self._bind(args, kwargs)
        if tracing():
            return self.fun(*args, **kwargs)
        args, specs = self._unwrap_sharded(args)
        c, dyn, avals = self._get(args, kwargs, specs)
        inputs = []
        for leaf, a in zip(dyn, avals):
            arr = np.asarray(leaf, dtype=a.dtype)  # no copy when it fits
            if not arr.flags.c_contiguous:
                arr = arr.copy(order="C")  # never donated: refused above
            inputs.append(arr)
        outs = c.exe.run(c.name, inputs)
        if c.donated:
            outs = list(outs)
            for i, j in sorted(c.donated.items(), key=lambda p: p[1]):
                outs.insert(j, inputs[i])
        return tree_unflatten(c.out_tree, list(outs))

    # -- users' views of the IR -----------------------------------------------------

    def lower(self, *args, debug_info=False, stage="paddle", **kwargs):
        """The IR built for these arguments, as text: the paddle IR
        (stage="paddle") or what the CPU pipeline makes of it with this
        function's compile options (stage="llvm", the LLVM dialect: library
        calls such as paddle_onednn_matmul show there)."""
        if stage not in ("paddle", "llvm"):
            raise ValueError(f"{where()}: lower: stage must be 'paddle' or "
                             f"'llvm', got {stage!r}")
        module = self._trace(args, kwargs)[0]
        if stage == "llvm":
            return _core.lower(module, self.options)
        return module.to_text(debug_info=debug_info)

    def export(self, path, *args, **kwargs):
        """Writes the IR for these arguments to `path` (MLIR bytecode when it
        ends in .mlirbc, text otherwise), for paddle-compile / paddle-run."""
        module = self._trace(args, kwargs)[0]
        module.save(str(path))
        return str(path)

    def cache_size(self):
        """Number of compiled signatures held (at most max_cache_size: the
        least recently used one is dropped first)."""
        return len(self._cache)

    def clear_cache(self):
        self._cache.clear()


def jit(fun=None, *, static_argnums=(), static_argnames=(),
        donate_argnums=(), opt_level=None, max_cache_size=64, mesh=None,
        in_shardings=None, out_shardings=None, **compile_options):
    """Compiles `fun` per input signature (shapes, dtypes, static args).

    Usable as `@jit`, `@jit(static_argnums=...)` or `jit(f, ...)`. Results
    are numpy arrays in the pytree structure `fun` returns.
    `donate_argnums` lets the compiled code write results into the given
    arguments' buffers (they must be writable, C-contiguous arrays).
    `opt_level` (0..3) defaults to set_default_opt_level's value (3).
    At most `max_cache_size` compiled signatures are kept (least recently
    used dropped first). The arguments are checked here: positions and names
    must be parameters of `fun` where its signature says so.
    Other keywords are compile options, the tools' flags by another name
    (compile_options_text): `device` (a built-in spec name such as "h200",
    or the path of a spec file paddle-calibrate wrote), `library` ("auto",
    "onednn", "none"), `precision` ("f32", "bf16"), `vector_bits`,
    `tile_and_vectorize`, `fuse`. They become the module's target.

    With `mesh` (a pm.Mesh) the function runs on every device of the mesh
    (docs/distributed.md): `in_shardings` and `out_shardings` (a pm.P for
    every argument/result, or a sequence with a pm.P or None each) say how
    they are split; the compiler splits everything in between and adds the
    collectives. `in_shardings="auto"` lets the cost model choose every
    split (paddle-auto-shard): the function must then have no pm.shard
    constraints. Calls take and return full arrays.
    """
    def make(f):
        return Jitted(f, static_argnums, static_argnames, donate_argnums,
                      opt_level=opt_level, max_cache_size=max_cache_size,
                      compile_options=compile_options, mesh=mesh,
                      in_shardings=in_shardings, out_shardings=out_shardings)
    if fun is None:
        # What can be checked without the function is checked now.
        _check_options(static_argnums, static_argnames, donate_argnums,
                       opt_level, max_cache_size)
        text = compile_options_text(compile_options)
        if text:
            try:
                _core.check_compile_options(text)
            except ValueError as e:
                raise ValueError(f"{where()}: jit: {e}") from None
        return make
    return make(fun)


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


def compile_aot(fun, *example_args, path, emit="so", weights="embed",
                symbol_prefix=None, **kwargs):
    """Traces `fun` on the example arguments and compiles it ahead of time
    into `path`, as paddle-compile does: emit "so" (a shared library with
    one typed C entry point per function, plus PATH's .h), "exe", "obj" or
    "mlir"; weights="sidecar" moves large constants to PATH.weights. A
    `jit` function compiles with its compile options (device, library,
    ...). Returns `path`."""
    f = fun if isinstance(fun, Jitted) else Jitted(fun)
    module = f._trace(example_args, kwargs)[0]
    path = os.fspath(path)
    _core.compile_aot(module, path, emit=emit, options=f.options,
                      weights=weights, symbol_prefix=symbol_prefix)
    return path


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
