//! `CaseId`: the small, copyable identity of one case on one backend, which
//! prints as `property::op::dtype::shape::variant::backend` and parses back.

use std::fmt;
use std::str::FromStr;
use std::sync::{OnceLock, RwLock};

use super::space::{case_params, layouts, shapes, CaseSpace, SpaceFilter, CONFIG_SET};
use super::spec::{registry, PropertySpec};
use crate::hlo::{ArrayShape, ElementType, Layout, Opcode};
use crate::inputs::CaseDistribution;
use crate::programs::Form;

/// A backend's id: an index into a process-wide table of backend names.
///
/// ```
/// use xla_props::property::BackendId;
/// let a = BackendId::intern("interpreter");
/// assert_eq!(a, BackendId::intern("interpreter"));
/// assert_eq!(a.name(), "interpreter");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BackendId(u16);

static BACKEND_NAMES: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());

impl BackendId {
    /// The id of a backend name (registering it the first time).
    pub fn intern(name: &str) -> BackendId {
        if let Some(i) = BACKEND_NAMES
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .position(|n| *n == name)
        {
            return BackendId(i as u16);
        }
        let mut names = BACKEND_NAMES.write().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = names.iter().position(|n| *n == name) {
            return BackendId(i as u16);
        }
        names.push(Box::leak(name.to_string().into_boxed_str()));
        BackendId((names.len() - 1) as u16)
    }
    /// The backend name.
    pub fn name(self) -> &'static str {
        BACKEND_NAMES
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(self.0 as usize)
            .copied()
            .unwrap_or("?")
    }
}

/// A case without its backend: what the reference result is keyed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CaseKey {
    /// Index of the property in [`super::registry`].
    pub property: u16,
    /// The op under test.
    pub op: Opcode,
    /// The (first operand's) element type.
    pub dtype: ElementType,
    /// Index into the form's shape table.
    pub shape: u16,
    /// Index into [`layouts`] of the shape's rank.
    pub layout: u8,
    /// The input distribution.
    pub dist: CaseDistribution,
    /// Index into the section's parameters (0 when there are none).
    pub param: u16,
}

/// One case on one backend.
///
/// ```
/// use xla_props::property::CaseId;
/// let name = "vs_reference::add::f16::f16[3,5]{0,1}::special::interpreter";
/// let id: CaseId = name.parse().unwrap();
/// assert_eq!(id.to_string(), name);
/// assert_eq!(id.backend.name(), "interpreter");
/// assert!("vs_reference::add::f16::f16[3,6]{0,1}::special::interpreter".parse::<CaseId>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CaseId {
    /// The backend-free case.
    pub key: CaseKey,
    /// The backend under test.
    pub backend: BackendId,
}

