"""Runs ONNX backend node tests (shipped in the onnx wheel) through
import + compile + run, and compares with their reference outputs.

Used by scripts/onnx_conformance.py (the report) and by
python/tests/test_onnx_conformance.py (the checked-in passing set).

Each test is a directory with `model.onnx` and `test_data_set_*/`
(`input_*.pb`, `output_*.pb`). Tests are imported as functions of one shared
module and compiled in batches (one JIT compilation for many small tests);
a batch that fails to compile is retried one test at a time, so one bad test
cannot hide the others.

Outcome of a test:
- passed: every output has the reference's dtype and shape, and values
  within rtol=1e-3, atol=1e-7 (the onnx backend runner's defaults; NaN must
  match NaN; bf16 rtol=1e-2, about two rounding steps), integers and
  booleans exactly;
- unsupported: the importer rejected the model as valid ONNX it does not
  cover (op, attribute value, element type, dynamic shape), with its message;
- failed: anything else (an import error from a broken model, a compile
  error, a run-time error, a wrong result).
"""

import glob
import os
import re
import time

import numpy as np

RTOL, ATOL = 1e-3, 1e-7


def default_data_dir():
    """The onnx wheel's node test folder, or the same tests generated.

    Some onnx wheels ship `onnx/backend/test/data/node`; others (1.23.2 as
    installed here) ship only the generators (`onnx.backend.test.case.node`,
    which compute the expected outputs with onnx's reference code). Then
    the tests are written once, in the same layout, to
    `$PADDLE_BUILD_DIR/onnx-node-tests/<onnx version>/`.
    """
    import onnx
    shipped = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if os.path.isdir(shipped) and os.listdir(shipped):
        return shipped
    build = os.environ.get("PADDLE_BUILD_DIR") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "build")
    target = os.path.join(build, "onnx-node-tests", onnx.__version__)
    if not os.path.isdir(target):
        generate_node_tests(target)
    return target


def generate_node_tests(target):
    """Writes onnx's node test cases to `target` (as onnx's cmd_tools does)."""
    import tempfile
    import warnings

    import onnx.backend.test.case.node as node_cases
    from onnx import numpy_helper
    parent = os.path.dirname(os.path.abspath(target))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=".node-tests-")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    for case in cases:
        d = os.path.join(tmp, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds)
            for kind, arrays, infos in (("input", inputs, case.model.graph.input),
                                        ("output", outputs, case.model.graph.output)):
                for j, a in enumerate(arrays):
                    if isinstance(a, np.generic):
                        a = np.asarray(a)
                    if not isinstance(a, np.ndarray):
                        # Sequences, maps, optionals: no tensor to compare.
                        open(os.path.join(d, "non_tensor_data"), "w").close()
                        continue
                    name = infos[j].name if j < len(infos) else f"{kind}_{j}"
                    with open(os.path.join(ds, f"{kind}_{j}.pb"), "wb") as f:
                        f.write(numpy_helper.from_array(a, name).SerializeToString())
    os.replace(tmp, target)


def list_tests(data_dir=None):
    data_dir = data_dir or default_data_dir()
    return sorted(d for d in os.listdir(data_dir)
                  if os.path.exists(os.path.join(data_dir, d, "model.onnx")))


class Result:
    def __init__(self, name, op_type, status, detail=""):
        self.name, self.op_type, self.status, self.detail = name, op_type, status, detail

    def __repr__(self):
        return f"{self.name}: {self.status} {self.detail}"


_OP_NAMES = None


def op_type_of(name, model):
    """The op a test is about: the node's type for one-node graphs, else the
    longest ONNX op name that starts the test name (expanded functions)."""
    global _OP_NAMES
    if len(model.graph.node) == 1:
        return model.graph.node[0].op_type
    if _OP_NAMES is None:
        import onnx.defs
        _OP_NAMES = sorted({s.name for s in onnx.defs.get_all_schemas_with_history()},
                           key=len, reverse=True)
    key = name[len("test_"):].replace("_", "").lower()
    for op in _OP_NAMES:
        if key.startswith(op.lower()):
            return op
    return "(other)"


