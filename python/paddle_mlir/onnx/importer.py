"""ONNX graph -> `paddle` dialect, built through `paddle_mlir._core`.

One ONNX graph becomes one public function: its arguments are the graph
inputs that have no initializer, in order; its results are the graph outputs;
the weights (initializers, Constant nodes) are `paddle.constant` ops inside
the function, so `paddle-run` runs the imported file as it is.

Values are tracked per ONNX tensor name as a `Tensor`: an IR value, a numpy
constant, or a *shape value* (a numpy object array of ints and symbolic
dims). Shape arithmetic (Shape -> Gather -> Concat -> Reshape, as exporters
write it) is folded at import time, so Reshape, Expand and friends get the
static attributes the dialect needs, and a dim that is dynamic in the model
stays dynamic in the IR. Anything the importer cannot map exactly raises
`OnnxImportError` naming the node; nothing is silently approximated.
"""

import os
import re

import numpy as np

# ONNX TensorProto element type -> (MLIR element type, numpy dtype).
ELEMENT_TYPES = {
    1: ("f32", np.float32),    # FLOAT
    11: ("f64", np.float64),   # DOUBLE
    10: ("f16", np.float16),   # FLOAT16
    16: ("bf16", None),        # BFLOAT16 (no numpy dtype: no constants)
    9: ("i1", np.bool_),       # BOOL
    3: ("i8", np.int8),        # INT8
    6: ("i32", np.int32),      # INT32
    7: ("i64", np.int64),      # INT64
}
NUMPY_TO_MLIR = {np.dtype(d): t for t, d in ELEMENT_TYPES.values() if d}
MLIR_TO_NUMPY = {t: np.dtype(d) for t, d in ELEMENT_TYPES.values() if d}
FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
INT_TYPES = ("i8", "i32", "i64")

# Opsets whose operator semantics the handlers were written against; each
# node is further checked against the version of its own operator schema.
MIN_OPSET = 13


class OnnxImportError(ValueError):
    """The model cannot be imported exactly.

    `op_type` and `node` name the offending node (None for model-level
    errors); `unsupported` is True when the model is valid ONNX that this
    importer does not cover (an op, attribute value, type or dynamic shape),
    False when the model itself is broken.
    """

    def __init__(self, message, op_type=None, node=None, unsupported=True,
                 needs_constant=False):
        super().__init__(message)
        self.op_type = op_type
        self.node = node
        self.unsupported = unsupported
        # True when an input that must be known at import time (a shape,
        # axes, pads) is a run-time value.
        self.needs_constant = needs_constant


class Dim:
    """A dim of an IR value that is dynamic: `value.shape[index]`."""

    def __init__(self, value, index):
        self.value, self.index = value, index

    def _unknown(self, *_):
        return UNKNOWN

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _unknown
    __truediv__ = __rtruediv__ = __neg__ = _unknown

    def __repr__(self):
        return f"Dim({self.index})"


class _Unknown(Dim):
    """A run-time integer computed from dynamic dims (not a plain dim)."""

    def __init__(self):
        super().__init__(None, None)

    def __repr__(self):
        return "?"


UNKNOWN = _Unknown()


def is_static(x):
    return not isinstance(x, Dim)


class Tensor:
    """What the importer knows about one ONNX tensor.

    Exactly one of `const` (a numpy array, known at import time), `sym` (a
    rank-0/1 numpy object array of ints and `Dim`s: a shape value) or
    `value` (an IR value) describes it; a constant or shape value gets an IR
    value too once an IR op needs it (cached in `value`).
    """

    def __init__(self, value=None, const=None, sym=None):
        self.value, self.const, self.sym = value, const, sym
        # (node, node index, build): how to compute a shape value whose
        # entries depend on dynamic dims in IR, if an IR op needs it.
        self.lazy = None


def fmt_float(x, mlir_type):
    """An MLIR float attribute; inf and NaN as their bit patterns."""
    x = float(x)
    if np.isfinite(x):
        return f"{x:.17e} : {mlir_type}"
    np_type = {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(mlir_type)
    if np_type is None:
        raise ValueError(f"non-finite {mlir_type} attribute")
    bits = np.array(x, np_type).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[
        np.dtype(np_type).itemsize])
    return f"0x{int(bits):X} : {mlir_type}"