impl CaseKey {
    /// The property.
    pub fn spec(&self) -> &'static PropertySpec {
        registry()[self.property as usize]
    }
    /// The op's form.
    pub fn form(&self) -> Form {
        super::space::case_form(self.spec().template, self.op).unwrap_or(Form::Elementwise)
    }
    /// The logical dims of the case's first operand.
    pub fn dims(&self) -> &'static [i64] {
        if self.spec().shapes == CONFIG_SET {
            return self
                .param()
                .map_or(&[], |c| crate::programs::class_operand_dims(self.op, c));
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

/// 64-bit FNV-1a: stable across platforms and releases (used for seeds and shards).
#[derive(Clone, Copy, Debug)]
pub struct Fnv(u64);

impl Fnv {
    /// A fresh hasher.
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    /// Feeds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    /// The hash.
    pub fn finish(&self) -> u64 {
        self.0
    }
    /// The hash of a string.
    pub fn hash_str(s: &str) -> u64 {
        let mut h = Fnv::new();
        h.write(s.as_bytes());
        h.finish()
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Fnv::new()
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

/// Why a name is not a case name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid case name `{name}`: {why}")]
pub struct ParseCaseIdError {
    /// The name.
    pub name: String,
    /// What is wrong.
    pub why: String,
}

/// The unfiltered case space of every property, built once.
pub(crate) fn full_spaces() -> &'static [Result<CaseSpace, super::space::SpaceError>] {
    static SPACES: OnceLock<Vec<Result<CaseSpace, super::space::SpaceError>>> = OnceLock::new();
    SPACES.get_or_init(|| {
        registry()
            .iter()
            .enumerate()
            .map(|(i, spec)| CaseSpace::new(i as u16, spec, &SpaceFilter::default()))
            .collect()
    })
}

fn parse_shape(s: &str) -> Option<(ElementType, Vec<i64>, Option<Vec<i64>>)> {
    let open = s.find('[')?;
    let close = s.find(']')?;
    let dtype = s[..open].parse().ok()?;
    let dims_text = &s[open + 1..close];
    let dims = if dims_text.is_empty() {
        Vec::new()
    } else {
        dims_text
            .split(',')
            .map(|d| d.parse::<i64>().ok())
            .collect::<Option<Vec<_>>>()?
    };
    let rest = &s[close + 1..];
    let layout = if rest.is_empty() {
        None
    } else {
        let inner = rest.strip_prefix('{')?.strip_suffix('}')?;
        Some(if inner.is_empty() {
            Vec::new()
        } else {
            inner
                .split(',')
                .map(|d| d.parse::<i64>().ok())
                .collect::<Option<Vec<_>>>()?
        })
    };
    Some((dtype, dims, layout))
}

impl FromStr for CaseKey {
    type Err = ParseCaseIdError;
    /// Parses `property::op::dtype::shape::variant` without enumerating the space.
    fn from_str(name: &str) -> Result<CaseKey, ParseCaseIdError> {
        let err = |why: &str| ParseCaseIdError {
            name: name.to_string(),
            why: why.to_string(),
        };
        let parts: Vec<&str> = name.split("::").collect();
        let [prop, op, dtype, shape, variant] = parts.as_slice() else {
            return Err(err("expected property::op::dtype::shape::variant"));
        };
        let property = registry()
            .iter()
            .position(|p| p.name == *prop)
            .ok_or_else(|| err("unknown property"))?;
        let spec = registry()[property];
        let op: Opcode = op.parse().map_err(|_| err("unknown op"))?;
        let dtype: ElementType = dtype.parse().map_err(|_| err("unknown dtype"))?;
        let form = super::space::case_form(spec.template, op)
            .ok_or_else(|| err("the catalogue has no cases for this op"))?;
        let (shape_dtype, dims, layout) = parse_shape(shape).ok_or_else(|| err("bad shape"))?;
        if shape_dtype != dtype {
            return Err(err("the shape's dtype differs from the dtype segment"));
        }
        let (dist, param) = match variant.split_once('.') {
            Some((d, p)) => (d, Some(p)),
            None => (*variant, None),
        };
        let names = case_params(spec, op, form, dtype);
        let shape_idx = if spec.shapes == CONFIG_SET {
            // the class names the shape: its index is the class's
            let class = param.ok_or_else(|| err("the variant needs a parameter"))?;
            let i = names
                .iter()
                .position(|n| *n == class)
                .ok_or_else(|| err("unknown variant parameter"))?;
            if crate::programs::class_operand_dims(op, class) != dims.as_slice() {
                return Err(err("no such shape for this class"));
            }
            i
        } else {
            shapes(form, spec.shapes)
                .iter()
                .position(|d| *d == dims.as_slice())
                .ok_or_else(|| err("no such shape in this property"))?
        };
        let layout_idx = match layout {
            None => 0,
            Some(l) => layouts(dims.len())
                .iter()
                .position(|m| *m == l.as_slice())
                .ok_or_else(|| err("no such layout in this property"))?,
        };
        let dist = CaseDistribution::from_name(dist).ok_or_else(|| err("unknown distribution"))?;
        let param = match (param, names.is_empty()) {
            (None, true) => 0,
            (Some(p), false) => names
                .iter()
                .position(|n| *n == p)
                .ok_or_else(|| err("unknown variant parameter"))?,
            (None, false) => return Err(err("the variant needs a parameter")),
            (Some(_), true) => return Err(err("this op takes no variant parameter")),
        };
        let key = CaseKey {
            property: property as u16,
            op,
            dtype,
            shape: shape_idx as u16,
            layout: layout_idx as u8,
            dist,
            param: param as u16,
        };
        match &full_spaces()[property] {
            Ok(space) if space.index_of(&key).is_some() => Ok(key),
            Ok(_) => Err(err("not a case of this property")),
            Err(e) => Err(err(&e.to_string())),
        }
    }
}

impl FromStr for CaseId {
    type Err = ParseCaseIdError;
    fn from_str(name: &str) -> Result<CaseId, ParseCaseIdError> {
        let (key, backend) = name.rsplit_once("::").ok_or_else(|| ParseCaseIdError {
            name: name.to_string(),
            why: "expected property::op::dtype::shape::variant::backend".to_string(),
        })?;
        if backend.is_empty() {
            return Err(ParseCaseIdError {
                name: name.to_string(),
                why: "empty backend name".to_string(),
            });
        }
        let key: CaseKey = key
            .parse()
            .map_err(|e: ParseCaseIdError| ParseCaseIdError {
                name: name.to_string(),
                why: e.why,
            })?;
        Ok(CaseId {
            key,
            backend: BackendId::intern(backend),
        })
    }
}
