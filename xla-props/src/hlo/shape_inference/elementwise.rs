//! Shape inference for elementwise, compare, select, clamp, conversions.

use super::*;

impl<'a> Infer<'a> {
    pub(super) fn unary(&self) -> Result<Shape> {
        use Opcode as O;
        let op = self.op;
        let a = self.arr(0)?;
        let t = a.dtype;
        let (ok, expected) = match op {
            O::Abs | O::Sign => (
                t.is_signed_int() || t.is_float() || t.is_complex(),
                "signed integer, float or complex",
            ),
            O::Negate => (
                t.is_integer() || t.is_float() || t.is_complex(),
                "integer, float or complex",
            ),
            O::Not => (t.is_pred() || t.is_integer(), "pred or integer"),
            O::Popcnt | O::CountLeadingZeros => (t.is_integer(), "integer"),
            O::Ceil
            | O::Floor
            | O::RoundNearestAfz
            | O::RoundNearestEven
            | O::IsFinite
            | O::Erf => (t.is_float(), "float"),
            _ => (t.is_float() || t.is_complex(), "float or complex"),
        };
        if !ok {
            return Err(operand_err(
                op,
                format!("expects {expected} elements, got {a}"),
            ));
        }
        let dtype = match (op, t) {
            (O::IsFinite, _) => ElementType::Pred,
            (O::Abs, ElementType::C64) => ElementType::F32,
            (O::Abs, ElementType::C128) => ElementType::F64,
            _ => t,
        };
        Ok(Shape::array(dtype, a.dims.clone()))
    }

    pub(super) fn same_array_shapes(&self, a: &ArrayShape, b: &ArrayShape) -> Result<()> {
        if a.dtype != b.dtype || a.dims != b.dims {
            return Err(operand_err(
                self.op,
                format!("operands must have the same shape, got {a} and {b}"),
            ));
        }
        Ok(())
    }

    pub(super) fn binary(&self) -> Result<Shape> {
        use Opcode as O;
        let op = self.op;
        let (a, b) = (self.arr(0)?, self.arr(1)?);
        self.same_array_shapes(a, b)?;
        let t = a.dtype;
        let (ok, expected) = match op {
            O::Add | O::Multiply | O::Maximum | O::Minimum => (true, ""),
            O::Subtract | O::Divide | O::Remainder | O::Power => (
                t.is_integer() || t.is_float() || t.is_complex(),
                "integer, float or complex",
            ),
            O::Atan2 => (t.is_float() || t.is_complex(), "float or complex"),
            O::And | O::Or | O::Xor => (t.is_pred() || t.is_integer(), "pred or integer"),
            _ => (t.is_integer(), "integer"),
        };
        if !ok {
            return Err(operand_err(
                op,
                format!("expects {expected} elements, got {a}"),
            ));
        }
        Ok(Shape::array(t, a.dims.clone()))
    }

    pub(super) fn compare(&self) -> Result<Shape> {
        let op = self.op;
        let (a, b) = (self.arr(0)?, self.arr(1)?);
        self.same_array_shapes(a, b)?;
        req(op, &self.attrs.direction, "direction")?;
        if let Some(ty) = self.attrs.comparison_type {
            let t = a.dtype;
            let ok = match ty {
                ComparisonType::Float | ComparisonType::TotalOrder => {
                    t.is_float() || t.is_complex()
                }
                ComparisonType::Signed => t.is_signed_int(),
                ComparisonType::Unsigned => t.is_unsigned_int() || t.is_pred(),
            };
            if !ok {
                return Err(attr_err(
                    op,
                    format!("comparison type {} does not apply to {t}", ty.name()),
                ));
            }
        }
        Ok(Shape::array(ElementType::Pred, a.dims.clone()))
    }