def fmt_scalar(x, mlir_type):
    """A typed scalar attribute of `mlir_type` (pad values, constants)."""
    if mlir_type == "i1":
        return "true" if x else "false"
    if mlir_type in FLOAT_TYPES:
        return fmt_float(x, mlir_type)
    return f"{int(x)} : {mlir_type}"


def arr(values):
    values = [int(v) for v in values]
    return "array<i64: " + ", ".join(map(str, values)) + ">" if values else "array<i64>"


def tensor_type(shape, elt):
    return "tensor<" + "".join(("?" if d is None else str(d)) + "x" for d in shape) + elt + ">"


def _onnx():
    import onnx
    return onnx


def load_model_proto(path):
    """Reads and checks an ONNX file and its external data; errors name the
    file (and the tensor whose external data is wrong)."""
    onnx = _onnx()
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"ONNX model '{path}' does not exist")
    if os.path.isdir(path):
        raise OnnxImportError(f"ONNX model '{path}' is a directory", unsupported=False)
    if not os.path.isfile(path):
        # onnx.load reads to the end: a device (/dev/zero) or a FIFO may
        # never end.
        raise OnnxImportError(f"ONNX model '{path}' is not a regular file (a device "
                              "or a FIFO); write the model to a file", unsupported=False)
    try:
        # The external data is read separately: its errors are not the
        # protobuf's.
        model = onnx.load(path, load_external_data=False)
    except Exception as e:  # protobuf DecodeError, ...
        raise OnnxImportError(f"cannot read ONNX model '{path}': not a valid "
                              f"ONNX protobuf ({type(e).__name__}: {e})",
                              unsupported=False) from None
    load_external_data(model, path)
    try:
        # The checker reads the file itself: given the ModelProto, it would
        # serialize it again first (0.14 s for ResNet-50's 100 MB).
        onnx.checker.check_model(path)
    except Exception as e:
        raise OnnxImportError(f"invalid ONNX model '{path}': {e}",
                              unsupported=False) from None
    return model


def _tensors(graph):
    """Every TensorProto of `graph`: initializers, tensor attributes, and
    those of subgraphs."""
    yield from graph.initializer
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            if a.HasField("g"):
                yield from _tensors(a.g)
            for g in a.graphs:
                yield from _tensors(g)


