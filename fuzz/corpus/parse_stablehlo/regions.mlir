func.func @main(%x: tensor<4x6xf32>, %i: tensor<2x1xi32>) -> tensor<6xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32>
  %1 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 6>}> : (tensor<4x6xf32>, tensor<2x1xi32>) -> tensor<2x6xf32>
  %2 = stablehlo.dot_general %x, %x, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<6x6xf32>
  %3 = "stablehlo.sort"(%0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %4 = stablehlo.compare  LT, %a, %b,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %4 : tensor<i1>
  }) : (tensor<6xf32>) -> tensor<6xf32>
  %5 = chlo.erf %3 : tensor<6xf32> -> tensor<6xf32>
  %6 = stablehlo.custom_call @check.expect_close(%5, %3) {has_side_effect = true} : (tensor<6xf32>, tensor<6xf32>) -> ()
  return %5 : tensor<6xf32>
}
// -----
func.func @b() {
  %0 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
  check.expect_almost_eq_const %0, dense<[1.0, 2.0]> : tensor<2xf32>
  func.return
}
