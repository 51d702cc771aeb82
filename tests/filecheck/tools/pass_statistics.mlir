// RUN: tilegraph-opt %s -p 'algebraic-simplify,cse' --pass-statistics -o %t 2>&1 | filecheck %s
// RUN: tilegraph-opt --list-rules | filecheck %s --check-prefix=RULES
// RUN: not tilegraph-opt %s -p 'algebraic-simplify{only=no-such-rule}' 2>&1 | filecheck %s --check-prefix=BAD

func.func @f(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  %r = graph.relu %x : !layout.tensor<2x3xf32>
  func.return %r : !layout.tensor<2x3xf32>
}

// CHECK: ===- Pass statistics -===
// CHECK: algebraic-simplify (ran 1x)

// RULES: # rule pass pattern result caveat peers
// RULES-NEXT: 1 constant-folding constant-fold op(constants...) constant (the op's reference kernel)
// RULES: {{[0-9]+}} rules

// BAD: error: pass 'algebraic-simplify': unknown rule(s) no-such-rule (tilegraph-opt --list-rules lists them)