def _tensor_bytes(t):
    """Bytes a tensor's data takes, or None for types without a fixed size."""
    try:
        itemsize = np.dtype(_onnx().helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    except Exception:  # strings, 4-bit types, unknown type numbers
        return None
    if t.data_type in (_onnx().TensorProto.INT4, _onnx().TensorProto.UINT4):
        return None
    n = 1
    for d in t.dims:
        n *= d
    return n * itemsize


def load_external_data(model, path):
    """Loads the tensors of `model` stored in files next to the model at
    `path`. Each file must be inside the model's folder and hold the bytes
    the tensor says it has."""
    onnx = _onnx()
    folder = os.path.dirname(os.path.abspath(path))
    real_folder = os.path.realpath(folder)

    def fail(message):
        raise OnnxImportError(f"ONNX model '{path}': {message}", unsupported=False)

    for t in _tensors(model.graph):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        what = f"the external data of tensor '{t.name}'"
        location = info.get("location", "")
        if not location:
            fail(f"{what} names no file (its 'location' is empty)")
        if os.path.isabs(location):
            fail(f"{what} is at '{location}', an absolute path: external data is "
                 "named relative to the model's folder")
        file = os.path.join(folder, location)
        real = os.path.realpath(file)
        if os.path.commonpath([real, real_folder]) != real_folder:
            fail(f"{what} is at '{location}', outside the model's folder '{folder}'")
        if not os.path.exists(file):
            fail(f"{what} is in '{file}', which does not exist")
        if not os.path.isfile(file):
            fail(f"{what} is in '{file}', which is not a regular file")
        try:
            offset = int(info.get("offset", 0))
            length = int(info["length"]) if "length" in info else None
        except ValueError:
            fail(f"{what} has an offset ('{info.get('offset')}') or length "
                 f"('{info.get('length')}') that is not an integer")
        if offset < 0 or (length is not None and length < 0):
            fail(f"{what} has a negative offset ({offset}) or length ({length})")
        expected = _tensor_bytes(t)
        if length is not None and expected is not None and length != expected:
            fail(f"{what} has length {length} bytes, but the tensor (shape "
                 f"{list(t.dims)}) needs {expected}")
        size = os.path.getsize(file)
        need = length if length is not None else expected
        if need is not None and offset + need > size:
            fail(f"{what} is in '{file}', which is truncated: the tensor needs bytes "
                 f"{offset} to {offset + need}, the file has {size}")
    try:
        onnx.external_data_helper.load_external_data_for_model(model, folder)
    except Exception as e:
        fail(f"cannot read the external data: {type(e).__name__}: {e}")


def check_function_name(name):
    """The imported function's name: a C identifier, so that paddle-run
    --function and the C entry points of paddle-compile --emit so take it
    as it is."""
    if not (isinstance(name, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)):
        raise ValueError(f"function name {name!r} is not valid: use a C identifier "
                         "(letters, digits and '_', not starting with a digit)")


class GraphImporter:
    """Imports one ONNX ModelProto into a `_core` module as one function."""

    def __init__(self, model, module, function_name, source_name):
        self.model = model
        self.module = module
        self.function_name = function_name
        self.source = source_name
        self.env = {}
        self.node = None
        self.node_index = 0
        self.opset = None
        for imp in model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                self.opset = imp.version
        if self.opset is None:
            raise OnnxImportError("the model imports no version of the default "
                                  "ONNX domain (opset_import); only that domain is "
                                  "supported")
        newest = _onnx().defs.onnx_opset_version()
        if self.opset > newest:
            raise OnnxImportError(
                f"the model uses ONNX opset {self.opset}, newer than the newest this "
                f"onnx package ({_onnx().__version__}) knows, {newest}: the operators' "
                "semantics at that opset are unknown to the importer",
                unsupported=True)
        if self.opset < MIN_OPSET:
            raise OnnxImportError(
                f"the model uses ONNX opset {self.opset}; the importer supports "
                f"opset {MIN_OPSET} and later (convert the model with "
                "onnx.version_converter)")

    # -- errors ------------------------------------------------------------

    def where(self):
        n = self.node
        if n is None:
            return ""
        return f"node '{n.name or '#' + str(self.node_index)}' ({n.op_type})"

    def fail(self, message, unsupported=True, needs_constant=False):
        n = self.node
        raise OnnxImportError(f"{self.where()}: {message}" if n is not None else message,
                              op_type=n.op_type if n is not None else None,
                              node=(n.name or f"#{self.node_index}") if n is not None else None,
                              unsupported=unsupported, needs_constant=needs_constant)

    # -- IR building ---------------------------------------------------------

    def loc(self):
        n = self.node
        if n is None:
            return (self.source, 0, 0)
        label = n.name or f"{n.op_type}#{self.node_index}"
        return (f"{self.source}@{label}", self.node_index + 1, 0)

    def op(self, name, operands, attrs=None, result_types=None):
        from paddle_mlir import _core
        try:
            return self.fb.op(name, list(operands), attrs or {}, result_types, loc=self.loc())
        except _core.MLIRError as e:
            self.fail(f"{name} rejected the operands: {e}", unsupported=False)

    def op1(self, name, operands, attrs=None, result_types=None):
        return self.op(name, operands, attrs, result_types)[0]

    def const_value(self, array):
        array = np.asarray(array)
        if array.dtype not in NUMPY_TO_MLIR:
            self.fail(f"constant of numpy type {array.dtype} has no paddle element type")
        return self.fb.constant(np.require(array, requirements="C"), loc=self.loc())

    def scalar(self, x, elt):
        """A rank-0 constant of element type `elt` (broadcasts in binary ops)."""
        if elt == "bf16":
            return self.op1("paddle.cast", [self.const_value(np.array(x, np.float32))],
                            result_types=["tensor<bf16>"])
        return self.const_value(np.array(x, MLIR_TO_NUMPY[elt]))

    # Upstream ops (arith, tensor) for run-time sizes and reshapes that
    # paddle.reshape cannot express.

    def index_const(self, value, elt="index"):
        return self.op1("arith.constant", [], {"value": f"{int(value)} : {elt}"})

    def dim_of(self, value, index):
        """`index` value: dim `index` of `value` at run time."""
        return self.op1("tensor.dim", [value, self.index_const(index)])

    def reshape_groups(self, name, x, groups, out_t, sizes=()):
        """tensor.collapse_shape / expand_shape of `x` by the dim `groups`;
        `sizes` are the dynamic output sizes of expand_shape (index values)
        and the static ones (ints), in order."""
        reassoc = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
        attrs = {"reassociation": reassoc}
        if name == "tensor.expand_shape":
            dynamic = -(2 ** 63)  # ShapedType::kDynamic
            static = [s if isinstance(s, int) else dynamic for s in sizes]
            attrs["static_output_shape"] = f"array<i64: {', '.join(map(str, static))}>"
        operands = [x] + [s for s in sizes if not isinstance(s, int)]
        return self.op1(name, operands, attrs, [out_t])

    def dim_indices(self, dims):
        """`index` values holding the dynamic entries of `dims` at run time."""
        dynamic = [d for d in dims if not is_static(d)]
        if not dynamic:
            return []
        if any(d.value is None for d in dynamic):
            self.fail("a computed run-time size is needed as a dim; only the "
                      "dims of tensors are supported there")
        return [self.dim_of(d.value, d.index) for d in dynamic]

    def materialize_sym(self, sym):
        """IR i64 tensor for a shape value (static ints and dims)."""
        flat = list(sym.reshape(-1))
        if all(is_static(x) for x in flat):
            return self.const_value(np.array(flat, np.int64).reshape(sym.shape))
        if any(not is_static(x) and x.value is None for x in flat):
            self.fail("a value computed from dynamic dims is needed as a tensor here, "
                      "which is not supported")
        elements = [self.index_const(x, "i64") if is_static(x)
                    else self.op1("arith.index_cast", [self.dim_of(x.value, x.index)],
                                  result_types=["i64"])
                    for x in flat]
        return self.op1("tensor.from_elements", elements,
                        result_types=[tensor_type(sym.shape, "i64")])

    # -- environment -----------------------------------------------------------

    def has(self, i):
        """Whether optional input `i` of the current node is present."""
        inputs = self.node.input
        return i < len(inputs) and inputs[i] != ""

    def tensor(self, i):
        if not self.has(i):
            there = "an empty name there" if i < len(self.node.input) else "no such input"
            self.fail(f"input {i} is required but the node has {there}", unsupported=False)
        name = self.node.input[i]
        if name not in self.env:
            self.fail(f"input '{name}' is not defined before use", unsupported=False)
        return self.env[name]

    def value(self, i):
        """The IR value of input `i`, materializing constants and shapes."""
        return self.materialize(self.tensor(i))

    def materialize(self, t):
        if t.value is not None:
            return t.value
        if t.const is not None:
            t.value = self.const_value(t.const)
        elif t.lazy is not None:
            # Rebuild the producing node on IR values, in its own context.
            saved = self.node, self.node_index
            self.node, self.node_index, build = t.lazy
            try:
                t.value = build(self)
            finally:
                self.node, self.node_index = saved
        else:
            t.value = self.materialize_sym(t.sym)
        return t.value

    def known(self, i):
        """Input `i` as a numpy array (constant or shape value) or None."""
        t = self.tensor(i)
        return t.const if t.const is not None else t.sym

    def const_input(self, i, what):
        """Input `i`, which must be known at import time, as numpy."""
        t = self.tensor(i)
        if t.const is not None:
            return t.const
        if t.sym is not None:
            if all(is_static(x) for x in t.sym.reshape(-1)):
                return t.sym.astype(np.int64)
            self.fail(f"{what} (input '{self.node.input[i]}') depends on "
                      "dynamic dims; only import-time constants are supported")
        self.fail(f"{what} (input '{self.node.input[i]}') must be a constant "
                  "(an initializer or computed from constants and static shapes)",
                  needs_constant=True)

    def shape_of(self, i):
        """Shape of input `i`: a tuple of ints and Dims (dynamic dims)."""
        t = self.tensor(i)
        if t.value is None:
            known = t.const if t.const is not None else t.sym
            return tuple(known.shape)
        shape = t.value.shape
        return tuple(Dim(t.value, k) if d is None else d for k, d in enumerate(shape))

    def rank(self, i):
        return len(self.shape_of(i))

    def dtype(self, i):
        t = self.tensor(i)
        if t.value is not None:
            return t.value.dtype
        if t.sym is not None:
            return "i64"
        return NUMPY_TO_MLIR[t.const.dtype]

    def set_output(self, k, value=None, const=None, sym=None):
        if k < len(self.node.output) and self.node.output[k]:
            if const is not None:
                const = np.asarray(const)
            self.env[self.node.output[k]] = Tensor(value, const, sym)

    # -- the graph ---------------------------------------------------------------

    def input_type(self, vi):
        tt = vi.type
        if not tt.HasField("tensor_type"):
            raise OnnxImportError(f"graph input '{vi.name}' is not a tensor "
                                  "(sequences, maps and optionals are not supported)")
        elt = ELEMENT_TYPES.get(tt.tensor_type.elem_type)
        if elt is None:
            raise OnnxImportError(f"graph input '{vi.name}' has element type "
                                  f"{_type_name(tt.tensor_type.elem_type)}, which the "
                                  "paddle dialect does not have")
        if not tt.tensor_type.HasField("shape"):
            raise OnnxImportError(f"graph input '{vi.name}' has no shape (unknown rank); "
                                  "the paddle dialect needs ranked tensors")
        dims = []
        for d in tt.tensor_type.shape.dim:
            # dim_param ("batch") or no value at all: dynamic, kept dynamic.
            dims.append(d.dim_value if d.HasField("dim_value") else None)
        return tensor_type(dims, elt[0])

    def run(self):
        from paddle_mlir import _core
        from . import ops
        graph = self.model.graph
        initializers = {t.name: t for t in graph.initializer}
        if graph.sparse_initializer:
            raise OnnxImportError("sparse initializers are not supported")
        self.check_names(graph)
        inputs = [vi for vi in graph.input if vi.name not in initializers]
        arg_types = [self.input_type(vi) for vi in inputs]
        try:
            self.fb = self.module.add_function(self.function_name, arg_types,
                                               loc=(self.source, 0, 0))
        except _core.MLIRError as e:
            raise OnnxImportError(f"cannot create function '{self.function_name}': {e}")
        for vi, arg in zip(inputs, self.fb.args):
            self.env[vi.name] = Tensor(value=arg)
        numpy_helper = _onnx().numpy_helper
        base_dir = os.path.dirname(self.source) if os.path.isfile(self.source) else None
        for name, init in initializers.items():
            try:
                array = numpy_helper.to_array(init, base_dir or "")
            except Exception as e:
                raise OnnxImportError(f"initializer '{name}' cannot be read: {e}",
                                      unsupported=False) from None
            self.env[name] = Tensor(const=self.check_const_dtype(array, f"initializer '{name}'"))
        self.input_names = [vi.name for vi in inputs]
        self.input_types = arg_types

        for self.node_index, node in enumerate(graph.node):
            self.node = node
            ops.import_node(self)
        self.node = None

        results = []
        for vi in graph.output:
            if vi.name not in self.env:
                raise OnnxImportError(f"graph output '{vi.name}' is not produced by any node",
                                      unsupported=False)
            t = self.env[vi.name]
            self.materialize(t)
            declared = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
            if declared and declared in ELEMENT_TYPES and ELEMENT_TYPES[declared][0] != t.value.dtype:
                raise OnnxImportError(
                    f"graph output '{vi.name}' is declared {ELEMENT_TYPES[declared][0]} "
                    f"but computes {t.value.dtype}", unsupported=False)
            results.append(t.value)
        self.output_names = [vi.name for vi in graph.output]
        try:
            self.fb.ret(results, loc=(self.source, 0, 0))
        except _core.MLIRError as e:
            raise OnnxImportError(f"cannot return the graph outputs: {e}", unsupported=False)

    def check_names(self, graph):
        """What the importer relies on and onnx.checker checks in load() but
        not for import_model(): the graph has outputs, and each tensor name
        is defined once (graph input, initializer or node output)."""
        if not graph.output:
            raise OnnxImportError("the graph has no outputs: the imported function "
                                  "would compute nothing", unsupported=False)
        defined = {}
        for kind, names in (("graph input", [vi.name for vi in graph.input]),
                            ("initializer", [t.name for t in graph.initializer])):
            for name in names:
                # An initializer may give a graph input its default value.
                if name in defined and (kind, defined[name]) != ("initializer", "graph input"):
                    raise OnnxImportError(f"{kind} '{name}' is defined twice (also as "
                                          f"{defined[name]})", unsupported=False)
                defined[name] = kind
        for self.node_index, self.node in enumerate(graph.node):
            for name in self.node.output:
                if name in defined:
                    self.fail(f"output '{name}' is already defined (as {defined[name]}); "
                              "ONNX defines each name once", unsupported=False)
                if name:
                    defined[name] = self.where()
        self.node = None

    def check_const_dtype(self, array, what):
        if array.dtype not in NUMPY_TO_MLIR:
            raise OnnxImportError(f"{what} has element type {array.dtype}, which the "
                                  "paddle dialect does not have")
        return array


def _type_name(elem_type):
    try:
        return _onnx().TensorProto.DataType.Name(elem_type)
    except ValueError:
        return str(elem_type)


class ImportedModel:
    """An imported ONNX model: the `_core` module and its one function.

    `inputs`/`outputs` are the ONNX names of the function's arguments and
    results, in order; `input_types` their MLIR types.
    """

    def __init__(self, module, function_name, inputs, input_types, outputs):
        self.module = module
        self.function_name = function_name
        self.inputs = inputs
        self.input_types = input_types
        self.outputs = outputs

    def to_text(self, debug_info=False):
        return self.module.to_text(debug_info=debug_info)

    def save(self, path):
        self.module.save(os.fspath(path))

    def compile(self, opt_level=3, **compile_options):
        """JIT-compiles the module; returns a function of numpy arrays.
        Keywords are compile options as `paddle_mlir.jit` takes them:
        `precision="bf16"` (matmuls and convolutions on bf16-rounded inputs
        with f32 accumulation, docs/bf16.md), `device="h200"`,
        `library="onednn"`, ..."""
        from paddle_mlir import _core
        from paddle_mlir._jit import compile_options_text
        exe = _core.compile(self.module, opt_level=opt_level,
                            options=compile_options_text(compile_options))
        name = self.function_name

        def run(*arrays):
            return exe.run(name, list(arrays))
        run.executable = exe
        return run


def import_model(model, context=None, module=None, function_name="main",
                 source_name="<onnx>"):
    """Imports a `onnx.ModelProto`; see `load`.

    With `module` given, the function is added to that module (several models
    can share one module and one compilation); otherwise a new module is
    made in `context` (a new `_core.Context` when None).
    """
    from paddle_mlir import _core
    check_function_name(function_name)
    if module is None:
        module = _core.Module(context if context is not None else _core.Context())
    imp = GraphImporter(model, module, function_name, source_name)
    imp.run()
    return ImportedModel(module, function_name, imp.input_names, imp.input_types,
                         imp.output_names)


def load(path, context=None, function_name="main"):
    """Imports the ONNX file at `path` as a `paddle` module.

    Returns an `ImportedModel` (`.module`, `.function_name`, `.inputs`,
    `.outputs`, `.compile()`). Raises `FileNotFoundError` for a missing file,
    `ValueError` for a function name that is not a C identifier, and
    `OnnxImportError` for a corrupt model or one using an op, attribute or
    type the importer does not support (the message names the node).
    """
    check_function_name(function_name)
    model = load_model_proto(path)
    return import_model(model, context=context, function_name=function_name,
                        source_name=os.fspath(path))
