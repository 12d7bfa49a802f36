"""Hostile and careless use of the tools' files (issue 34): outputs that are
device nodes or FIFOs, result sets that fail half-way, signals during a
write or a link, endless inputs, corrupt bytecode, deep nesting, counts that
overflow, and exported names that clash with C.

Every case ends in exit code 0 or 1 with a message naming what was wrong,
never a signal, a hang, a stray temporary file or a replaced device node.
Device nodes are made with mknod in the test's own folder (the null and zero
devices' numbers), never the system's.
"""

import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from paddle_testing import BUILD, PADDLE_OPT, PADDLE_RUN, REPO

PADDLE_COMPILE = BUILD / "bin" / "paddle-compile"
IMPORT_ONNX = [sys.executable, "-m", "paddle_mlir.onnx.cli"]

ADD = """func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = paddle.add %a, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %1 = paddle.mul %a, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
"""


def env_with(tmpdir):
    """This process's environment with TMPDIR (where temporary files of
    device-node outputs and intermediates go) set to `tmpdir`, and the
    package from this checkout importable."""
    return {**os.environ, "TMPDIR": str(tmpdir),
            "PYTHONPATH": str(REPO / "python"), "PADDLE_BUILD_DIR": str(BUILD)}


def null_node(path):
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def assert_still_null_node(path):
    st = os.lstat(path)
    assert stat.S_ISCHR(st.st_mode), f"{path} was replaced by a regular file"
    assert st.st_rdev == os.makedev(1, 3)


def run(cmd, env=None, timeout=300):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert proc.returncode in (0, 1), f"exit {proc.returncode}:\n{proc.stderr}"
    return proc


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    np.save(tmp_path / "a.npy", np.arange(3, dtype=np.float32))
    np.save(tmp_path / "b.npy", np.full(3, 2, np.float32))
    return path


def run_command(tool, module, tmp_path):
    """The command that runs `module`: paddle-run, or an executable compiled
    from it (both take the same run flags)."""
    if tool == "paddle-run":
        return [PADDLE_RUN, module]
    exe = tmp_path / "exe"
    assert run([PADDLE_COMPILE, module, "-o", exe, "--emit", "exe"]).returncode == 0
    return [exe]


def inputs(folder):
    return ["--input", folder / "a.npy", "--input", folder / "b.npy"]


# -- device nodes and FIFOs as outputs -------------------------------------------


@pytest.mark.parametrize("emit", ["mlir", "obj", "so", "exe"])
def test_paddle_compile_writes_into_a_device_node(module, tmp_path, emit):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    node = null_node(tmp_path / "null")
    proc = run([PADDLE_COMPILE, module, "-o", node, "--emit", emit], env=env_with(scratch))
    assert proc.returncode == 0, proc.stderr
    assert_still_null_node(node)
    # No header, weights or intermediate file next to the node or in TMPDIR.
    assert sorted(os.listdir(tmp_path)) == ["a.npy", "add.mlir", "b.npy", "null", "scratch"]
    assert os.listdir(scratch) == []


