//! `CaseId`: the small, copyable identity of one case on one backend, which
//! prints as `property::op::dtype::shape::variant::backend` (`key.rs`) and
//! parses back (`parse.rs`). Plain data: what a key means is in `key.rs`.

use std::sync::RwLock;

use crate::hlo::{ElementType, Opcode};
use crate::inputs::Distribution;

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
    /// Index into [`super::layouts`] of the shape's rank.
    pub layout: u8,
    /// The input distribution.
    pub dist: Distribution,
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
    /// Feeds a literal's elements' bits, in order (both parts of a complex
    /// element); its shape is the caller's to feed, as it writes it.
    pub fn write_elements(&mut self, lit: &crate::literal::Literal) {
        for i in 0..lit.element_count() {
            if lit.shape().dtype.is_complex() {
                let (re, im) = lit.get_complex(i);
                self.write(&re.to_bits().to_le_bytes());
                self.write(&im.to_bits().to_le_bytes());
            } else {
                self.write(&lit.get_bits(i).to_le_bytes());
            }
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

/// Why a name is not a case name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid case name `{name}`: {why}")]
pub struct ParseCaseIdError {
    /// The name.
    pub name: String,
    /// What is wrong.
    pub why: String,
}
