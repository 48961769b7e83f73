//! Snapshots of the canonical printer on a few corpus modules.

use std::path::Path;

use xla_props::hlo::{parse_module, print_module};

fn canonical(file: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/xla-hlo")
        .join(file);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if std::env::var_os("CI").is_none() => {
            xla_props::skip::this_test(format!(
                "cannot read {}: {e} (set CI to make this fail)",
                path.display()
            ));
            return None;
        }
        Err(e) => panic!("{}: {e}", path.display()),
    };
    let module = parse_module(&text).unwrap_or_else(|e| panic!("{}", e.render(file, &text)));
    Some(print_module(&module))
}

#[test]
fn printer_constants() {
    if let Some(text) = canonical("010_constants.hlo") {
        insta::assert_snapshot!("printer_constants", text);
    }
}

#[test]
fn printer_convolution() {
    if let Some(text) = canonical("012_convolution.hlo") {
        insta::assert_snapshot!("printer_convolution", text);
    }
}

#[test]
fn printer_gather() {
    if let Some(text) = canonical("018_gather_operation_batchdynamicslice.hlo") {
        insta::assert_snapshot!("printer_gather", text);
    }
}

#[test]
fn printer_fusion() {
    if let Some(text) = canonical("025_numerics_jit_step.hlo") {
        insta::assert_snapshot!("printer_fusion", text);
    }
}

#[test]
fn printer_old_style_operands() {
    if let Some(text) = canonical("050_auto_sharding.hlo") {
        insta::assert_snapshot!("printer_old_style_operands", text);
    }
}

#[test]
fn printer_nested_operands() {
    if let Some(text) = canonical("072_reshape_mover.hlo") {
        insta::assert_snapshot!("printer_nested_operands", text);
    }
}
