//! What a case key says: its property, form, shape, layout and parameter
//! (looked up in the tables), its seed, and its name.

use std::fmt;

use super::groups::{CONFIG_SET, FORMS_SET};
use super::id::{BackendId, CaseId, CaseKey, Fnv};
use super::spec::{registry, PropertySpec};
use super::tables::{case_params, layouts, shapes};
use crate::hlo::{ArrayShape, Layout};
use crate::programs::Form;

impl CaseKey {
    /// The property.
    pub fn spec(&self) -> &'static PropertySpec {
        registry()[self.property as usize]
    }
    /// The op's form.
    pub fn form(&self) -> Form {
        super::tables::case_form(self.spec().template, self.op).unwrap_or(Form::Elementwise)
    }
    /// The logical dims of the case's first operand.
    pub fn dims(&self) -> &'static [i64] {
        if self.spec().shapes == CONFIG_SET {
            return self
                .param()
                .map_or(&[], |c| crate::programs::class_operand_dims(self.op, c));
        }
        if self.spec().shapes == FORMS_SET {
            return crate::programs::forms_operand_dims(self.op);
        }
        shapes(self.form(), self.spec().shapes)
            .get(self.shape as usize)
            .copied()
            .unwrap_or(&[])
    }
    /// The layout of the first operand.
    pub fn layout(&self) -> Layout {
        let dims = self.dims();
        let m2m = layouts(dims.len())
            .get(self.layout as usize)
            .copied()
            .unwrap_or(&[]);
        Layout {
            minor_to_major: m2m.to_vec(),
            extra: None,
        }
    }
    /// True when the first operand has the default layout.
    pub fn is_default_layout(&self) -> bool {
        self.layout == 0
    }
    /// The first operand's shape, with its layout.
    pub fn shape(&self) -> ArrayShape {
        ArrayShape {
            dtype: self.dtype,
            dims: self.dims().to_vec(),
            layout: Some(self.layout()),
        }
    }
    /// The parameter name, if the case has one.
    pub fn param(&self) -> Option<&'static str> {
        case_params(self.spec(), self.op, self.form(), self.dtype)
            .get(self.param as usize)
            .copied()
    }
    /// The variant segment: `dist` or `dist.param`.
    pub fn variant(&self) -> String {
        match self.param() {
            Some(p) => format!("{}.{}", self.dist.name(), p),
            None => self.dist.name().to_string(),
        }
    }
    /// A deterministic 64-bit seed for this case (independent of the backend).
    pub fn seed(&self, run_seed: u64) -> u64 {
        let mut h = Fnv::new();
        h.write(self.spec().name.as_bytes());
        h.write(&[0]);
        h.write(self.op.name().as_bytes());
        h.write(&[0, self.dtype as u8, self.layout, self.dist as u8]);
        h.write(&self.shape.to_le_bytes());
        h.write(&self.param.to_le_bytes());
        h.write(&run_seed.to_le_bytes());
        h.finish()
    }
    /// This case on a backend.
    pub fn on(self, backend: BackendId) -> CaseId {
        CaseId { key: self, backend }
    }
}

impl fmt::Display for CaseKey {
    /// `property::op::dtype::shape::variant` (no backend).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}::{}::{}::{}[",
            self.spec().name,
            self.op,
            self.dtype,
            self.dtype
        )?;
        let dims = self.dims();
        for (i, d) in dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")?;
        if !dims.is_empty() {
            f.write_str("{")?;
            let m2m = layouts(dims.len())
                .get(self.layout as usize)
                .copied()
                .unwrap_or(&[]);
            for (i, d) in m2m.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{d}")?;
            }
            f.write_str("}")?;
        }
        write!(f, "::{}", self.dist.name())?;
        if let Some(p) = self.param() {
            write!(f, ".{p}")?;
        }
        Ok(())
    }
}

impl fmt::Display for CaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}", self.key, self.backend.name())
    }
}
