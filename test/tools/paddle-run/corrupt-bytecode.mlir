// Bytecode that makes the upstream reader abort, crash or loop forever
// (mutants of examples/mlp/mlp.mlir's bytecode, found by mutation and by the
// module loader's fuzzer): the reader runs in a child process with a time
// budget, so every tool ends with exit code 1 and a message naming the file.
// RUN: not paddle-run %S/Inputs/reader-aborted.mlirbc 2>&1 | FileCheck %s --check-prefix=ABORT
// RUN: not paddle-opt %S/Inputs/reader-aborted.mlirbc 2>&1 | FileCheck %s --check-prefix=ABORT
// ABORT: error: '{{.*}}reader-aborted.mlirbc' is corrupt MLIR bytecode: the reader crashed (Aborted): LLVM ERROR
// RUN: not paddle-run %S/Inputs/reader-segfault.mlirbc 2>&1 | FileCheck %s --check-prefix=SEGV
// RUN: not paddle-compile %S/Inputs/reader-segfault.mlirbc -o %t.so 2>&1 | FileCheck %s --check-prefix=SEGV
// SEGV: error: '{{.*}}reader-segfault.mlirbc' is corrupt MLIR bytecode: the reader crashed (Segmentation fault)
// RUN: not paddle-run %S/Inputs/reader-loop.mlirbc 2>&1 | FileCheck %s --check-prefix=LOOP
// LOOP: error: '{{.*}}reader-loop.mlirbc' is corrupt MLIR bytecode: reading it took longer than 5 s (a loop in the reader)
