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

/// One test a snapshot: `name: "corpus file"` snapshots the canonical
/// printing of that file under the test's name.
macro_rules! printer_snapshots {
    ($($name:ident: $file:literal,)*) => {
        $(
            #[test]
            fn $name() {
                if let Some(text) = canonical($file) {
                    insta::assert_snapshot!(stringify!($name), text);
                }
            }
        )*
    };
}

printer_snapshots! {
    printer_constants: "010_constants.hlo",
    printer_convolution: "012_convolution.hlo",
    printer_gather: "018_gather_operation_batchdynamicslice.hlo",
    printer_fusion: "025_numerics_jit_step.hlo",
    printer_old_style_operands: "050_auto_sharding.hlo",
    printer_nested_operands: "072_reshape_mover.hlo",
}