    pub(super) fn select(&self) -> Result<Shape> {
        let (p, t, f) = (self.arr(0)?, self.arr(1)?, self.arr(2)?);
        self.same_array_shapes(t, f)?;
        if p.dtype != ElementType::Pred {
            return Err(operand_err(
                self.op,
                format!("predicate must be pred, got {p}"),
            ));
        }
        if p.rank() != 0 && p.dims != t.dims {
            return Err(operand_err(
                self.op,
                format!("predicate {p} must be a scalar or have the dims of {t}"),
            ));
        }
        Ok(Shape::array(t.dtype, t.dims.clone()))
    }

    pub(super) fn clamp(&self) -> Result<Shape> {
        let (lo, x, hi) = (self.arr(0)?, self.arr(1)?, self.arr(2)?);
        for bound in [lo, hi] {
            if bound.dtype != x.dtype || (bound.rank() != 0 && bound.dims != x.dims) {
                return Err(operand_err(
                    self.op,
                    format!("bound {bound} must be a scalar or the shape of the operand {x}"),
                ));
            }
        }
        if x.dtype.is_complex() {
            return Err(operand_err(self.op, format!("complex operand {x}")));
        }
        Ok(Shape::array(x.dtype, x.dims.clone()))
    }

    pub(super) fn convert(&self) -> Result<Shape> {
        let a = self.arr(0)?;
        let d = self.declared_array()?;
        if a.dtype.is_complex() && !d.dtype.is_complex() {
            return Err(operand_err(
                self.op,
                format!("cannot convert complex {a} to real {}", d.dtype),
            ));
        }
        Ok(Shape::array(d.dtype, a.dims.clone()))
    }

    pub(super) fn bitcast_convert(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        let to = self.declared_array()?.dtype;
        if a.dtype.is_complex() != to.is_complex() {
            return Err(operand_err(
                op,
                format!("cannot bitcast-convert between complex and real ({a} to {to})"),
            ));
        }
        let (from_bits, to_bits) = (a.dtype.bitcast_width(), to.bitcast_width());
        let mut dims = a.dims.clone();
        if from_bits > to_bits {
            // wider input: a new minor dimension of from/to elements
            if from_bits % to_bits != 0 {
                return Err(operand_err(
                    op,
                    format!("{from_bits} bits do not split into {to}"),
                ));
            }
            dims.push((from_bits / to_bits) as i64);
        } else if from_bits < to_bits {
            // narrower input: the minor dimension must hold exactly to/from elements
            let ratio = (to_bits / from_bits) as i64;
            if to_bits % from_bits != 0 || dims.last() != Some(&ratio) {
                return Err(operand_err(
                    op,
                    format!("bitcast-convert of {a} to {to} needs a minor dimension of {ratio}"),
                ));
            }
            dims.pop();
        }
        Ok(Shape::array(to, dims))
    }

    pub(super) fn reduce_precision(&self) -> Result<Shape> {
        let op = self.op;
        let a = self.arr(0)?;
        if !a.dtype.is_float() {
            return Err(operand_err(op, format!("expects float elements, got {a}")));
        }
        let e = *req(op, &self.attrs.exponent_bits, "exponent_bits")?;
        let m = *req(op, &self.attrs.mantissa_bits, "mantissa_bits")?;
        if e < 1 || m < 0 {
            return Err(attr_err(
                op,
                format!("exponent_bits={e} must be at least 1 and mantissa_bits={m} at least 0"),
            ));
        }
        Ok(Shape::array(a.dtype, a.dims.clone()))
    }

    pub(super) fn bitcast(&self) -> Result<Shape> {
        let a = self.arr(0)?;
        let d = self.declared_array()?;
        let bytes = |s: &ArrayShape| {
            s.element_count()
                .and_then(|n| n.checked_mul(s.dtype.bit_width() as u64))
        };
        if bytes(a).is_none() || bytes(a) != bytes(d) {
            return Err(operand_err(
                self.op,
                format!("bitcast of {a} to {d} changes the size in bits"),
            ));
        }
        Ok(Shape::array(d.dtype, d.dims.clone()))
    }
}
