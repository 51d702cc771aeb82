// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=idempotent-unary,relu-of-abs,abs-of-neg,relu-clip-merge,clip-clip,clip-redundant,argmax-neg}' --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=argmax-monotone,log-softmax fast-math=true}' --split-input-file | filecheck %s --check-prefix=FAST
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=argmax-monotone,log-softmax}' --split-input-file | filecheck %s --check-prefix=EXACT

// idempotent-unary: f(f(x)) is f(x); the inner op keeps its other user.
func.func @idempotent(%x: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %r = graph.relu %x : !layout.tensor<4xf32>
  %rr = graph.relu %r : !layout.tensor<4xf32>
  %f = graph.floor %x : !layout.tensor<4xf32>
  %ff = graph.floor %f : !layout.tensor<4xf32>
  %s = graph.sign %x : !layout.tensor<4xf32>
  %ss = graph.sign %s : !layout.tensor<4xf32>
  %a = graph.abs %x : !layout.tensor<4xf32>
  %aa = graph.abs %a : !layout.tensor<4xf32>
  func.return %rr, %ff, %ss, %aa : !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @idempotent
// CHECK-NEXT:  %r = graph.relu %x
// CHECK-NEXT:  %f = graph.floor %x
// CHECK-NEXT:  %s = graph.sign %x
// CHECK-NEXT:  %a = graph.abs %x
// CHECK-NEXT:  func.return %r, %f, %s, %a

// -----
// Not idempotent: floor(ceil(x)), sigmoid(sigmoid(x)).
func.func @idempotent_no(%x: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %c = graph.ceil %x : !layout.tensor<4xf32>
  %fc = graph.floor %c : !layout.tensor<4xf32>
  %s = graph.sigmoid %x : !layout.tensor<4xf32>
  %ss = graph.sigmoid %s : !layout.tensor<4xf32>
  func.return %fc, %ss : !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @idempotent_no
// CHECK:       %fc = graph.floor %c
// CHECK:       %ss = graph.sigmoid %s

// -----
// relu-of-abs (floats only) and abs-of-neg.
func.func @abs_rules(%x: !layout.tensor<4xf32>, %i: !layout.tensor<4xi32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xi32>, !layout.tensor<4xf32>) {
  %a = graph.abs %x : !layout.tensor<4xf32>
  %ra = graph.relu %a : !layout.tensor<4xf32>
  %ai = graph.abs %i : !layout.tensor<4xi32>
  %rai = graph.relu %ai : !layout.tensor<4xi32>
  %n = graph.neg %x : !layout.tensor<4xf32>
  %an = graph.abs %n : !layout.tensor<4xf32>
  func.return %ra, %rai, %an : !layout.tensor<4xf32>, !layout.tensor<4xi32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @abs_rules
// CHECK-NEXT:  %a = graph.abs %x
// CHECK-NEXT:  %ai = graph.abs %i
// CHECK-NEXT:  %rai = graph.relu %ai
// CHECK-NEXT:  %an = graph.abs %x
// CHECK-NEXT:  func.return %a, %rai, %an

// -----
// relu-clip-merge: clip(relu(x), -1, 6) is clip(x, 0, 6); relu(clip(x, -3, -1)) is
// clip(x, 0, 0).
func.func @relu_clip(%x: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %lo = graph.constant dense<-1.0> : !layout.tensor<f32>
  %hi = graph.constant dense<6.0> : !layout.tensor<f32>
  %r = graph.relu %x : !layout.tensor<4xf32>
  %c = graph.clip %r, %lo, %hi : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %lo2 = graph.constant dense<-3.0> : !layout.tensor<f32>
  %c2 = graph.clip %x, %lo2, %lo : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %r2 = graph.relu %c2 : !layout.tensor<4xf32>
  func.return %c, %r2 : !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @relu_clip
// CHECK:       %c_k0 = graph.constant dense<0.0> : !layout.tensor<f32>
// CHECK-NEXT:  %c = graph.clip %x, %c_k0, %hi : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
// CHECK:       %r2_k0 = graph.constant dense<0.0> : !layout.tensor<f32>
// CHECK-NEXT:  %r2_k1 = graph.constant dense<0.0> : !layout.tensor<f32>
// CHECK-NEXT:  %r2 = graph.clip %x, %r2_k0, %r2_k1
// CHECK-NOT:   graph.relu

// -----
// relu-clip-merge must not fire: the relu has another user; a bound is not constant;
// the bounds mix -0.0 with relu's +0.0.
func.func @relu_clip_no(%x: !layout.tensor<4xf32>, %b: !layout.tensor<f32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %hi = graph.constant dense<6.0> : !layout.tensor<f32>
  %nz = graph.constant dense<-0.0> : !layout.tensor<f32>
  %r = graph.relu %x : !layout.tensor<4xf32>
  %c = graph.clip %r, none, %hi : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %r1 = graph.relu %x : !layout.tensor<4xf32>
  %d = graph.clip %r1, %b, %hi : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %r2 = graph.relu %x : !layout.tensor<4xf32>
  %e = graph.clip %r2, %nz, %hi : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  func.return %c, %r, %d, %e : !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @relu_clip_no
// CHECK:       %c = graph.clip %r, none, %hi
// CHECK:       %d = graph.clip %r1, %b, %hi
// CHECK:       %e = graph.clip %r2, %nz, %hi

// -----
// clip-clip: clip(clip(x, -2, 5), 0, 8) is clip(x, 0, 5) (bounds reused); disjoint
// ranges clip(clip(x, none, 1), 3, none) give clip(x, 3, 3).
func.func @clip_clip(%x: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %m2 = graph.constant dense<-2.0> : !layout.tensor<f32>
  %p5 = graph.constant dense<5.0> : !layout.tensor<f32>
  %z = graph.constant dense<0.0> : !layout.tensor<f32>
  %p8 = graph.constant dense<8.0> : !layout.tensor<f32>
  %a = graph.clip %x, %m2, %p5 : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %b = graph.clip %a, %z, %p8 : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %three = graph.constant dense<3.0> : !layout.tensor<f32>
  %c = graph.clip %x, none, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %d = graph.clip %c, %three : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  func.return %b, %d : !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @clip_clip
// CHECK:       %b = graph.clip %x, %z, %p5 :
// CHECK:       %d = graph.clip %x, %three, %three :

// -----
// clip-redundant: no bounds, or -inf and inf, is x; clip(x, none, inf) too.
func.func @clip_redundant(%x: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %ninf = graph.constant dense<-inf> : !layout.tensor<f32>
  %inf = graph.constant dense<inf> : !layout.tensor<f32>
  %big = graph.constant dense<3.0e38> : !layout.tensor<f32>
  %a = graph.clip %x : !layout.tensor<4xf32>
  %b = graph.clip %x, %ninf, %inf : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %c = graph.clip %x, none, %inf : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %d = graph.clip %x, %ninf, %big : (!layout.tensor<4xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  func.return %a, %b, %c, %d : !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @clip_redundant
// CHECK:       %d = graph.clip %x, %ninf, %big
// CHECK-NEXT:  func.return %x, %x, %x, %d

// -----
// argmax-neg: arg_max(neg(x)) is arg_min(x) with the same attributes; not for integers.
func.func @argmax_neg(%x: !layout.tensor<3x4xf32>, %i: !layout.tensor<3x4xi32>) -> (!layout.tensor<3xi64>, !layout.tensor<1x4xi64>, !layout.tensor<3xi64>) {
  %n = graph.neg %x : !layout.tensor<3x4xf32>
  %a = graph.arg_max %n {axis = 1, keepdims = 0} : (!layout.tensor<3x4xf32>) -> !layout.tensor<3xi64>
  %b = graph.arg_min %n {axis = 0, select_last_index = 1} : (!layout.tensor<3x4xf32>) -> !layout.tensor<1x4xi64>
  %ni = graph.neg %i : !layout.tensor<3x4xi32>
  %c = graph.arg_max %ni {axis = 1, keepdims = 0} : (!layout.tensor<3x4xi32>) -> !layout.tensor<3xi64>
  func.return %a, %b, %c : !layout.tensor<3xi64>, !layout.tensor<1x4xi64>, !layout.tensor<3xi64>
}
// CHECK-LABEL: func.func @argmax_neg
// CHECK:       %a = graph.arg_min %x {axis = 1, keepdims = 0} :
// CHECK-NEXT:  %b = graph.arg_max %x {axis = 0, select_last_index = 1} :
// CHECK:       %c = graph.arg_max %ni

// -----
// argmax-monotone (fast-math): arg_max(exp(x)) is arg_max(x); not through log.
func.func @argmax_monotone(%x: !layout.tensor<3x4xf32>) -> (!layout.tensor<3x1xi64>, !layout.tensor<3x1xi64>) {
  %e = graph.exp %x : !layout.tensor<3x4xf32>
  %a = graph.arg_max %e {axis = -1} : (!layout.tensor<3x4xf32>) -> !layout.tensor<3x1xi64>
  %l = graph.log %x : !layout.tensor<3x4xf32>
  %b = graph.arg_max %l {axis = -1} : (!layout.tensor<3x4xf32>) -> !layout.tensor<3x1xi64>
  func.return %a, %b : !layout.tensor<3x1xi64>, !layout.tensor<3x1xi64>
}
// FAST-LABEL:  func.func @argmax_monotone
// FAST:        %a = graph.arg_max %x
// FAST:        %b = graph.arg_max %l
// EXACT-LABEL: func.func @argmax_monotone
// EXACT:       %a = graph.arg_max %e

// -----
// log-softmax (fast-math); not when the softmax has another user.
func.func @log_softmax(%x: !layout.tensor<2x5xf32>) -> (!layout.tensor<2x5xf32>, !layout.tensor<2x5xf32>, !layout.tensor<2x5xf32>) {
  %s = graph.softmax %x {axis = 0} : !layout.tensor<2x5xf32>
  %l = graph.log %s : !layout.tensor<2x5xf32>
  %s2 = graph.softmax %x : !layout.tensor<2x5xf32>
  %l2 = graph.log %s2 : !layout.tensor<2x5xf32>
  func.return %l, %l2, %s2 : !layout.tensor<2x5xf32>, !layout.tensor<2x5xf32>, !layout.tensor<2x5xf32>
}
// FAST-LABEL:  func.func @log_softmax
// FAST-NEXT:   %l = graph.log_softmax %x {axis = 0} : !layout.tensor<2x5xf32>
// FAST:        %l2 = graph.log %s2
// EXACT-LABEL: func.func @log_softmax
// EXACT:       %l = graph.log %s

// -----
// clip-clip must not fire: the inner clip has another user, or a bound is NaN.
func.func @clip_clip_no(%x: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %nan = graph.constant dense<nan> : !layout.tensor<f32>
  %a = graph.clip %x, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %b = graph.clip %a, none, %two : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %c = graph.clip %x, %nan : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %d = graph.clip %c, none, %two : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  func.return %a, %b, %d : !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @clip_clip_no
// CHECK:       %b = graph.clip %a, none, %two
// CHECK:       %d = graph.clip %c, none, %two
