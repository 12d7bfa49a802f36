"""Sanitizer runs: libFuzzer targets of the untrusted-input loaders (.npy,
weights files, shared objects, module files), and the runtime tests under
ASan/LSan/UBSan.

The fuzz targets run briefly.

scripts/fuzz.sh builds each target with clang-22 (AddressSanitizer and
UBSan) and fuzzes it from a seed corpus; any crash, leak or sanitizer report
fails. Longer runs: `bash scripts/fuzz.sh 600`.
"""

import subprocess
from pathlib import Path

import pytest
from paddle_testing import BUILD, REPO

CLANG = Path("/usr/lib/llvm-22/bin/clang++")
FUZZER_RT = Path("/usr/lib/llvm-22/lib/clang/22/lib/linux/libclang_rt.fuzzer-x86_64.a")


@pytest.mark.skipif(not (CLANG.exists() and FUZZER_RT.exists()),
                    reason="needs clang-22 and libclang-rt-22-dev (scripts/setup.sh)")
def test_npy_reader_fuzzes_clean(tmp_path):
    assert_fuzzes_clean("npy", tmp_path)


@pytest.mark.skipif(not (CLANG.exists() and FUZZER_RT.exists()),
                    reason="needs clang-22 and libclang-rt-22-dev (scripts/setup.sh)")
def test_weights_parser_fuzzes_clean(tmp_path):
    """paddle_weights_parse (sidecar weights files), from the seed corpus in
    fuzz/corpus/weights (valid and truncated files)."""
    assert_fuzzes_clean("weights", tmp_path)


@pytest.mark.skipif(not (CLANG.exists() and FUZZER_RT.exists()),
                    reason="needs clang-22 and libclang-rt-22-dev (scripts/setup.sh)")
def test_shared_object_check_fuzzes_clean(tmp_path):
    """paddle_check_shared_object (what paddle_executable_load checks before
    dlopen), from a small shared object in fuzz/corpus/elf."""
    assert_fuzzes_clean("elf", tmp_path)


@pytest.mark.skipif(not (CLANG.exists() and FUZZER_RT.exists()),
                    reason="needs clang-22 and libclang-rt-22-dev (scripts/setup.sh)")
def test_module_loader_fuzzes_clean(tmp_path):
    """paddle::sanitizeModuleBuffer and the parse of what it returns (every
    module file and Module.parse), from bytecode of real modules in
    fuzz/corpus/bytecode: mutated bytecode never crashes, aborts or hangs
    the process (the upstream reader runs in a child), and text of any
    nesting is an error or a module."""
    assert_fuzzes_clean("bytecode", tmp_path)


def assert_fuzzes_clean(target, tmp_path):
    proc = subprocess.run(["bash", str(REPO / "scripts" / "fuzz.sh"), "10"],
                          capture_output=True, text=True, timeout=600,
                          env={"PADDLE_FUZZ_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
                               "PADDLE_FUZZ_TARGETS": target,
                               "PADDLE_BUILD_DIR": str(BUILD)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"fuzz: {target} ran clean for 10s" in proc.stdout


@pytest.mark.skipif(not CLANG.exists(), reason="needs clang-22 (scripts/setup.sh)")
def test_runtime_tests_clean_under_asan_lsan_ubsan(tmp_path):
    """The runtime's GoogleTest suites (every error path of the calling
    convention, tensors and the .npy reader) leak nothing and touch no memory
    out of bounds."""
    proc = subprocess.run(["bash", str(REPO / "scripts" / "sanitize-runtime.sh")],
                          capture_output=True, text=True, timeout=600,
                          env={"PADDLE_SANITIZE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "[  PASSED  ]" in proc.stdout
