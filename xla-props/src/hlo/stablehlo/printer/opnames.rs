//! Which opcodes lower, and the names of the elementwise ones.

use crate::hlo::Opcode;

pub(super) fn elementwise_name(op: Opcode) -> Option<&'static str> {
    Some(match op {
        Opcode::Abs => "stablehlo.abs",
        Opcode::Negate => "stablehlo.negate",
        Opcode::Sign => "stablehlo.sign",
        Opcode::Not => "stablehlo.not",
        Opcode::Ceil => "stablehlo.ceil",
        Opcode::Floor => "stablehlo.floor",
        Opcode::RoundNearestAfz => "stablehlo.round_nearest_afz",
        Opcode::RoundNearestEven => "stablehlo.round_nearest_even",
        Opcode::Exponential => "stablehlo.exponential",
        Opcode::ExponentialMinusOne => "stablehlo.exponential_minus_one",
        Opcode::Log => "stablehlo.log",
        Opcode::LogPlusOne => "stablehlo.log_plus_one",
        Opcode::Logistic => "stablehlo.logistic",
        Opcode::Sine => "stablehlo.sine",
        Opcode::Cosine => "stablehlo.cosine",
        Opcode::Tan => "stablehlo.tan",
        Opcode::Tanh => "stablehlo.tanh",
        Opcode::Sqrt => "stablehlo.sqrt",
        Opcode::Rsqrt => "stablehlo.rsqrt",
        Opcode::Cbrt => "stablehlo.cbrt",
        // StableHLO has no erf; CHLO's is what JAX emits and XLA accepts.
        Opcode::Erf => "chlo.erf",
        Opcode::IsFinite => "stablehlo.is_finite",
        Opcode::Popcnt => "stablehlo.popcnt",
        Opcode::CountLeadingZeros => "stablehlo.count_leading_zeros",
        Opcode::Add => "stablehlo.add",
        Opcode::Subtract => "stablehlo.subtract",
        Opcode::Multiply => "stablehlo.multiply",
        Opcode::Divide => "stablehlo.divide",
        Opcode::Remainder => "stablehlo.remainder",
        Opcode::Power => "stablehlo.power",
        Opcode::Maximum => "stablehlo.maximum",
        Opcode::Minimum => "stablehlo.minimum",
        Opcode::Atan2 => "stablehlo.atan2",
        Opcode::Real => "stablehlo.real",
        Opcode::Imag => "stablehlo.imag",
        Opcode::Complex => "stablehlo.complex",
        Opcode::And => "stablehlo.and",
        Opcode::Or => "stablehlo.or",
        Opcode::Xor => "stablehlo.xor",
        Opcode::ShiftLeft => "stablehlo.shift_left",
        Opcode::ShiftRightArithmetic => "stablehlo.shift_right_arithmetic",
        Opcode::ShiftRightLogical => "stablehlo.shift_right_logical",
        Opcode::Select => "stablehlo.select",
        Opcode::Clamp => "stablehlo.clamp",
        Opcode::Convert => "stablehlo.convert",
        Opcode::BitcastConvert => "stablehlo.bitcast_convert",
        Opcode::Reshape => "stablehlo.reshape",
        _ => return None,
    })
}

/// True when the lowering handles `op` (for some operands and attributes).
pub fn lowers(op: Opcode) -> bool {
    elementwise_name(op).is_some()
        || op.moves_data()
        || matches!(
            op,
            Opcode::Parameter
                | Opcode::Constant
                | Opcode::Iota
                | Opcode::Tuple
                | Opcode::GetTupleElement
                | Opcode::Copy
                | Opcode::Bitcast
                | Opcode::Compare
                | Opcode::ReducePrecision
                | Opcode::Scatter
                | Opcode::Reduce
                | Opcode::ReduceWindow
                | Opcode::SelectAndScatter
                | Opcode::Sort
                | Opcode::TopK
                | Opcode::Map
                | Opcode::Dot
                | Opcode::Convolution
                | Opcode::TriangularSolve
                | Opcode::RngBitGenerator
                | Opcode::Fusion
                | Opcode::Call
                | Opcode::While
                | Opcode::Conditional
                | Opcode::AllReduce
                | Opcode::AllGather
                | Opcode::ReduceScatter
                | Opcode::AllToAll
                | Opcode::CollectivePermute
                | Opcode::CollectiveBroadcast
                | Opcode::PartitionId
                | Opcode::ReplicaId
        )
}
