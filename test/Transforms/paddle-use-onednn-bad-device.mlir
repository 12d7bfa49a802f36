// A device spec whose library-choice fields are missing or invalid is an
// error naming the file and the field.
// RUN: not paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-missing-efficiency.json --paddle-use-onednn 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-bad-efficiency.json --paddle-use-onednn 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-without-codegen.json --paddle-use-onednn 2>&1 | FileCheck %s --check-prefix=CODEGEN
// RUN: not paddle-opt %s --paddle-set-target=device=no-such-device --paddle-use-onednn 2>&1 | FileCheck %s --check-prefix=NAME

// MISSING: error: paddle-set-target: device: {{.*}}onednn-missing-efficiency.json: $.onednn: missing required field "f32_efficiency"
// RANGE: error: paddle-set-target: device: {{.*}}onednn-bad-efficiency.json: $.codegen.tiled_f32_efficiency: expected a number in (0, 1] (a fraction of a peak), got 1.5
// CODEGEN: error: paddle-set-target: device: {{.*}}onednn-without-codegen.json: $: missing required field "codegen" (the "onednn" path is compared with it)
// NAME: error: paddle-set-target: device: unknown device 'no-such-device'
func.func @f(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