def _load_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def _load_data(test_dir):
    sets = []
    for d in sorted(glob.glob(os.path.join(test_dir, "test_data_set_*"))):
        def files(prefix):
            paths = glob.glob(os.path.join(d, prefix + "_*.pb"))
            return [_load_pb(p) for p in sorted(
                paths, key=lambda p: int(re.search(r"_(\d+)\.pb$", p).group(1)))]
        sets.append((files("input"), files("output")))
    return sets


def compare(outputs, expected):
    """None when `outputs` match `expected`, else what differs."""
    if len(outputs) != len(expected):
        return f"{len(outputs)} outputs, expected {len(expected)}"
    for k, (got, ref) in enumerate(zip(outputs, expected)):
        got = np.asarray(got)
        if got.dtype != ref.dtype:
            return f"output {k}: dtype {got.dtype}, expected {ref.dtype}"
        if got.shape != ref.shape:
            return f"output {k}: shape {got.shape}, expected {ref.shape}"
        if ref.dtype.kind in "fc" or ref.dtype.name == "bfloat16":
            # bf16 has 8 significant bits: one rounding step is 2^-8.
            rtol = 1e-2 if ref.dtype.name == "bfloat16" else RTOL
            got, ref = got.astype(np.float64), ref.astype(np.float64)
            ok = np.isclose(got, ref, rtol=rtol, atol=ATOL, equal_nan=True)
            if not ok.all():
                err = np.max(np.abs(got - ref)[~ok])
                return f"output {k}: {int((~ok).sum())} elements differ (max abs err {err:.3g})"
        elif not np.array_equal(got, ref):
            return f"output {k}: {int((got != ref).sum())} elements differ"
    return None


class _Prepared:
    def __init__(self, name, op_type, model, data, fname):
        self.name, self.op_type, self.model, self.data, self.fname = \
            name, op_type, model, data, fname
        self.bound = None


def bind_small_inputs(prep):
    """A copy of the test with its small (<= 64 elements, rank <= 1) graph
    inputs turned into initializers holding the test's data, or None.

    Many node tests pass shapes, axes, pads or Range bounds as graph inputs;
    the paddle ops take those as attributes, so the importer needs them at
    import time. Binding them keeps the test's data and reference outputs;
    such passes are reported separately ("bound")."""
    from onnx import numpy_helper
    graph = prep.model.graph
    inits = {t.name for t in graph.initializer}
    inputs = [vi for vi in graph.input if vi.name not in inits]
    bind = []
    for k, vi in enumerate(inputs):
        values = [ins[k] for ins, _ in prep.data if k < len(ins)]
        if not values or values[0].ndim > 1 or values[0].size > 64:
            continue
        if any(not np.array_equal(v, values[0]) for v in values[1:]):
            continue
        bind.append((k, vi.name, values[0]))
    if not bind:
        return None
    model = type(prep.model)()
    model.CopyFrom(prep.model)
    names = {name for _, name, _ in bind}
    kept = [vi for vi in model.graph.input if vi.name not in names]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    for _, name, value in bind:
        model.graph.initializer.append(numpy_helper.from_array(value, name))
    positions = {k for k, _, _ in bind}
    data = [([x for k, x in enumerate(ins) if k not in positions], outs)
            for ins, outs in prep.data]
    bound = _Prepared(prep.name, prep.op_type, model, data, prep.fname)
    bound.bound = sorted(names)
    return bound


def _import(core, module, prep):
    from .importer import OnnxImportError, import_model
    try:
        import_model(prep.model, module=module, function_name=prep.fname,
                     source_name=prep.name)
        return None
    except OnnxImportError as e:
        if e.needs_constant and not getattr(prep, "bound", None):
            bound = bind_small_inputs(prep)
            if bound is not None:
                _erase(module, prep.fname)
                r = _import(core, module, bound)
                if r is None:
                    prep.__dict__.update(bound.__dict__)
                return r
        _erase(module, prep.fname)
        return Result(prep.name, prep.op_type,
                      "unsupported" if e.unsupported else "failed", f"import: {e}")
    except core.MLIRError as e:
        _erase(module, prep.fname)
        return Result(prep.name, prep.op_type, "failed", f"import: {e}")


