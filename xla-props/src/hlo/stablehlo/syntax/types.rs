//! Types (`tensor<2x3xf32>`, tuples, tokens) and element type names.

use super::ast::{err, Quant, Scalar, Type, R};
use super::cursor::Cursor;
use crate::hlo::dtype::ElementType;

impl Cursor<'_> {
    pub(super) fn ty(&mut self) -> R<Type> {
        self.enter()?;
        self.skip_ws();
        let pos = self.pos;
        let t = if self.eat("tensor") {
            self.expect("<")?;
            let mut dims = Vec::new();
            loop {
                self.skip_ws();
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    let d = self.usize()?;
                    dims.push(
                        i64::try_from(d).map_err(|_| (pos, "dimension too large".to_string()))?,
                    );
                    if self.peek() != Some(b'x') {
                        return err(self.pos, "expected `x` after a dimension");
                    }
                    self.pos += 1;
                } else if self.peek() == Some(b'?') {
                    return err(self.pos, "dynamic dimensions are not supported");
                } else {
                    break;
                }
            }
            self.skip_ws();
            if self.rest_starts("!quant.uniform") {
                let q = self.quant_type()?;
                self.expect(">")?;
                self.leave();
                return Ok(Type::Quant(dims, Box::new(q)));
            }
            let e = self.element_type()?;
            self.skip_ws();
            if self.peek() == Some(b',') {
                return err(self.pos, "tensor encodings are not supported");
            }
            self.expect(">")?;
            Type::Tensor(dims, e)
        } else if self.eat("!stablehlo.token") {
            Type::Token
        } else if self.eat("tuple") {
            self.expect("<")?;
            let items = self.list_until(">", |p| p.ty())?;
            Type::Tuple(items)
        } else {
            // a scalar type used bare (e.g. in `: i64` after attributes) is not a value type
            let found = self.describe_next();
            return err(pos, format!("expected a tensor type, found {found}"));
        };
        self.leave();
        Ok(t)
    }

    /// `!quant.uniform<i8[<min:max>]:f32[:axis], scale[:zp]>` or with
    /// `{scale:zp, ...}` per axis.
    fn quant_type(&mut self) -> R<Quant> {
        let pos = self.pos;
        self.expect("!quant.uniform")?;
        self.expect("<")?;
        let storage = self.element_type()?;
        let Some((mut min, mut max)) = storage.int_range().filter(|_| storage.is_integer()) else {
            return err(
                pos,
                format!("quantized storage type {storage} is not an integer type"),
            );
        };
        if self.eat("<") {
            min = self.int()?.into();
            self.expect(":")?;
            max = self.int()?.into();
            self.expect(">")?;
        }
        self.expect(":")?;
        let expressed = self.element_type()?;
        if !expressed.is_float() {
            return err(
                pos,
                format!("quantized expressed type {expressed} is not a float type"),
            );
        }
        let axis = if self.eat(":") {
            Some(self.int()?)
        } else {
            None
        };
        self.expect(",")?;
        let mut params = Vec::new();
        let per_axis = self.eat("{");
        loop {
            let scale = match self.number()? {
                Scalar::Float(f) => f,
                Scalar::Int(i) => i as f64,
                _ => return err(self.pos, "expected a quantization scale"),
            };
            let zp = if self.eat(":") { self.int()?.into() } else { 0 };
            params.push((scale, zp));
            if !per_axis || !self.eat(",") {
                break;
            }
        }
        if per_axis {
            self.expect("}")?;
        }
        self.expect(">")?;
        if per_axis != axis.is_some() || params.is_empty() {
            return err(
                pos,
                "a per-axis quantized type needs an axis and `{...}` parameters",
            );
        }
        Ok(Quant {
            storage,
            min,
            max,
            expressed,
            axis,
            params,
        })
    }

    pub(super) fn element_type(&mut self) -> R<ElementType> {
        self.skip_ws();
        let pos = self.pos;
        if self.eat("complex") {
            self.expect("<")?;
            let inner = self.element_type()?;
            self.expect(">")?;
            return match inner {
                ElementType::F32 => Ok(ElementType::C64),
                ElementType::F64 => Ok(ElementType::C128),
                t => err(pos, format!("unsupported element type complex<{t}>")),
            };
        }
        let name = self.expect_ident("an element type")?;
        element_type_named(&name).ok_or((pos, format!("unsupported element type `{name}`")))
    }

    // ---- attributes ----
}

/// The IR element type for an MLIR element type name (`f32`, `ui8`, `i1`).
pub(crate) fn element_type_named(name: &str) -> Option<ElementType> {
    use ElementType as E;
    Some(match name {
        "i1" => E::Pred,
        "i2" | "si2" => E::S2,
        "i4" | "si4" => E::S4,
        "i8" | "si8" => E::S8,
        "i16" | "si16" => E::S16,
        "i32" | "si32" => E::S32,
        "i64" | "si64" => E::S64,
        "ui2" => E::U2,
        "ui4" => E::U4,
        "ui8" => E::U8,
        "ui16" => E::U16,
        "ui32" => E::U32,
        "ui64" => E::U64,
        "f16" => E::F16,
        "bf16" => E::Bf16,
        "f32" => E::F32,
        "f64" => E::F64,
        "f8E4M3FN" => E::F8E4M3Fn,
        "f8E5M2" => E::F8E5M2,
        "f8E3M4" => E::F8E3M4,
        "f8E4M3" => E::F8E4M3,
        "f8E4M3FNUZ" => E::F8E4M3Fnuz,
        "f8E4M3B11FNUZ" => E::F8E4M3B11Fnuz,
        "f8E5M2FNUZ" => E::F8E5M2Fnuz,
        "f6E2M3FN" => E::F6E2M3Fn,
        "f6E3M2FN" => E::F6E3M2Fn,
        "f4E2M1FN" => E::F4E2M1Fn,
        "f8E8M0FNU" => E::F8E8M0Fnu,
        _ => return None,
    })
}
