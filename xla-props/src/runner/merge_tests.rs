use super::*;
use crate::runner::args::Shard;
use crate::runner::identity::negate_f32;
use serde_json::json;

/// Merges documents written as JSON, read as the runner's `--json` files
/// are; the merged run as JSON.
fn merge(docs: Vec<(String, Value)>, options: MergeOptions) -> Result<Value, MergeError> {
    let docs = docs
        .into_iter()
        .map(|(origin, doc)| {
            let doc = RunResults::parse(&doc.to_string(), &origin).expect("a results document");
            (origin, doc)
        })
        .collect();
    merge_results(docs, options).map(|m| serde_json::to_value(m).expect("serializes"))
}

/// The cases of a small built-in selection, and its identity.
fn space() -> (Vec<String>, CaseSpaceId) {
    let selection = negate_f32();
    let names: Vec<String> = selection.expected_names().unwrap().into_iter().collect();
    let hash = CaseSpaceHash::of(names.iter().map(String::as_str));
    let id = CaseSpaceId {
        hash: hash.hex(),
        cases: hash.count(),
        selection,
    };
    (names, id)
}

/// Shard `k` of `n` as the runner writes it (cases in a scrambled order).
fn shard(k: u64, n: u64, seed: u64, names: &[String], space: &CaseSpaceId) -> (String, Value) {
    let s = Shard {
        index: k - 1,
        total: n,
    };
    let mut cases: Vec<Value> = names
        .iter()
        .filter(|c| s.contains(c))
        .map(|c| json!({"id": c, "outcome": "passed", "legal": {"reassociation": 2}, "duration_us": k}))
        .collect();
    cases.reverse();
    let doc = json!({
        "passed": cases.len(), "failed": 0, "skipped": 0,
        "legal": {"reassociation": 2 * cases.len()},
        "metadata": {
            "backends": [{"name": "interpreter", "role": "under test"}],
            "seed": seed, "git_revision": "abc", "started_at": format!("2026-01-0{k}T00:00:00Z"),
            "duration_ms": 10 * k, "command": "t", "host": format!("pod-{k}"), "cores": 2,
            "xla_props": "0.1.0", "shard": {"index": k, "total": n}, "case_space": space,
        },
        "families": {"negate": "elementwise-unary"},
        "cases": cases,
    });
    (format!("shard-{k}.json"), doc)
}

#[test]
fn shards_merge_into_the_whole_run_in_name_order() {
    let (names, space) = space();
    let docs: Vec<_> = (1..=3).map(|k| shard(k, 3, 7, &names, &space)).collect();
    let merged = merge(docs, MergeOptions::default()).expect("one run");
    let ids: Vec<&str> = merged["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(ids, expected);
    assert_eq!(merged["passed"], names.len());
    assert_eq!(merged["legal"]["reassociation"], 2 * names.len());
    let meta = &merged["metadata"];
    assert!(meta.get("shard").is_none(), "{meta}");
    assert_eq!(meta["started_at"], "2026-01-01T00:00:00Z");
    assert_eq!(meta["duration_ms"], 30);
    assert_eq!(meta["host"], "pod-1, pod-2, pod-3");
    assert_eq!(meta["shards"].as_array().unwrap().len(), 3);
    assert_eq!(meta["case_space"]["hash"], space.hash.as_str());
}

#[test]
fn a_missing_shard_is_refused_naming_its_cases() {
    let (names, space) = space();
    let docs: Vec<_> = [1, 3].map(|k| shard(k, 3, 7, &names, &space)).into();
    let e = merge(docs, MergeOptions::default()).unwrap_err().0;
    assert!(e.contains("shard(s) 2/3 are missing"), "{e}");
    let s2 = Shard { index: 1, total: 3 };
    let lost: Vec<&String> = names.iter().filter(|n| s2.contains(n)).collect();
    assert!(!lost.is_empty());
    assert!(
        e.contains(&format!("{} case(s) of the run are in no file", lost.len())),
        "{e}"
    );
    for n in lost.iter().take(NAMES_SHOWN) {
        assert!(e.contains(n.as_str()), "{n} not named in {e}");
    }
}

#[test]
fn a_duplicated_shard_is_refused_naming_its_cases() {
    let (names, space) = space();
    let mut docs: Vec<_> = (1..=3).map(|k| shard(k, 3, 7, &names, &space)).collect();
    let mut again = docs[1].clone();
    again.0 = "copy-of-shard-2.json".into();
    docs.push(again);
    let e = merge(docs, MergeOptions::default()).unwrap_err().0;
    assert!(e.contains("shard 2 is given 2 times"), "{e}");
    let s2 = Shard { index: 1, total: 3 };
    let first = names.iter().find(|n| s2.contains(n)).unwrap();
    assert!(
        e.contains(&format!(
            "{first} (in shard-2.json and copy-of-shard-2.json)"
        )),
        "{e}"
    );
}

#[test]
fn mixed_seeds_are_refused_unless_allowed() {
    let (names, space) = space();
    let docs: Vec<_> = (1..=3)
        .map(|k| shard(k, 3, if k == 3 { 8 } else { 7 }, &names, &space))
        .collect();
    let e = merge(docs.clone(), MergeOptions::default()).unwrap_err().0;
    assert!(e.contains("different seeds (7 vs 8)"), "{e}");
    assert!(e.contains("--allow-mixed"), "{e}");
    let merged = merge(docs, MergeOptions { allow_mixed: true }).unwrap();
    assert_eq!(merged["metadata"]["mixed"]["seed"], json!(["7", "8"]));
    let mut docs: Vec<_> = (1..=3).map(|k| shard(k, 3, 7, &names, &space)).collect();
    docs[0].1["metadata"]["git_revision"] = json!("def");
    docs[1].1["metadata"]["git_dirty"] = json!(true);
    let e = merge(docs, MergeOptions::default()).unwrap_err().0;
    assert!(
        e.contains("different git revisions (abc vs abc+dirty vs def)"),
        "{e}"
    );
}

#[test]
fn shards_of_another_case_space_or_split_are_refused() {
    let (names, space) = space();
    let mut other = space.clone();
    other.hash = "0".repeat(32);
    let docs = vec![
        shard(1, 2, 7, &names, &space),
        shard(2, 2, 7, &names, &other),
    ];
    let e = merge(docs, MergeOptions { allow_mixed: true })
        .unwrap_err()
        .0;
    assert!(e.contains("case spaces"), "{e}");
    let docs = vec![
        shard(1, 2, 7, &names, &space),
        shard(2, 3, 7, &names, &space),
    ];
    let e = merge(docs, MergeOptions::default()).unwrap_err().0;
    assert!(e.contains("splits"), "{e}");
}
