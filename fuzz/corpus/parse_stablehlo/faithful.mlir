module @"jit_f.3" attributes {"xla.hlo.entry_computation_layout" = "{(f32[4]{0})->f32[]}"} {
  func.func private @add(%arg0: tensor<f32> loc("x"), %arg1: tensor<f32> loc("y")) -> tensor<f32> {
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("s")
    "func.return"(%0) : (tensor<f32>) -> ()
  }
  func.func private @fused(%arg0: tensor<4xf32> loc("p")) -> tensor<4xf32> {
    %0 = "stablehlo.negate"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc("n")
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }
  func.func private @cond(%arg0: tuple<tensor<i32>, tensor<4xf32>> loc("t")) -> tensor<i1> {
    %0 = "stablehlo.get_tuple_element"(%arg0) {index = 0 : i32} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32> loc("i")
    %1 = "stablehlo.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32> loc("three")
    %2 = "stablehlo.compare"(%0, %1) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1> loc("lt")
    "func.return"(%2) : (tensor<i1>) -> ()
  }
  func.func private @body(%arg0: tuple<tensor<i32>, tensor<4xf32>> loc("t")) -> tuple<tensor<i32>, tensor<4xf32>> {
    %0 = "stablehlo.get_tuple_element"(%arg0) {index = 0 : i32} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32> loc("i")
    %1 = "stablehlo.get_tuple_element"(%arg0) {index = 1 : i32} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32> loc("v")
    %2 = "func.call"(%1) {callee = @fused, xla.fusion_kind = "kLoop"} : (tensor<4xf32>) -> tensor<4xf32> loc("fusion.1")
    %3 = "stablehlo.tuple"(%0, %2) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>> loc("next")
    "func.return"(%3) : (tuple<tensor<i32>, tensor<4xf32>>) -> ()
  }
  func.func public @"jit_f.3"(%arg0: tensor<4xf32> {xla.shape = "f32[4]{0}"} loc("a")) -> tensor<f32> attributes {xla.parameter_positions = array<i64: 1>} {
    %0 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32> loc("zero")
    %1 = "stablehlo.tuple"(%0, %arg0) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>> loc("init")
    %2 = "stablehlo.get_tuple_element"(%1) {index = 0 : i32} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32>
    %3 = "stablehlo.get_tuple_element"(%1) {index = 1 : i32} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
    %4:2 = "stablehlo.while"(%2, %3) ({
    ^bb0(%b0: tensor<i32>, %b1: tensor<4xf32>):
      %5 = "stablehlo.tuple"(%b0, %b1) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>>
      %6 = "func.call"(%5) {callee = @cond} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i1>
      "stablehlo.return"(%6) : (tensor<i1>) -> ()
    }, {
    ^bb0(%b2: tensor<i32>, %b3: tensor<4xf32>):
      %7 = "stablehlo.tuple"(%b2, %b3) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>>
      %8 = "func.call"(%7) {callee = @body} : (tuple<tensor<i32>, tensor<4xf32>>) -> tuple<tensor<i32>, tensor<4xf32>>
      %9 = "stablehlo.get_tuple_element"(%8) {index = 0 : i32} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32>
      %10 = "stablehlo.get_tuple_element"(%8) {index = 1 : i32} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
      "stablehlo.return"(%9, %10) : (tensor<i32>, tensor<4xf32>) -> ()
    }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
    %11 = "stablehlo.tuple"(%4#0, %4#1) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>> loc("while.1")
    %12 = "stablehlo.get_tuple_element"(%11) {index = 1 : i32} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32> loc("out")
    %13 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32> loc("z")
    %14 = "stablehlo.reduce"(%12, %13) ({
    ^bb0(%b4: tensor<f32>, %b5: tensor<f32>):
      %15 = "func.call"(%b4, %b5) {callee = @add} : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%15) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>, "xla.hlo.metadata" = "{op_name=\"jit(f)/reduce\"}"} : (tensor<4xf32>, tensor<f32>) -> tensor<f32> loc("r.7")
    %16 = "stablehlo.reshape"(%14) {xla.hlo_opcode = "copy"} : (tensor<f32>) -> tensor<f32> loc("c")
    "func.return"(%16) : (tensor<f32>) -> ()
  } loc(#loc1)
} loc(unknown)
#loc1 = loc("f.py":3:4)
