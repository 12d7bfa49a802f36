// A device spec whose library-choice fields are missing or invalid is an
// error naming the file and the field.
// RUN: not paddle-opt %s --paddle-use-onednn=device=%S/Inputs/onednn-missing-efficiency.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not paddle-opt %s --paddle-use-onednn=device=%S/Inputs/onednn-bad-efficiency.json 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not paddle-opt %s --paddle-use-onednn=device=%S/Inputs/onednn-without-codegen.json 2>&1 | FileCheck %s --check-prefix=CODEGEN
// RUN: not paddle-opt %s --paddle-use-onednn=device=no-such-device 2>&1 | FileCheck %s --check-prefix=NAME

// MISSING: error: paddle-use-onednn: {{.*}}onednn-missing-efficiency.json: $.onednn: missing required field "f32_efficiency"
// RANGE: error: paddle-use-onednn: {{.*}}onednn-bad-efficiency.json: $.codegen.tiled_f32_efficiency: expected a number in (0, 1] (a fraction of a peak), got 1.5
// CODEGEN: error: paddle-use-onednn: {{.*}}onednn-without-codegen.json: $: missing required field "codegen" (the "onednn" path is compared with it)
// NAME: error: paddle-use-onednn: unknown device 'no-such-device'
func.func @f(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