def _erase(module, fname):
    if fname in module.function_names():
        module.erase_function(fname)


def _run(exe, prep):
    for inputs, expected in prep.data:
        try:
            # _core passes bf16 as its bits (uint16); the test data uses
            # ml_dtypes' bfloat16.
            outputs = exe.run(prep.fname, [
                np.require(x.view(np.uint16) if x.dtype.name == "bfloat16" else x,
                           requirements="C") for x in inputs])
            outputs = [o.view(e.dtype) if e.dtype.name == "bfloat16" and o.dtype == np.uint16
                       else o for o, e in zip(outputs, expected)]
        except (ValueError, RuntimeError, MemoryError) as e:
            return Result(prep.name, prep.op_type, "failed", f"run: {e}")
        diff = compare(outputs, expected)
        if diff:
            return Result(prep.name, prep.op_type, "failed", diff)
    bound = getattr(prep, "bound", None)
    return Result(prep.name, prep.op_type, "passed",
                  f"inputs bound as constants: {', '.join(bound)}" if bound else "")


def run_tests(names, data_dir=None, batch=32, progress=None, opt_level=0):
    """Runs the named backend tests; returns {name: Result}.

    `opt_level` is passed to `_core.compile` (LLVM optimization level); the
    small test functions gain nothing from -O3 but compile time (about 5x
    more for the passing set).
    """
    import onnx
    from paddle_mlir import _core
    data_dir = data_dir or default_data_dir()
    ctx = _core.Context()
    results = {}
    pending = []

    def flush():
        if not pending:
            return
        module = _core.Module(ctx)
        ok = []
        for prep in pending:
            r = _import(_core, module, prep)
            if r:
                results[prep.name] = r
            else:
                ok.append(prep)
        try:
            exe = _core.compile(module, opt_level=opt_level) if ok else None
        except _core.MLIRError:
            exe = None
        if exe is not None:
            for prep in ok:
                results[prep.name] = _run(exe, prep)
        else:
            # One test broke the batch's compilation: compile each alone.
            for prep in ok:
                single = _core.Module(ctx)
                r = _import(_core, single, prep)
                if r is None:
                    try:
                        r = _run(_core.compile(single, opt_level=opt_level), prep)
                    except _core.MLIRError as e:
                        r = Result(prep.name, prep.op_type, "failed", f"compile: {e}")
                results[prep.name] = r
        if progress:
            progress(len(results))
        pending.clear()

    for i, name in enumerate(names):
        test_dir = os.path.join(data_dir, name)
        if os.path.exists(os.path.join(test_dir, "non_tensor_data")):
            results[name] = Result(name, "(other)", "unsupported",
                                   "sequence, map or optional inputs/outputs")
            continue
        try:
            model = onnx.load(os.path.join(test_dir, "model.onnx"))
            data = _load_data(test_dir)
        except Exception as e:
            results[name] = Result(name, "(other)", "failed", f"cannot read the test: {e}")
            continue
        prep = _Prepared(name, op_type_of(name, model), model, data, f"t{i}")
        pending.append(prep)
        if len(pending) >= batch:
            flush()
    flush()
    return results


def summarize(results):
    """{op_type: {status: count}} and the totals."""
    per_op = {}
    totals = {"passed": 0, "failed": 0, "unsupported": 0, "bound": 0}
    for r in results.values():
        per_op.setdefault(r.op_type, {"passed": 0, "failed": 0, "unsupported": 0, "bound": 0})
        per_op[r.op_type][r.status] += 1
        totals[r.status] += 1
        if r.status == "passed" and r.detail.startswith("inputs bound"):
            per_op[r.op_type]["bound"] += 1
            totals["bound"] += 1
    return per_op, totals


def timed_run(names, **kw):
    t0 = time.time()
    res = run_tests(names, **kw)
    return res, time.time() - t0
