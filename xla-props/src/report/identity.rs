//! A run's identity as its reports record it: the shard a process ran and
//! the case space the unsharded run selects (what makes shards one run).
//! The runner computes them (`runner/identity.rs`); `merge` checks them.

use serde::{Deserialize, Serialize};

/// The shard of a run, as its reports record it: `index` is 1-based (`K` of `--shard K/N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 1-based shard number.
    pub index: u64,
    /// Number of shards.
    pub total: u64,
}

/// What selects a run's cases before any shard: properties, op and dtype
/// filters, backends, libtest's name filter and `--skip`, and the
/// module-aligned XLA shard (`XLA_PROPS_XLA_SHARD`, a batching knob that is
/// part of the case space, not a shard to merge).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CaseSelection {
    /// The properties, by name, in run order.
    pub properties: Vec<String>,
    /// `--op` (empty: all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<String>,
    /// `--dtype` (empty: all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dtypes: Vec<String>,
    /// The backends under test, by name, in run order.
    pub backends: Vec<String>,
    /// libtest's name filter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// libtest's `--skip` patterns.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skip: Vec<String>,
    /// libtest's `--exact`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// `XLA_PROPS_XLA_SHARD`, `K/N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xla_shard: Option<String>,
    /// The backends `xla_shard` applies to (module-aligned shards).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub module_aligned: Vec<String>,
}

/// The case space of a run, as its reports record it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseSpaceId {
    /// `runner::CaseSpaceHash::hex` of every case name the unsharded run selects.
    pub hash: String,
    /// How many cases that is.
    pub cases: u64,
    /// What selected them.
    pub selection: CaseSelection,
}
