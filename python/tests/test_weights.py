"""Weights of ahead-of-time artifacts in a checked sidecar file.

`paddle-compile --weights sidecar` moves the large constants of a module into
OUT.weights (docs/weights-format.md); the artifact loads the file before its
first call. Checked here:
- executables and shared objects give results bitwise equal to the embedded
  artifact and to the JIT (paddle-run), for the MLP of examples/mlp with its
  weights baked in as constants and for a model with weights of several
  element types, one of them small enough to stay embedded;
- the file holds exactly the model's weight bytes (read with an independent
  reader, python/tests/weights_format.py) and the artifact shrinks by them;
- every corrupt, foreign or missing file is exit code 1 with a message that
  names the problem, never a crash; the same through a .so's entry point.
"""

import re
import shutil
import subprocess

import numpy as np
import pytest
from paddle_testing import BUILD, REPO, run_module
from weights_format import read_weights, reseal, write_weights

PADDLE_COMPILE = BUILD / "bin" / "paddle-compile"
MLP = REPO / "examples" / "mlp" / "mlp.mlir"
F32 = np.float32


def compile_module(src, out, *extra):
    return subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(out), *extra],
                          capture_output=True, text=True, timeout=300)


def constant(name, array):
    """A paddle.constant line holding `array` bit-exactly (hex form)."""
    elt = {np.dtype(F32): "f32", np.dtype(np.float64): "f64",
           np.dtype(np.int32): "i32"}[array.dtype]
    ty = "tensor<" + "".join(f"{d}x" for d in array.shape) + elt + ">"
    hexdata = array.astype(array.dtype.newbyteorder("<")).tobytes().hex().upper()
    return f'  %{name} = paddle.constant dense<"0x{hexdata}"> : {ty}\n'


def baked_mlp(weights):
    """examples/mlp/mlp.mlir with its weight arguments turned into constants."""
    text = MLP.read_text()
    header = re.search(r"func\.func @mlp\((.*?)\)\s*->\s*(\(.*?\))\s*\{\n", text, re.S)
    first_arg = header.group(1).split(",")[0].strip()
    body = text[header.end():]
    consts = "".join(constant(n, weights[n]) for n in ["w1", "b1", "w2", "b2"])
    return f"func.func @mlp({first_arg}) -> {header.group(2)} {{\n{consts}{body}"


def mlp_weights(rng):
    return {"w1": (rng.standard_normal((64, 128)) / 8).astype(F32),
            "b1": rng.standard_normal(128).astype(F32),
            "w2": (rng.standard_normal((128, 10)) / 11).astype(F32),
            "b2": rng.standard_normal(10).astype(F32)}


def net_weights(rng):
    return {"w1": (rng.standard_normal((32, 64)) / 6).astype(F32),
            "b1": rng.standard_normal(64).astype(F32),
            "w2": (rng.standard_normal((64, 16)) / 8).astype(F32),
            "s": rng.standard_normal(16).astype(F32),
            "d": rng.standard_normal((16, 16)),
            "t": rng.integers(-1000, 1000, (32, 8)).astype(np.int32)}


def net_module(w):
    """Weights of f32, f64 and i32; compiled with --sidecar-threshold 100,
    all move but `s` (64 bytes)."""
    return ("func.func @net(%x: tensor<?x32xf32>)\n"
            "    -> (tensor<?x16xf32>, tensor<?x16xf64>, tensor<?x8xi32>) {\n"
            + "".join(constant(n, a) for n, a in w.items()) +
            "  %h = paddle.matmul %x, %w1 : tensor<?x32xf32>, tensor<32x64xf32> -> tensor<?x64xf32>\n"
            "  %hb = paddle.add %h, %b1 : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>\n"
            "  %a = paddle.relu %hb : tensor<?x64xf32> -> tensor<?x64xf32>\n"
            "  %l = paddle.matmul %a, %w2 : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>\n"
            "  %th = paddle.tanh %l : tensor<?x16xf32> -> tensor<?x16xf32>\n"
            "  %y = paddle.mul %th, %s : tensor<?x16xf32>, tensor<16xf32> -> tensor<?x16xf32>\n"
            "  %y64 = paddle.cast %y : tensor<?x16xf32> -> tensor<?x16xf64>\n"
            "  %z = paddle.matmul %y64, %d : tensor<?x16xf64>, tensor<16x16xf64> -> tensor<?x16xf64>\n"
            "  %xi = paddle.cast %x : tensor<?x32xf32> -> tensor<?x32xi32>\n"
            "  %k = paddle.matmul %xi, %t : tensor<?x32xi32>, tensor<32x8xi32> -> tensor<?x8xi32>\n"
            "  return %y, %z, %k : tensor<?x16xf32>, tensor<?x16xf64>, tensor<?x8xi32>\n"
            "}\n")


