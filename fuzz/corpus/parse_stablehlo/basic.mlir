module @m {
  func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<i1>) {
    %0 = stablehlo.constant dense<[[1.0, -2.5, 0x7FC00000], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
    %1 = stablehlo.add %a, %0 : tensor<2x3xf32>
    %2:2 = call @pair(%1) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<i1>)
    %c = stablehlo.constant dense<(1.0,-2.0)> : tensor<complex<f32>>
    %3 = stablehlo.real %c : (tensor<complex<f32>>) -> tensor<f32>
    return %2#0, %2#1 : tensor<2x3xf32>, tensor<i1>
  }
  func.func private @pair(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<i1>) {
    %0 = stablehlo.constant dense<true> : tensor<i1>
    %1 = stablehlo.transpose %x, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %1, %0 : tensor<2x3xf32>, tensor<i1>
  }
}
