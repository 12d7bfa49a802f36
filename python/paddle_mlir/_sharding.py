"""Device meshes and shardings: Mesh, P, shard, device_put.

A `Mesh` names the axes of a grid of devices; a partition spec `P` says,
per dim of an array, which mesh axes split it (None: whole). In a traced
function `shard(x, P(...))` records how `x` is to be split, and `jit(f,
mesh=..., in_shardings=..., out_shardings=...)` annotates the arguments and
results. The compiler propagates the annotations to every value
(`sharding-propagation` with the paddle ops' sharding rules), partitions
the function into the program one device runs, and inserts the collectives
the splits need (docs/distributed.md).

The devices are threads of this process: a call runs the program once per
device on its block of the (full) inputs and puts the results back
together. Under `mpirun`, `paddle-run` and compiled executables run one
device per process.
"""

import numbers

import numpy as np

from ._trace import (Tracer, current_trace, mlir_type, tracing, user_location,
                     where)

# The symbol of the mesh in a traced module.
MESH_SYMBOL = "mesh"


class Mesh:
    """A grid of devices: `Mesh((2, 2), ("data", "model"))`. Axis names
    default to "data" for a 1-D mesh and "axis0", "axis1", ... otherwise.
    Used as a context manager (`with mesh:`), it is the mesh `shard` uses
    when none is given."""

    def __init__(self, shape, axis_names=None):
        if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
            shape = (int(shape),)
        shape = tuple(shape)
        if not shape or not all(isinstance(s, numbers.Integral) and
                                not isinstance(s, bool) and s >= 1
                                for s in shape):
            raise ValueError(f"Mesh: the shape must be one or more sizes "
                             f">= 1, got {shape!r}")
        if len(shape) > 4:
            raise ValueError(f"Mesh: at most 4 axes, got {len(shape)}")
        if axis_names is None:
            axis_names = (("data",) if len(shape) == 1 else
                          tuple(f"axis{i}" for i in range(len(shape))))
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if len(axis_names) != len(shape) or not all(
                isinstance(n, str) and n for n in axis_names):
            raise ValueError(f"Mesh: one name (a non-empty str) per axis: "
                             f"shape {shape}, names {axis_names!r}")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh: axis names repeat: {axis_names!r}")
        self.shape = tuple(int(s) for s in shape)
        self.axis_names = axis_names
        self._previous = []

    @property
    def devices(self):
        return int(np.prod(self.shape))

    def axis(self, name):
        """The index of axis `name`."""
        try:
            return self.axis_names.index(name)
        except ValueError:
            raise ValueError(f"{where()}: the mesh has no axis {name!r} (its "
                             f"axes: {', '.join(self.axis_names)})") from None

    def __enter__(self):
        self._previous.append(_current[0])
        _current[0] = self
        return self

    def __exit__(self, *exc):
        _current[0] = self._previous.pop()
        return False

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.shape == other.shape
                and self.axis_names == other.axis_names)

    def __hash__(self):
        return hash((self.shape, self.axis_names))

    def __repr__(self):
        axes = ", ".join(f"{n}={s}" for n, s in zip(self.axis_names,
                                                      self.shape))
        return f"Mesh({axes})"


_current = [None]


class P(tuple):
    """A partition spec: per dim of an array, None (whole), a mesh axis
    name, or a tuple of names (split over several axes, the first major).
    Dims past the spec's length are whole: `P("data")` splits dim 0."""

    def __new__(cls, *dims):
        for d in dims:
            names = d if isinstance(d, tuple) else (d,)
            if d is not None and not all(isinstance(n, str) for n in names):
                raise TypeError(f"P: each dim is None, an axis name or a tuple "
                                f"of names, got {d!r}")
        return super().__new__(cls, dims)

    def __repr__(self):
        return "P(" + ", ".join(repr(d) for d in self) + ")"


def split_axes(mesh, spec, shape, what):
    """`spec` as mesh axis indices per dim of an array of `shape`, checked:
    known axis names, no axis twice, at most one entry per dim, and static
    sizes that divide evenly."""
    if spec is None:
        spec = P()
    if not isinstance(spec, P):
        raise TypeError(f"{where()}: {what}: expected a partition spec "
                        f"(pm.P(...)) or None, got {spec!r}")
    if len(spec) > len(shape):
        raise ValueError(f"{where()}: {what}: the spec {spec!r} has {len(spec)} "
                         f"entries for an array of rank {len(shape)}")
    used, out = set(), []
    for d, entry in enumerate(spec):
        names = () if entry is None else (entry if isinstance(entry, tuple)
                                          else (entry,))
        axes = []
        for name in names:
            a = mesh.axis(name)
            if a in used:
                raise ValueError(f"{where()}: {what}: mesh axis {name!r} "
                                 f"splits two dims in {spec!r}")
            used.add(a)
            axes.append(a)
        parts = int(np.prod([mesh.shape[a] for a in axes])) if axes else 1
        if shape[d] % parts:
            raise ValueError(f"{where()}: {what}: dim {d} of size {shape[d]} "
                             f"does not split evenly over {parts} devices "
                             f"({spec!r} on {mesh!r})")
        out.append(axes)
    return out