def test_every_other_writer_writes_into_a_device_node(module, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = env_with(scratch)
    node = null_node(tmp_path / "null")
    # paddle-run --trace and the result files.
    out = tmp_path / "out"
    out.mkdir()
    null_node(out / "main_0.npy")
    proc = run([PADDLE_RUN, module, *inputs(tmp_path), "--trace", node, "--output-dir", out],
               env=env)
    assert proc.returncode == 0, proc.stderr
    assert_still_null_node(node)
    assert_still_null_node(out / "main_0.npy")
    np.testing.assert_array_equal(np.load(out / "main_1.npy"), [0, 2, 4])
    # A compiled executable's --trace.
    exe = tmp_path / "exe"
    assert run([PADDLE_COMPILE, module, "-o", exe, "--emit", "exe", "--instrument-kernels"],
               env=env).returncode == 0
    proc = run([exe, *inputs(tmp_path), "--trace", node], env=env)
    assert proc.returncode == 0, proc.stderr
    assert_still_null_node(node)
    # pm.save, Jitted.export, _core.write_file and paddle-import-onnx.
    script = f"""
import numpy as np, paddle_mlir as pm
f = pm.jit(lambda x: x * 2)
pm.save(lambda x: x + 1, np.ones(3, np.float32), path={str(node)!r})
f.export({str(node)!r}, np.ones(3, np.float32))
from paddle_mlir import _core
_core.write_file({str(node)!r}, b"bytes")
"""
    proc = run([sys.executable, "-c", script], env=env)
    assert proc.returncode == 0, proc.stderr
    assert_still_null_node(node)
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    for suffix in ["", ".mlirbc"]:
        target = node if not suffix else tmp_path / "null.mlirbc"
        if suffix:
            null_node(target)
        proc = run([*IMPORT_ONNX, model, "-o", target], env=env)
        assert proc.returncode == 0, proc.stderr
        assert_still_null_node(target)
    assert os.listdir(scratch) == []


def test_output_errors_name_the_reason(module, tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    cases = [
        (folder, "it is a directory"),
        (tmp_path / "missing" / "x.mlir", "No such file or directory"),
        (tmp_path / ("n" * 300), "File name too long"),
        (module / "x.mlir", "Not a directory"),
    ]
    for target, reason in cases:
        proc = run([PADDLE_COMPILE, module, "-o", target, "--emit", "mlir"])
        assert proc.returncode == 1
        assert f"cannot write '{target}': {reason}" in proc.stderr, proc.stderr


@pytest.mark.skipif(subprocess.run(["unshare", "-m", "true"]).returncode != 0,
                    reason="needs mount namespaces (unshare -m)")
def test_a_read_only_target_says_so(module, tmp_path):
    """As `-o /proc/version` did (a file in a folder where nothing can be
    created): the message gives the real reason, not "No such file". The
    read-only file system is a tmpfs of the test's own, in a private mount
    namespace."""
    ro = tmp_path / "ro"
    ro.mkdir()
    script = (f"mount -t tmpfs -o size=1m none {ro} && echo old > {ro}/version && "
              f"mount -o remount,ro {ro} && "
              f"{PADDLE_COMPILE} {module} -o {ro}/version --emit mlir; echo rc=$?; "
              f"cat {ro}/version")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                          text=True, timeout=120)
    assert f"cannot write '{ro}/version': Read-only file system" in proc.stderr, proc.stderr
    assert proc.stdout.split() == ["rc=1", "old"]


# -- result sets are all or none ---------------------------------------------------


@pytest.mark.parametrize("tool", ["paddle-run", "exe"])
def test_a_failed_result_set_leaves_the_old_one(module, tmp_path, tool):
    out = tmp_path / "out"
    out.mkdir()
    (out / "main_0.npy").write_bytes(b"old result 0")
    (out / "main_1.npy").mkdir()  # result 1 cannot be written
    cmd = run_command(tool, module, tmp_path)
    proc = run([*cmd, *inputs(tmp_path), "--output-dir", out])
    assert proc.returncode == 1
    assert f"cannot write '{out}/main_1.npy': it is a directory" in proc.stderr
    assert (out / "main_0.npy").read_bytes() == b"old result 0"
    assert sorted(os.listdir(out)) == ["main_0.npy", "main_1.npy"]


# -- signals remove temporary files ------------------------------------------------


def wait_blocked_on_fifo(proc, fifo_dir, timeout=120):
    """Waits until `proc` has everything written and sits in open() of a FIFO
    nobody reads (its children, a compiler and a linker, are done)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert proc.poll() is None, proc.communicate()
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        wchan = Path(f"/proc/{proc.pid}/wchan").read_text()
        if not children and wchan in ("wait_for_partner", "fifo_open"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{proc.args} never blocked on the FIFO")


def start_blocked(tool, module, tmp_path, ignored=()):
    """Starts `tool` writing into a FIFO no one reads, so it stops in the last
    step, publishing, with its temporary files (and a compile's
    intermediates) present. Every signal starts at its default action except
    `ignored`, whatever this test process was started with (a shell's
    background job ignores SIGINT). Returns the process, the FIFO, the
    scratch folder ($TMPDIR) and the output folder's listing before."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = env_with(scratch)
    if tool == "compile":
        fifo = work / "lib.so"
        cmd = [PADDLE_COMPILE, module, "-o", fifo, "--emit", "so"]
    elif tool in ("run", "exe"):
        fifo = work / "main_0.npy"
        cmd = [PADDLE_RUN, module] if tool == "run" else [tmp_path / "exe"]
        if tool == "exe":
            assert run([PADDLE_COMPILE, module, "-o", tmp_path / "exe", "--emit", "exe"]
                       ).returncode == 0
        cmd += [*inputs(tmp_path), "--output-dir", work]
    else:
        fifo = work / "m.mlirbc"
        cmd = [sys.executable, "-c", "import numpy as np, paddle_mlir as pm; "
               f"pm.save(lambda x: x + 1, np.ones(3, np.float32), path={str(fifo)!r})"]
    os.mkfifo(fifo)
    before = sorted(os.listdir(work))

    def dispositions():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)

    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, preexec_fn=dispositions)
    try:
        wait_blocked_on_fifo(proc, work)
        assert os.listdir(scratch), "no temporary file to remove"
    except BaseException:
        proc.kill()
        raise
    return proc, fifo, scratch, before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("tool", ["compile", "run", "exe", "python"])
