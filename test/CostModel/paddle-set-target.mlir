// RUN: paddle-opt %s --paddle-set-target | FileCheck %s --check-prefix=DEFAULT
// RUN: paddle-opt %s --paddle-set-target="device=h200 library=none precision=bf16 vector-bits=256" | FileCheck %s --check-prefix=H200
// Options that are not given keep the module's target.
// RUN: paddle-opt %s --paddle-set-target=device=h200 --paddle-set-target=library=onednn | FileCheck %s --check-prefix=KEEP
// The attribute survives printing and parsing, and passes read it from the
// IR: the cost report and the fusion decisions follow the device.
// RUN: paddle-opt %s --paddle-set-target=device=h200 | paddle-opt | FileCheck %s --check-prefix=H200-IR
// RUN: paddle-opt %s --paddle-set-target=device=h200 | paddle-opt --paddle-cost-report -o /dev/null | FileCheck %s --check-prefix=READ
// RUN: not paddle-opt %s --paddle-set-target=library=mkl 2>&1 | FileCheck %s --check-prefix=LIBRARY
// RUN: not paddle-opt %s --paddle-set-target=precision=f16 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not paddle-opt %s --paddle-set-target=vector-bits=100 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not paddle-opt %s --paddle-set-target=device=tpu 2>&1 | FileCheck %s --check-prefix=DEVICE

// DEFAULT: module attributes {paddle.target = #paddle.target<device = "xeon-amx-2c", vector_bits = {{256|512}}, library = auto, precision = f32, spec = {
// DEFAULT-SAME: kind = "cpu"
// DEFAULT-NOT: notes

// H200: #paddle.target<device = "h200", vector_bits = 256, library = none, precision = bf16, spec = {
// H200-SAME: kind = "gpu"

// KEEP: #paddle.target<device = "h200", vector_bits = {{256|512}}, library = onednn, precision = f32,

// H200-IR: #paddle.target<device = "h200",

// READ: cost report: device h200 (gpu, 132 cores

// LIBRARY: error: paddle-set-target: library must be auto, onednn or none; got 'mkl'
// PRECISION: error: paddle-set-target: precision must be f32 or bf16; got 'f16'
// BITS: error: paddle-set-target: vector-bits must be 128, 256 or 512; got 100
// DEVICE: error: paddle-set-target: device: {{.*}}'tpu'{{.*}}xeon-amx-2c

func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = paddle.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
