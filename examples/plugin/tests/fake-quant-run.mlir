// RUN: tilegraph-run %s -p O0 --reference --no-format-report --save-outputs %t.reference | filecheck %s --check-prefix=REPORT
// RUN: %python -c "import numpy; print(numpy.load('%t.reference/output0.npy').tolist())" | filecheck %s
// RUN: tilegraph-run %s -p O0 --executor interpret --no-format-report --save-outputs %t.interpret | filecheck %s --check-prefix=TILES
// RUN: %python -c "import numpy; print(numpy.load('%t.interpret/output0.npy').tolist())" | filecheck %s

// The op interpreted: by the reference interpreter (graph level) and, lowered to kernels, by
// xDSL's interpreter at the tile level (where it is a host kernel). O0: no pass runs, so
// constant-fold does not compute the result at compile time. On the grid of 4-bit
// integers times 0.25: 0.125 / 0.25 = 0.5 rounds to even (0), 0.375 / 0.25 = 1.5 rounds to 2,
// 400 clips to 7 and -400 to -8.
func.func @main() -> !layout.tensor<6xf32> {
  %x = graph.constant dense<[0.125, 0.375, 0.6, -1.0, 100.0, -100.0]> : !layout.tensor<6xf32>
  %y = example.fake_quant %x {scale = 0.25, bits = 4} : !layout.tensor<6xf32>
  func.return %y : !layout.tensor<6xf32>
}
// REPORT: run (reference)
// TILES:  fake_quant_{{[0-9]+}}{{.*}} no vector lowering for example.fake_quant
// TILES:  run (tiles, interpret)
// CHECK:  [0.0, 0.5, 0.5, -1.0, 1.75, -2.0]