def _ensure_mesh(module, mesh):
    try:
        module.add_grid(MESH_SYMBOL, list(mesh.shape))
    except ValueError:
        pass  # added by an earlier annotation of this module


def annotate(x, mesh, spec, what, for_users=False):
    """`x` (a tracer) annotated with the split `spec`: a shard.shard of the
    trace, whose result the caller uses in place of `x`."""
    trace = current_trace()
    x = x if isinstance(x, Tracer) else Tracer(trace.lift(x), trace)
    axes = split_axes(mesh, spec, x.shape, what)
    _ensure_mesh(trace.module, mesh)
    text = ", ".join("[" + ", ".join(str(a) for a in d) + "]" for d in axes)
    loc = user_location()
    sharding = trace.fb.op(
        "shard.sharding", [],
        attributes={"grid": f"@{MESH_SYMBOL}",
                    "split_axes": f"#shard<axisarray[{text or '[]'}]>",
                    "static_halo_sizes": "array<i64>",
                    "static_sharded_dims_offsets": "array<i64>",
                    "operandSegmentSizes": "array<i32: 0, 0>"},
        result_types=["!shard.sharding"], loc=loc)[0]
    attrs = {"annotate_for_users": "unit"} if for_users else {}
    value = trace.lift(x)
    (result,) = trace.fb.op("shard.shard", [value, sharding], attributes=attrs,
                            result_types=[mlir_type(x.shape, x.dtype)],
                            loc=loc)
    return Tracer(result, trace, x.weak)


def shard(x, spec, mesh=None):
    """Constrains how `x` is split over the mesh's devices inside a traced
    function (jit with a mesh): `y = pm.shard(x, pm.P("data", None))`. The
    compiler splits the computation to match and inserts the collectives
    the neighbouring ops need. Outside a trace it returns `x` unchanged."""
    if not tracing():
        return x
    mesh = mesh or _current[0]
    if mesh is None:
        raise ValueError(f"{where()}: shard: no mesh; pass mesh=... or call "
                         "it inside `with mesh:` or a jit with a mesh")
    return annotate(x, mesh, spec, "shard")


class ShardedArray:
    """An array placed on a mesh: the full values and how they are split.
    `.shards` lists each device's block (views, in device order);
    `np.asarray(a)` gives the full array. Passed to a jit with a mesh, its
    spec is the argument's in_sharding unless one is given."""

    def __init__(self, value, mesh, spec):
        self.value = np.asarray(value)
        self.mesh, self.spec = mesh, spec if spec is not None else P()
        self.axes = split_axes(mesh, self.spec, self.value.shape,
                               "device_put")

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)

    @property
    def shards(self):
        out = []
        for device in range(self.mesh.devices):
            coords = np.unravel_index(device, self.mesh.shape)
            index = []
            for d, size in enumerate(self.value.shape):
                axes = self.axes[d] if d < len(self.axes) else []
                parts, block = 1, 0
                for a in axes:
                    parts *= self.mesh.shape[a]
                    block = block * self.mesh.shape[a] + coords[a]
                step = size // parts
                index.append(slice(block * step, (block + 1) * step))
            out.append(self.value[tuple(index)])
        return out

    def __array__(self, dtype=None, copy=None):
        return self.value if dtype is None else self.value.astype(dtype)

    def __repr__(self):
        return (f"ShardedArray(shape={self.shape}, dtype={self.dtype}, "
                f"{self.spec!r} on {self.mesh!r})")


def device_put(x, mesh, spec=None):
    """`x` placed on `mesh`, split as `spec` (None: replicated)."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"device_put: expected a pm.Mesh, got {mesh!r}")
    return ShardedArray(x, mesh, spec)


def normalize_specs(what, specs):
    """A jit's in_shardings/out_shardings: None, one spec for every
    argument (result), or a sequence with one spec or None each."""
    if specs is None or isinstance(specs, P):
        return specs
    if isinstance(specs, (list, tuple)):
        specs = tuple(specs)
        for s in specs:
            if s is not None and not isinstance(s, P):
                raise TypeError(f"{where()}: jit: {what} holds pm.P specs or "
                                f"None, got {s!r}")
        return specs
    if isinstance(specs, str):
        raise ValueError(f"{where()}: jit: {what}={specs!r}: the only string "
                         "is \"auto\" (in_shardings), which lets the cost "
                         "model choose")
    raise TypeError(f"{where()}: jit: {what} must be a pm.P, a sequence of "
                    f"them (one per argument or result) or None, got {specs!r}")


def spec_at(specs, i):
    if specs is None or isinstance(specs, P):
        return specs
    return specs[i] if i < len(specs) else None


def annotate_tree(tree, mesh, spec, what, for_users=False):
    """Every array leaf of `tree` (a pytree of tracers) annotated."""
    from ._tree import tree_map
    if spec is None:
        return tree
    return tree_map(lambda t: annotate(t, mesh, spec, what, for_users)
                    if isinstance(t, Tracer) else t, tree)