class Model:
    """A module with constants, compiled embedded and with a sidecar."""

    def __init__(self, folder, name, text, weights, x, moved, threshold=256):
        self.folder, self.name, self.weights, self.x = folder, name, weights, x
        self.moved = moved  # names of the weights that go to the file
        folder.mkdir(parents=True, exist_ok=True)
        self.src = folder / f"{name}.mlir"
        self.src.write_text(text)
        self.threshold = ["--sidecar-threshold", str(threshold)]
        self.embedded = folder / f"{name}_embedded"
        self.sidecar = folder / f"{name}_sidecar"
        for out, extra in [(self.embedded, []),
                           (self.sidecar, ["--weights", "sidecar", *self.threshold])]:
            proc = compile_module(self.src, out, "--emit", "exe", *extra)
            assert proc.returncode == 0, proc.stderr
        self.weights_file = folder / f"{name}_sidecar.weights"
        self.input = folder / "x.npy"
        np.save(self.input, x)

    def run(self, exe, out, *extra):
        return subprocess.run([str(exe), "--input", str(self.input), "--output-dir",
                               str(out), *extra], capture_output=True, text=True,
                              timeout=60)

    def results(self, out):
        files = sorted(out.glob(f"{self.name}_*.npy"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
        return [np.load(p) for p in files]


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    rng = np.random.default_rng(1234)
    w = mlp_weights(rng)
    return Model(tmp_path_factory.mktemp("mlp"), "mlp", baked_mlp(w), w,
                 rng.standard_normal((7, 64)).astype(F32), ["w1", "b1", "w2"])


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    rng = np.random.default_rng(99)
    w = net_weights(rng)
    return Model(tmp_path_factory.mktemp("net"), "net", net_module(w), w,
                 (rng.standard_normal((5, 32)) * 100).astype(F32),
                 ["w1", "b1", "w2", "d", "t"], threshold=100)


@pytest.mark.parametrize("which", ["mlp", "net"])
def test_sidecar_exe_is_bitwise_the_embedded_and_the_jit(request, tmp_path, which):
    m = request.getfixturevalue(which)
    emb, side = m.run(m.embedded, tmp_path / "emb"), m.run(m.sidecar, tmp_path / "side")
    assert emb.returncode == 0, emb.stderr
    assert side.returncode == 0, side.stderr
    (tmp_path / "jit").mkdir()
    jit = run_module(tmp_path / "jit", m.src.read_text(), [m.x])
    got_emb, got_side = m.results(tmp_path / "emb"), m.results(tmp_path / "side")
    assert len(jit) == len(got_emb) == len(got_side) > 0
    for i, (j, e, s) in enumerate(zip(jit, got_emb, got_side)):
        assert j.dtype == e.dtype == s.dtype and j.shape == e.shape == s.shape
        assert e.tobytes() == j.tobytes(), f"{which} result {i}: embedded != JIT"
        assert s.tobytes() == j.tobytes(), f"{which} result {i}: sidecar != JIT"


def test_sidecar_mlp_matches_the_mlp_with_weight_arguments(mlp, tmp_path):
    """The sidecar build of the baked MLP computes what examples/mlp/mlp.mlir
    computes with the same weights passed as inputs (JIT)."""
    assert mlp.run(mlp.sidecar, tmp_path / "side").returncode == 0
    w = mlp.weights
    (tmp_path / "jit").mkdir()
    jit = run_module(tmp_path / "jit", MLP.read_text(),
                     [mlp.x, w["w1"], w["b1"], w["w2"], w["b2"]])
    side = mlp.results(tmp_path / "side")
    # Same pipeline, but constants may be folded differently: probabilities
    # to 1e-6 relative (f32), classes exactly.
    np.testing.assert_allclose(side[0], jit[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(side[1], jit[1])


def section_sizes(path):
    """Bytes of .bss/.lbss and of all other allocated sections (what the file
    holds), from `size -A`."""
    out = subprocess.run(["size", "-A", str(path)], capture_output=True,
                         text=True, check=True).stdout
    sizes = {"file": 0, ".bss": 0}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[2].isdigit():
            name, size, addr = parts[0], int(parts[1]), int(parts[2])
            if addr == 0:  # not loaded (debug info, comments)
                continue
            if name in (".bss", ".lbss"):  # .lbss: large data (x86-64)
                sizes[".bss"] += size
            elif name != ".tbss":
                sizes["file"] += size
    return sizes


@pytest.mark.parametrize("which", ["mlp", "net"])
def test_file_holds_the_weights_and_the_artifact_shrinks(request, which):
    m = request.getfixturevalue(which)
    data = m.weights_file.read_bytes()
    parsed = read_weights(data)
    assert parsed["version"] == 1
    stored = sorted(e[1] for e in parsed["entries"])
    expected = sorted(m.weights[n].tobytes() for n in m.moved)
    assert stored == expected
    for name, payload, _ in parsed["entries"]:
        assert re.fullmatch(r"[ -~]+", name)
    weight_bytes = sum(len(p) for p in expected)
    # The weights leave the file-backed sections for .bss (file sizes also
    # move by page padding, so compare sections).
    emb, side = section_sizes(m.embedded), section_sizes(m.sidecar)
    # (the sidecar artifact has a few KB more code: the loader.)
    assert emb["file"] - side["file"] >= weight_bytes / 2, (emb, side, weight_bytes)
    assert side[".bss"] - emb[".bss"] >= weight_bytes, (emb, side, weight_bytes)
    assert m.sidecar.stat().st_size < m.embedded.stat().st_size
    # The fingerprint is in the executable too (exported table of the module).
    nm = subprocess.run(["nm", str(m.sidecar)], capture_output=True, text=True).stdout
    for symbol in ["paddle_weights_table", "paddle_weights_fingerprint",
                   "paddle_weights_count"]:
        assert re.search(rf" [A-Z] {symbol}$", nm, re.M), symbol
    assert not (m.folder / f"{m.name}_embedded.weights").exists()


def test_explicit_weights_path(mlp, tmp_path):
    moved = tmp_path / "elsewhere.weights"
    shutil.copy(mlp.weights_file, moved)
    exe = tmp_path / "model"
    shutil.copy(mlp.sidecar, exe)  # no exe.weights next to the copy
    proc = mlp.run(exe, tmp_path / "out", "--weights", str(moved))
    assert proc.returncode == 0, proc.stderr
    assert mlp.run(mlp.sidecar, tmp_path / "ref").returncode == 0
    for a, b in zip(mlp.results(tmp_path / "out"), mlp.results(tmp_path / "ref")):
        assert a.tobytes() == b.tobytes()
    missing = mlp.run(exe, tmp_path / "o2")
    assert missing.returncode == 1
    assert f"cannot open weights file '{exe}.weights': No such file or directory" \
        in missing.stderr


def corrupt(mlp, case, tmp_path):
    """A bad weights file for the MLP and the message it must give."""
    good = mlp.weights_file.read_bytes()
    parsed = read_weights(good)
    if case == "truncated":
        return good[:40], "is truncated (40 bytes, header needs 64)"
    if case == "truncated_payload":
        return good[:-100], f"is truncated ({len(good) - 100} bytes, header says {len(good)})"
    if case == "flipped_payload_byte":
        bad = bytearray(good)
        bad[len(good) // 2] ^= 0x10
        return bytes(bad), "checksum mismatch"
    if case == "bad_magic":
        return b"NOTPADDL" + good[8:], "is not a Paddle weights file (bad magic)"
    if case == "bad_version":
        return reseal(good[:8] + (7).to_bytes(4, "little") + good[12:]), \
            "has unsupported version 7 (this runtime reads 1)"
    if case == "other_model":
        rng = np.random.default_rng(5)
        w = mlp_weights(rng)
        other = Model(tmp_path / "other", "mlp", baked_mlp(w), w, mlp.x, [])
        theirs = read_weights(other.weights_file.read_bytes())["fingerprint"]
        return other.weights_file.read_bytes(), (
            f"was written for a different model (fingerprint 0x{theirs:016x}, "
            f"this model 0x{parsed['fingerprint']:016x})")
    if case == "wrong_entry_size":
        entries = [(n, p) for n, p, _ in parsed["entries"]]
        name, payload = entries[1]
        entries[1] = (name, payload + b"\0" * 8)
        return write_weights(entries, parsed["fingerprint"]), (
            f"entry 1 '{name}' has {len(payload) + 8} bytes, the model expects "
            f"{len(payload)}")
    assert case == "missing"
    return None, "cannot open weights file '{path}': No such file or directory"


ERROR_CASES = ["truncated", "truncated_payload", "flipped_payload_byte", "bad_magic",
               "bad_version", "other_model", "wrong_entry_size", "missing"]


@pytest.mark.parametrize("case", ERROR_CASES)
def test_bad_weights_file_is_an_error_not_a_crash(mlp, tmp_path, case):
    data, message = corrupt(mlp, case, tmp_path)
    exe = tmp_path / "model"
    shutil.copy(mlp.sidecar, exe)
    path = tmp_path / "model.weights"  # the default path
    if data is not None:
        path.write_bytes(data)
    message = message.replace("{path}", str(path))
    proc = mlp.run(exe, tmp_path / "out")
    assert proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}"
    assert message in proc.stderr
    assert not (tmp_path / "out").exists()
    # The same file given explicitly fails before any input is read.
    if data is not None:
        proc = mlp.run(exe, tmp_path / "out", "--weights", str(path))
        assert proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}"
        assert message.replace(str(path), "") in proc.stderr


def test_embedded_exe_takes_no_weights_file(mlp, tmp_path):
    proc = mlp.run(mlp.embedded, tmp_path / "out", "--weights", str(mlp.weights_file))
    assert proc.returncode == 1
    assert "this model's weights are embedded; it takes no --weights file" in proc.stderr


C_PROGRAM = r"""
#include "libmlp.h"
#include <stdio.h>
#include <stdlib.h>

/* libmlp x.bin rows out.bin [weights]: runs mlp on rows x 64 floats. */
int main(int argc, char **argv) {
  int rows = atoi(argv[2]);
  float *x = malloc(sizeof(float) * rows * 64);
  FILE *f = fopen(argv[1], "rb");
  if (!f || fread(x, sizeof(float), rows * 64, f) != (size_t)rows * 64) return 2;
  fclose(f);
  paddle_status_t s = NULL;
  if (argc > 4)
    s = mlp_load_weights(argv[4]);
  paddle_tensor_t in = {PADDLE_F32, 2, {rows, 64}, x}, p, c;
  if (!s)
    s = mlp_mlp(&in, &p, &c);
  if (s) {
    fprintf(stderr, "error %d: %s\n", (int)paddle_status_code(s), paddle_status_message(s));
    paddle_status_free(s);
    /* A second call reports the same failure (it is kept, not retried). */
    s = mlp_mlp(&in, &p, &c);
    if (s) fprintf(stderr, "again: %s\n", paddle_status_message(s));
    paddle_status_free(s);
    free(x);
    return 1;
  }
  f = fopen(argv[3], "wb");
  fwrite(p.data, sizeof(float), rows * 10, f);
  fwrite(c.data, sizeof(int64_t), rows, f);
  fclose(f);
  paddle_tensor_free(&p);
  paddle_tensor_free(&c);
  free(x);
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_shared_object_with_sidecar(mlp, tmp_path):
    results = {}
    for kind in ["embed", "sidecar"]:
        folder = tmp_path / kind
        folder.mkdir()
        so = folder / "libmlp.so"
        proc = compile_module(mlp.src, so, "--weights", kind)
        assert proc.returncode == 0, proc.stderr
        assert (folder / "libmlp.so.weights").exists() == (kind == "sidecar")
        header = (folder / "libmlp.h").read_text()
        assert ("mlp_load_weights" in header) == (kind == "sidecar")
        (folder / "main.c").write_text(C_PROGRAM if kind == "sidecar" else
                                       C_PROGRAM.replace("mlp_load_weights(argv[4])",
                                                         "NULL"))
        main = folder / "main"
        cc = subprocess.run(["cc", "-Wall", "-Werror", f"-I{folder}",
                             f"-I{REPO / 'runtime' / 'include'}", str(folder / "main.c"),
                             f"-L{folder}", "-lmlp", f"-Wl,-rpath,{folder}", "-o", str(main)],
                            capture_output=True, text=True)
        assert cc.returncode == 0, cc.stderr
        mlp.x.tofile(tmp_path / "x.bin")
        out = folder / "out.bin"
        # Run from another folder: the .so finds its weights next to itself.
        run = subprocess.run([str(main), str(tmp_path / "x.bin"), "7", str(out)],
                             capture_output=True, text=True, timeout=60, cwd="/")
        assert run.returncode == 0, run.stderr
        results[kind] = out.read_bytes()
    assert results["embed"] == results["sidecar"]
    assert mlp.run(mlp.embedded, tmp_path / "exe").returncode == 0
    p, c = mlp.results(tmp_path / "exe")
    assert results["sidecar"] == p.tobytes() + c.tobytes()

    side = tmp_path / "sidecar"
    main, x = side / "main", str(tmp_path / "x.bin")
    weights = side / "libmlp.so.weights"
    explicit = tmp_path / "w.bin"
    weights.rename(explicit)
    run = subprocess.run([str(main), x, "7", str(side / "o2.bin"), str(explicit)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert (side / "o2.bin").read_bytes() == results["sidecar"]

    missing = subprocess.run([str(main), x, "7", str(side / "o3.bin")],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1
    message = f"cannot open weights file '{weights}': No such file or directory"
    assert f"error {2}: mlp: {message}" in missing.stderr  # PADDLE_NOT_FOUND
    assert f"again: mlp: {message}" in missing.stderr

    data, message = corrupt(mlp, "flipped_payload_byte", tmp_path)
    explicit.write_bytes(data)
    bad = subprocess.run([str(main), x, "7", str(side / "o4.bin"), str(explicit)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1
    assert f"weights file '{explicit}': checksum mismatch" in bad.stderr


def test_emit_obj_writes_the_weights_file(mlp, tmp_path):
    obj = tmp_path / "m.o"
    proc = compile_module(mlp.src, obj, "--emit", "obj", "--weights", "sidecar")
    assert proc.returncode == 0, proc.stderr
    assert obj.read_bytes()[:4] == b"\x7fELF"
    assert read_weights((tmp_path / "m.o.weights").read_bytes())["entries"]


@pytest.mark.parametrize("extra,message", [
    (["--weights", "outside"], "--weights must be embed or sidecar; got 'outside'"),
    (["--weights", "sidecar", "--emit", "mlir"], "--weights sidecar needs --emit so, exe or obj"),
    (["--weights", "sidecar", "--sidecar-threshold", "0"],
     "--sidecar-threshold must be at least 1 byte"),
])
def test_option_errors_leave_no_output(mlp, tmp_path, extra, message):
    proc = compile_module(mlp.src, tmp_path / "out", *extra)
    assert proc.returncode == 1
    assert message in proc.stderr
    assert list(tmp_path.iterdir()) == []


THREADS_PROGRAM = r"""
#include "paddle_runtime/runtime.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* threads libA.so libB.so x.bin outA.bin outB.bin: both models (the same
   exported names) in one process, 4 threads each making the first call at
   once. */
typedef paddle_status_t (*mlp_fn)(const paddle_tensor_t *, paddle_tensor_t *,
                                  paddle_tensor_t *);
enum { THREADS = 4, ROWS = 7 };
static float x[ROWS * 64];
static pthread_barrier_t start;
struct job { mlp_fn fn; float out[ROWS * 10]; int failed; };

static void *run(void *arg) {
  struct job *j = arg;
  paddle_tensor_t in = {PADDLE_F32, 2, {ROWS, 64}, x}, p, c;
  pthread_barrier_wait(&start);
  paddle_status_t s = j->fn(&in, &p, &c);
  if (s) {
    fprintf(stderr, "%s\n", paddle_status_message(s));
    paddle_status_free(s);
    j->failed = 1;
    return NULL;
  }
  memcpy(j->out, p.data, sizeof j->out);
  paddle_tensor_free(&p);
  paddle_tensor_free(&c);
  return NULL;
}

int main(int argc, char **argv) {
  (void)argc;
  FILE *f = fopen(argv[3], "rb");
  if (!f || fread(x, sizeof x, 1, f) != 1) return 2;
  fclose(f);
  mlp_fn fns[2];
  for (int m = 0; m < 2; ++m) {
    void *h = dlopen(argv[1 + m], RTLD_NOW | RTLD_LOCAL);
    if (!h || !(fns[m] = (mlp_fn)dlsym(h, "mlp_mlp"))) {
      fprintf(stderr, "%s\n", dlerror());
      return 2;
    }
  }
  static struct job jobs[2 * THREADS];
  pthread_t threads[2 * THREADS];
  pthread_barrier_init(&start, NULL, 2 * THREADS);
  for (int t = 0; t < 2 * THREADS; ++t) {
    jobs[t].fn = fns[t % 2];
    pthread_create(&threads[t], NULL, run, &jobs[t]);
  }
  for (int t = 0; t < 2 * THREADS; ++t)
    pthread_join(threads[t], NULL);
  for (int t = 0; t < 2 * THREADS; ++t)
    if (jobs[t].failed || memcmp(jobs[t].out, jobs[t % 2].out, sizeof jobs[t].out))
      return 3;
  for (int m = 0; m < 2; ++m) {
    f = fopen(argv[4 + m], "wb");
    fwrite(jobs[m].out, sizeof jobs[m].out, 1, f);
    fclose(f);
  }
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_two_sidecar_models_in_one_process_load_concurrently(mlp, tmp_path):
    """Each .so finds and loads its own file (dladdr on the .so's own code),
    once, while several threads make the first call."""
    other_w = mlp_weights(np.random.default_rng(77))
    other = Model(tmp_path / "b", "mlp", baked_mlp(other_w), other_w, mlp.x, [])
    libs = []
    for name, model in [("a", mlp), ("b", other)]:
        so = tmp_path / name / "libmlp.so"
        so.parent.mkdir(exist_ok=True)
        proc = compile_module(model.src, so, "--weights", "sidecar")
        assert proc.returncode == 0, proc.stderr
        libs.append(so)
    (tmp_path / "threads.c").write_text(THREADS_PROGRAM)
    exe = tmp_path / "threads"
    cc = subprocess.run(["cc", "-Wall", "-Werror", "-pthread",
                         f"-I{REPO / 'runtime' / 'include'}", str(tmp_path / "threads.c"),
                         str(BUILD / "runtime" / "libpaddle_runtime.a"), "-lstdc++", "-lm",
                         "-ldl", "-o", str(exe)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    mlp.x.tofile(tmp_path / "x.bin")
    outs = [tmp_path / "outA.bin", tmp_path / "outB.bin"]
    run = subprocess.run([str(exe), *map(str, libs), str(tmp_path / "x.bin"), *map(str, outs)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    for model, out in [(mlp, outs[0]), (other, outs[1])]:
        assert model.run(model.embedded, tmp_path / f"ref{out.stem}").returncode == 0
        expected = model.results(tmp_path / f"ref{out.stem}")[0]
        assert out.read_bytes() == expected.tobytes()
    assert outs[0].read_bytes() != outs[1].read_bytes()


def test_module_without_large_constants(tmp_path, rng):
    """examples/mlp takes its weights as arguments: the sidecar file has no
    entries, and the executable still checks and loads it."""
    exe = tmp_path / "mlp"
    proc = compile_module(MLP, exe, "--emit", "exe", "--weights", "sidecar")
    assert proc.returncode == 0, proc.stderr
    assert read_weights((tmp_path / "mlp.weights").read_bytes())["entries"] == []
    f = np.float32
    args = []
    for i, shape in enumerate([(3, 64), (64, 128), (128,), (128, 10), (10,)]):
        np.save(tmp_path / f"in{i}.npy", rng.standard_normal(shape).astype(f))
        args += ["--input", str(tmp_path / f"in{i}.npy")]
    run = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    (tmp_path / "mlp.weights").unlink()
    run = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "cannot open weights file" in run.stderr