def test_a_signal_leaves_no_temporary_file(module, tmp_path, sig, tool):
    """The signal must remove the temporary files and end the process."""
    proc, fifo, scratch, before = start_blocked(tool, module, tmp_path)
    try:
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    # Python turns SIGINT into KeyboardInterrupt, which ends it by the same
    # signal; the files are gone before its handler runs.
    assert proc.returncode == -sig, proc.stderr.read()
    assert os.listdir(scratch) == []
    assert sorted(os.listdir(fifo.parent)) == before
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("tool", ["compile", "run", "exe", "python"])
def test_an_ignored_signal_stays_ignored(module, tmp_path, tool):
    """Started with SIGINT and SIGHUP ignored (a background job, nohup), the
    tool carries on through them and writes its output once it is read."""
    ignored = (signal.SIGINT, signal.SIGHUP)
    proc, fifo, scratch, _ = start_blocked(tool, module, tmp_path, ignored)
    try:
        for sig in ignored:
            proc.send_signal(sig)
        time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()
        assert os.listdir(scratch), "a temporary file was removed"
        data = fifo.read_bytes()
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert data, "nothing written into the FIFO"
    assert os.listdir(scratch) == []


# -- endless and corrupt inputs ----------------------------------------------------


def zero_node(path):
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))
    return path


def test_endless_inputs_end_in_a_message(module, tmp_path):
    zero = zero_node(tmp_path / "zero")
    for tool in [PADDLE_RUN, PADDLE_OPT, PADDLE_COMPILE]:
        proc = run([tool, zero, "-o", tmp_path / "x.mlir"] if tool == PADDLE_COMPILE
                   else [tool, zero], timeout=60)
        assert proc.returncode == 1
        assert f"cannot read '{zero}': it is a device, not a module file" in proc.stderr
    proc = run([PADDLE_RUN, module, "--input", zero, "--input", tmp_path / "b.npy"],
               timeout=60)
    assert proc.returncode == 1
    assert "malformed .npy: missing the \\x93NUMPY magic" in proc.stderr
    # A symlink to the device is the device.
    link = tmp_path / "link.mlir"
    link.symlink_to(zero)
    assert "it is a device" in run([PADDLE_RUN, link], timeout=60).stderr
    # A FIFO that never ends: read up to the bound, then an error.
    fifo = tmp_path / "endless.mlir"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"exec cat {zero} > {fifo}"])
    try:
        proc = run([PADDLE_RUN, fifo], timeout=120)
    finally:
        writer.kill()
        writer.wait()
    assert proc.returncode == 1
    assert "a module read from a stream may be at most 2 GiB" in proc.stderr


