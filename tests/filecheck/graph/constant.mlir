// RUN: TILEGRAPH_ROUNDTRIP
// RUN: TILEGRAPH_GENERIC_ROUNDTRIP
// RUN: tilegraph-opt %s --elide-constants-larger-than=4 | filecheck %s --check-prefix=ELIDE
// RUN: tilegraph-opt %s --print-constants | filecheck %s --check-prefix=FULL
// RUN: tilegraph-opt %s --print-constants | tilegraph-opt --print-constants | filecheck %s --check-prefix=FULL

func.func @constants() {
  %f = graph.constant dense<[[1.0, 2.5], [-3.0, 0.125]]> : !layout.tensor<2x2xf32>
  %s = graph.constant dense<6.0> : !layout.tensor<f32>
  %splat = graph.constant dense<0.5> : !layout.tensor<2x3xf16>
  %i = graph.constant dense<[2, -1]> : !layout.tensor<2xi64>
  %b = graph.constant dense<[true, false]> : !layout.tensor<2xi1>
  %special = graph.constant dense<[inf, -inf, nan]> : !layout.tensor<3xf32>
  %tenth = graph.constant dense<0.1> : !layout.tensor<f32>
  %big = graph.constant dense<1.0> : !layout.tensor<300xf32>
  %w = graph.constant dense<0.25> : !layout.tensor<16x2x1x1xf32, NCHW>
  %ramp = graph.constant dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E7F808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B"> : !layout.tensor<300xi8>
  func.return
}
// CHECK-LABEL: func.func @constants
// CHECK-NEXT: %f = graph.constant dense<[[1.0, 2.5], [-3.0, 0.125]]> : !layout.tensor<2x2xf32>
// CHECK-NEXT: %s = graph.constant dense<6.0> : !layout.tensor<f32>
// CHECK-NEXT: %splat = graph.constant dense<0.5> : !layout.tensor<2x3xf16>
// CHECK-NEXT: %i = graph.constant dense<[2, -1]> : !layout.tensor<2xi64>
// CHECK-NEXT: %b = graph.constant dense<[true, false]> : !layout.tensor<2xi1>
// CHECK-NEXT: %special = graph.constant dense<[inf, -inf, nan]> : !layout.tensor<3xf32>
// CHECK-NEXT: %tenth = graph.constant dense<0.1> : !layout.tensor<f32>
// CHECK-NEXT: %big = graph.constant dense<1.0> : !layout.tensor<300xf32>
// CHECK-NEXT: %w = graph.constant dense<0.25> : !layout.tensor<16x2x1x1xf32, NCHW>
// CHECK-NEXT: %ramp = graph.constant dense<__elided__> : !layout.tensor<300xi8>

// GENERIC: %f = "graph.constant"() <{value = #graph.dense<f32, [2, 2], {{\[\[}}1.0, 2.5], [-3.0, 0.125]]>}> : () -> !layout.tensor<2x2xf32>
// GENERIC: %big = "graph.constant"() <{value = #graph.dense<f32, [300], 1.0>}> : () -> !layout.tensor<300xf32>
// GENERIC: %ramp = "graph.constant"() <{value = #graph.dense<i8, [300], __elided__>}> : () -> !layout.tensor<300xi8>

// ELIDE: %f = graph.constant dense<{{\[\[}}1.0, 2.5], [-3.0, 0.125]]>
// ELIDE: %splat = graph.constant dense<0.5> : !layout.tensor<2x3xf16>
// ELIDE: %ramp = graph.constant dense<__elided__> : !layout.tensor<300xi8>

// Printing everything: splats as one value, other small arrays as values, large ones as
// exact hex bytes.
// FULL: %big = graph.constant dense<1.0> : !layout.tensor<300xf32>
// FULL: %w = graph.constant dense<0.25> : !layout.tensor<16x2x1x1xf32, NCHW>
// FULL: %ramp = graph.constant dense<"0x000102030405060708090A0B0C0D0E0F1011
