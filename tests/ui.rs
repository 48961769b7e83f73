//! `#[xla_property]` rejects bad attributes at compile time, with the span of the culprit.

#[test]
fn bad_attributes_fail_to_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