def test_deep_nesting_is_an_error_not_a_stack_overflow(tmp_path):
    deep = 20000
    cases = {
        "attribute": "func.func @main() attributes {x = " + "[" * deep + "]" * deep
                     + "} {\n  return\n}\n",
        "type": "func.func @main(%a: " + "tuple<" * deep + "f32" + ">" * deep + ") {\n"
                "  return\n}\n",
        "module": "module {" * deep + "}" * deep + "\n",
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.mlir"
        path.write_text(text)
        for tool in [PADDLE_RUN, PADDLE_OPT]:
            proc = run([tool, path], timeout=60)
            assert proc.returncode == 1
            assert "the module nests more than 1000 levels deep" in proc.stderr, (
                name, proc.stderr)
    # 200 levels are fine (the check counts brackets, not lines).
    ok = tmp_path / "ok.mlir"
    ok.write_text("func.func @main() -> tensor<1xf32> attributes {x = " + "[" * 200 + "]" * 200
                  + "} {\n  %0 = paddle.constant dense<1.0> : tensor<1xf32>\n"
                  "  return %0 : tensor<1xf32>\n}\n")
    proc = run([PADDLE_RUN, ok], timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_mutated_bytecode_never_crashes_the_process(tmp_path):
    """1000 mutants (1-4 bytes changed) of a model's bytecode through
    Module.parse in one process: each is a module or an MLIRError. Some of
    them abort or crash the upstream reader, which runs in a child."""
    script = r"""
import random, sys
from paddle_mlir import _core as C
ctx = C.Context()
bc = C.Module.parse(ctx, open(sys.argv[1]).read()).to_bytecode()
rng = random.Random(1)
kinds = {}
for i in range(1000):
    b = bytearray(bc)
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    try:
        C.Module.parse(ctx, bytes(b))
        kind = "module"
    except C.MLIRError as e:
        text = str(e)
        kind = ("crash" if "the reader crashed" in text else
                "envelope" if "is not valid MLIR bytecode" in text else "error")
    kinds[kind] = kinds.get(kind, 0) + 1
print(kinds)
"""
    proc = run([sys.executable, "-c", script, REPO / "examples" / "mlp" / "mlp.mlir"],
               env=env_with(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stderr
    kinds = eval(proc.stdout)
    assert sum(kinds.values()) == 1000
    assert kinds.get("crash", 0) >= 1, kinds  # the reader did crash, in the child
    assert kinds.get("envelope", 0) >= 1 and kinds.get("module", 0) >= 1, kinds


def test_corrupt_bytecode_through_the_tools(tmp_path):
    """Mutants that crash the reader give paddle-run exit 1 and a message."""
    from paddle_mlir import _core as C
    bc = C.Module.parse(C.Context(), (REPO / "examples" / "mlp" / "mlp.mlir").read_text()
                        ).to_bytecode()
    rng = random.Random(1)
    crashing = []
    for _ in range(400):
        b = bytearray(bc)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            C.Module.parse(C.Context(), bytes(b))
        except C.MLIRError as e:
            if "the reader crashed" in str(e):
                crashing.append(bytes(b))
        if len(crashing) == 2:
            break
    assert crashing
    for i, data in enumerate(crashing):
        path = tmp_path / f"m{i}.mlirbc"
        path.write_bytes(data)
        for tool in ([PADDLE_RUN, path], [PADDLE_COMPILE, path, "-o", tmp_path / "x.so"],
                     [PADDLE_OPT, path]):
            proc = run(tool, timeout=120)
            assert proc.returncode == 1
            assert f"'{path}' is corrupt MLIR bytecode: the reader crashed" in proc.stderr
    assert not (tmp_path / "x.so").exists()


# -- counts and names ----------------------------------------------------------------


@pytest.mark.parametrize("tool", ["paddle-run", "exe"])
def test_counts_are_bounded(module, tmp_path, tool):
    cmd = run_command(tool, module, tmp_path)
    for flag, value, message in [
        ("--bench", "99999999999999999999",
         "--bench expects a number of runs from 0 to 10000000, got '99999999999999999999'"),
        ("--bench", "-1", "--bench expects a number of runs from 0 to 10000000, got '-1'"),
        ("--concurrency", "4000000000",
         "--concurrency expects a number of threads from 0 to 1024, got '4000000000'"),
        ("--threads", "1e3", "--threads expects a count from 1 to 4096, got '1e3'"),
    ]:
        proc = run([*cmd, *inputs(tmp_path), flag, value], timeout=60)
        assert proc.returncode == 1
        assert message in proc.stderr, proc.stderr
    # Both print small results when no --output-dir is given.
    proc = run([*cmd, *inputs(tmp_path)])
    assert proc.returncode == 0, proc.stderr
    assert "result 0: f32 [3] = {2.000000e+00, 3.000000e+00, 4.000000e+00}" in proc.stdout
    assert "result 1: f32 [3] = {0.000000e+00, 2.000000e+00, 4.000000e+00}" in proc.stdout


C_PROGRAM = r"""
#include "libclash.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  /* The program's own malloc and memcpy are libc's, not the model's. */
  float *x = malloc(3 * sizeof(float));
  memcpy(x, (float[]){1, 2, 3}, 3 * sizeof(float));
  paddle_tensor_t t[5] = {{PADDLE_F32, 1, {3}, x}};
  paddle_status_t s = clash_malloc(&t[0], &t[1]);
  if (!s) s = clash_main(&t[1], &t[2]);
  if (!s) s = clash_int(&t[2], &t[3]);
  if (!s) s = clash_memcpy(&t[3], &t[4]);
  if (s) { fprintf(stderr, "%s\n", paddle_status_message(s)); return 1; }
  printf("%g %g %g\n", ((float *)t[4].data)[0], ((float *)t[4].data)[1],
         ((float *)t[4].data)[2]);
  for (int i = 1; i < 5; ++i) paddle_tensor_free(&t[i]);
  free(x);
  return 0;
}
"""


def test_exported_names_never_clash_with_c(tmp_path):
    funcs = "".join(
        f"func.func @{name}(%a: tensor<3xf32>) -> tensor<3xf32> {{\n"
        f"  %0 = paddle.add %a, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>\n"
        f"  return %0 : tensor<3xf32>\n}}\n" for name in ["malloc", "main", "int", "memcpy"])
    src = tmp_path / "clash.mlir"
    src.write_text(funcs)
    so = tmp_path / "libclash.so"
    proc = run([PADDLE_COMPILE, src, "-o", so])
    assert proc.returncode == 0, proc.stderr
    dynsym = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True,
                            text=True).stdout.split()
    for name in ["malloc", "main", "int", "memcpy"]:
        assert name not in dynsym
        assert f"clash_{name}" in dynsym and f"clash_{name}_signature" in dynsym
    header = (tmp_path / "libclash.h").read_text()
    assert "/* The module's function 'malloc': malloc(tensor<3xf32>)" in header
    (tmp_path / "main.c").write_text(C_PROGRAM)
    cc = subprocess.run(["cc", "-Wall", "-Werror", f"-I{tmp_path}",
                         f"-I{REPO / 'runtime' / 'include'}", str(tmp_path / "main.c"),
                         f"-L{tmp_path}", "-lclash", f"-Wl,-rpath,{tmp_path}", "-o",
                         str(tmp_path / "main")], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    out = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["16", "32", "48"]
    # paddle-run loads the library and finds the functions by their names.
    np.save(tmp_path / "x.npy", np.ones(3, np.float32))
    proc = run([PADDLE_RUN, so, "--function", "malloc", "--input", tmp_path / "x.npy"])
    assert "result 0: f32 [3] = {2.000000e+00" in proc.stdout, proc.stderr


def test_names_that_cannot_be_exported_are_errors(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text('func.func @"a-b"(%a: tensor<3xf32>) -> tensor<3xf32> {\n'
                   "  return %a : tensor<3xf32>\n}\n")
    proc = run([PADDLE_COMPILE, src, "-o", tmp_path / "libbad.so"])
    assert proc.returncode == 1
    assert "function 'a-b' is not a C identifier" in proc.stderr
    good = tmp_path / "good.mlir"
    good.write_text(ADD)
    proc = run([PADDLE_COMPILE, good, "-o", tmp_path / "libpaddle.so"])
    assert proc.returncode == 1
    assert ("symbol prefix 'paddle_' is reserved" in proc.stderr
            and "--symbol-prefix" in proc.stderr), proc.stderr
    proc = run([PADDLE_COMPILE, good, "-o", tmp_path / "libpaddle.so",
                "--symbol-prefix", "9x"])
    assert "symbol prefix '9x' is not the start of a C identifier" in proc.stderr
    proc = run([PADDLE_COMPILE, good, "-o", tmp_path / "libpaddle.so",
                "--symbol-prefix", "model_"])
    assert proc.returncode == 0, proc.stderr
    assert "paddle_status_t model_main(" in (tmp_path / "libpaddle.h").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bad.mlir", "good.mlir", "libpaddle.h", "libpaddle.so"]


def test_other_inputs_that_never_end(tmp_path):
    """Siblings of the endless module: a device spec and an ONNX model are
    read whole, so a device node is refused before reading."""
    zero = zero_node(tmp_path / "zero")
    proc = run([PADDLE_OPT, REPO / "examples" / "mlp" / "mlp.mlir",
                f"--paddle-set-target=device={zero}", "--paddle-fuse"], timeout=60)
    assert proc.returncode == 1
    assert f"cannot read device spec '{zero}': not a regular file" in proc.stderr
    pytest.importorskip("onnx")
    proc = run([*IMPORT_ONNX, zero, "-o", tmp_path / "m.mlir"], env=env_with(tmp_path),
               timeout=60)
    assert proc.returncode == 1
    assert f"ONNX model '{zero}' is not a regular file" in proc.stderr


def test_text_ending_at_a_page_boundary(tmp_path):
    """MLIR's lexer stops at a NUL after the text: a module file whose size
    is a multiple of the page size, mapped without one, had it read past the
    mapping (an unterminated string ran into the next page; found by the
    module loader's fuzzer)."""
    page = os.sysconf("SC_PAGE_SIZE")
    for tool in [PADDLE_RUN, PADDLE_OPT]:
        path = tmp_path / "page.mlir"
        path.write_bytes(b'"' + b"a" * (4 * page - 1))
        proc = run([tool, path], timeout=60)
        assert proc.returncode == 1
        assert "expected '\"' in string literal" in proc.stderr, proc.stderr
