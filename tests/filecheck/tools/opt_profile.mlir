// RUN: tilegraph-opt %s -p 'set-target{platform=test},O1,lower-graph-to-kernels,tile-kernels,split-cores,inject-sync' --profile 5 -o %t 2>&1 | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=test},O1,lower-graph-to-kernels,tile-kernels,split-cores,inject-sync' --profile --launch host -o %t 2>&1 | filecheck %s --check-prefix=HOST
// RUN: not tilegraph-opt %s -p 'O1' --profile -o %t 2>&1 | filecheck %s --check-prefix=GRAPH

// --profile prints the cycle model's estimate of the lowered module to stderr (the IR still
// goes to -o): the kernels, then the totals with the scheduling mode. A module that is not
// lowered has nothing to estimate.
func.func @main(%x: !layout.tensor<4x64xf32>) -> !layout.tensor<4x64xf32> {
  %r = graph.relu %x : !layout.tensor<4x64xf32>
  %s = graph.sigmoid %r : !layout.tensor<4x64xf32>
  func.return %s : !layout.tensor<4x64xf32>
}

// CHECK: cycle model on test (1.0 GHz)
// CHECK: kernel {{.*}} unit {{.*}} blocks
// CHECK: vector
// CHECK: total {{[0-9.]+}} µs = kernels {{[0-9.]+}} + scheduling {{[0-9.]+}} ({{[0-9]+}} launches, sunk: scheduled on the device, 2 µs each) + host ops 0.0

// HOST: scheduling {{[0-9.]+}} ({{[0-9]+}} launches, host launch, 20 µs each)

// GRAPH: error: --profile: the module has no kernel launches; lower it first
