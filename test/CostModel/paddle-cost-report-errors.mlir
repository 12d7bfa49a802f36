// RUN: not paddle-opt %s --paddle-set-target=device=%t.missing/spec.json --paddle-cost-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=PATH
// RUN: not paddle-opt %s --paddle-set-target=device=%S/Inputs/bad-json.json --paddle-cost-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not paddle-opt %s --paddle-set-target=device=%S/Inputs/negative-bandwidth.json --paddle-cost-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIELD
// RUN: not paddle-opt %s --paddle-set-target=device=tpu --paddle-cost-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not paddle-opt %s --paddle-set-target=device=h200 --paddle-cost-report=dynamic-dim-size=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=HINT

// PATH: error: paddle-set-target: device: cannot read device spec '{{.*}}.missing/spec.json': No such file or directory
// JSON: error: paddle-set-target: device: {{.*}}bad-json.json: invalid JSON: {{.*}}parse error at line 4, column 1
// FIELD: error: paddle-set-target: device: {{.*}}negative-bandwidth.json: $.memory_bandwidth_bytes_per_s: expected a number > 0, got -5
// NAME: error: paddle-set-target: device: unknown device 'tpu': not a built-in spec (a100, h200, xeon-amx-2c) nor a path to a .json file
// HINT: error: paddle-cost-report: dynamic-dim-size must be >= 0, got -1
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
