// RUN: paddle-opt %s --paddle-dedup-functions --split-input-file | FileCheck %s

// Equal private functions that call themselves, or each other, differ only
// in names: one of each set stays and every call goes to it.
// CHECK-LABEL: func.func private @rec(
// CHECK: call @rec(
// CHECK-NOT: func.func private @rec_0
// CHECK-LABEL: func.func private @ping(
// CHECK: call @pong(
// CHECK-LABEL: func.func private @pong(
// CHECK: arith.muli
// CHECK: call @ping(
// CHECK-NOT: func.func private @ping_0
// CHECK-NOT: func.func private @pong_0
// A different body stays.
// CHECK-LABEL: func.func private @other(
// CHECK: arith.subi
// CHECK-LABEL: func.func @main
// CHECK: call @rec(
// CHECK: call @rec(
// CHECK: call @ping(
// CHECK: call @ping(
// CHECK: call @other(
func.func private @rec(%n: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %m = arith.addi %n, %c1 : i32
  %r = call @rec(%m) : (i32) -> i32
  return %r : i32
}
func.func private @rec_0(%n: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %m = arith.addi %n, %c1 : i32
  %r = call @rec_0(%m) : (i32) -> i32
  return %r : i32
}
func.func private @ping(%n: i32) -> i32 {
  %r = call @pong(%n) : (i32) -> i32
  return %r : i32
}
func.func private @pong(%n: i32) -> i32 {
  %m = arith.muli %n, %n : i32
  %r = call @ping(%m) : (i32) -> i32
  return %r : i32
}
func.func private @ping_0(%n: i32) -> i32 {
  %r = call @pong_0(%n) : (i32) -> i32
  return %r : i32
}
func.func private @pong_0(%n: i32) -> i32 {
  %m = arith.muli %n, %n : i32
  %r = call @ping_0(%m) : (i32) -> i32
  return %r : i32
}
func.func private @other(%n: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %m = arith.subi %n, %c1 : i32
  %r = call @other(%m) : (i32) -> i32
  return %r : i32
}
func.func @main(%n: i32) -> (i32, i32, i32, i32, i32) {
  %0 = call @rec(%n) : (i32) -> i32
  %1 = call @rec_0(%n) : (i32) -> i32
  %2 = call @ping(%n) : (i32) -> i32
  %3 = call @ping_0(%n) : (i32) -> i32
  %4 = call @other(%n) : (i32) -> i32
  return %0, %1, %2, %3, %4 : i32, i32, i32, i32, i32
}

// -----

// Public functions and declarations keep their names, even when equal;
// functions that differ only in a constant stay apart.
// CHECK-LABEL: func.func @pub(
// CHECK-LABEL: func.func @pub_0(
// CHECK: func.func private @decl(i32)
// CHECK: func.func private @decl_0(i32)
// CHECK-LABEL: func.func private @k1(
// CHECK: arith.constant 1
// CHECK-LABEL: func.func private @k2(
// CHECK: arith.constant 2
func.func @pub(%n: i32) -> i32 {
  return %n : i32
}
func.func @pub_0(%n: i32) -> i32 {
  return %n : i32
}
func.func private @decl(i32)
func.func private @decl_0(i32)
func.func private @k1() -> i32 {
  %c = arith.constant 1 : i32
  return %c : i32
}
func.func private @k2() -> i32 {
  %c = arith.constant 2 : i32
  return %c : i32
}
