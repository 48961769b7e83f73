//! Procedural macros for xla-props: the `#[xla_property]` attribute.
//!
//! See `xla_props::property` for what it emits. Names (ops, dtypes, groups)
//! are checked against the opcode table at compile time through `const`
//! evaluation, so the table stays declared once.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ItemFn, Lit, Meta, Token};

const KEYS: &[&str] = &[
    "ops",
    "dtypes",
    "shapes",
    "distributions",
    "layouts",
    "template",
    "tolerance",
    "strict_rounding",
    "limitations",
    "budget",
    "harness_check",
];

/// Declares a property over HLO ops; see the `xla_props::property` module.
///
/// ```ignore
/// #[xla_property(ops = elementwise_binary, dtypes = floats, tolerance = ulp(1))]
/// fn my_property(ctx: &mut CaseContext<'_>) -> Outcome {
///     ctx.compare_with_reference()
/// }
/// ```
///
/// Keys: `ops` (required), `dtypes`, `shapes`, `distributions`, `layouts`,
/// `template`, `tolerance`, `strict_rounding`, `limitations`, `budget`, and
/// `harness_check`. A property runs under the xla-props harness (a test
/// target with `harness = false` whose `main` is `xla_props::main!()`); in
/// an integration test under libtest's default harness it would not run, so
/// the attribute also emits a libtest test, `NAME_needs_harness_false`, that
/// fails with the lines to add (it cannot exist under `harness = false`).
/// `harness_check = false` leaves it out, for a property compiled into a
/// libtest target only for its case names and run by another target.
#[proc_macro_attribute]
pub fn xla_property(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr.into(), item.into()) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// A name as written: `add`, `round_nearest_afz` or `"round-nearest-afz"`, with its span.
fn name_of(e: &Expr, what: &str) -> syn::Result<(String, Span)> {
    match e {
        Expr::Path(p) if p.path.get_ident().is_some() => {
            let id = p
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            Ok((id, e.span()))
        }
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok((s.value(), e.span())),
        _ => Err(syn::Error::new(
            e.span(),
            format!("expected {what} name (an identifier or a string)"),
        )),
    }
}

/// What each compile-time check says when the name is unknown.
fn check_message(check: &str, name: &str) -> String {
    let what = match check {
        "op" => "unknown op",
        "op_group" => "unknown op group",
        "dtype" => "unknown dtype",
        "dtype_group" => "unknown dtype group",
        "distribution" => "unknown distribution",
        _ => "unknown shape set",
    };
    format!("{what} `{name}` in #[xla_property]")
}

/// A `const` item that fails to evaluate, at the name's span, when the name is unknown.
fn check_call(check: &str, lit: &syn::LitStr, span: Span) -> TokenStream2 {
    let f = syn::Ident::new(check, span);
    let msg = syn::LitStr::new(&check_message(check, &lit.value()), span);
    quote_spanned! {span=>
        const _: () = ::xla_props::property::validate::#f(#lit, #msg);
    }
}

/// `GROUP` or `[a, b, ...]`: returns (is_list, names).
fn selection(e: &Expr, what: &str) -> syn::Result<(bool, Vec<(String, Span)>)> {
    match e {
        Expr::Array(a) => {
            if a.elems.is_empty() {
                return Err(syn::Error::new(
                    e.span(),
                    format!("the {what} list is empty"),
                ));
            }
            let names = a
                .elems
                .iter()
                .map(|x| name_of(x, what))
                .collect::<syn::Result<Vec<_>>>()?;
            Ok((true, names))
        }
        _ => Ok((false, vec![name_of(e, &format!("{what} group"))?])),
    }
}

/// The `Selection` that `e` (a list of `what`s or one group's name) writes,
/// pushing the compile-time check of each name (`what` for a list's items,
/// `group_check` for a group; a list's items written as `map` gives them).
fn selection_tokens(
    e: &Expr,
    (what, group_check): (&str, &str),
    map: impl Fn(&str) -> String,
    checks: &mut Vec<TokenStream2>,
) -> syn::Result<TokenStream2> {
    let (is_list, names) = selection(e, what)?;
    let check_name = if is_list { what } else { group_check };
    let mut lits = Vec::new();
    for (n, span) in &names {
        let value = if is_list { map(n) } else { n.clone() };
        let lit = syn::LitStr::new(&value, *span);
        checks.push(check_call(check_name, &lit, *span));
        lits.push(lit);
    }
    Ok(if is_list {
        quote! { ::xla_props::property::Selection::List(&[#(#lits),*]) }
    } else {
        let lit = &lits[0];
        quote! { ::xla_props::property::Selection::Group(#lit) }
    })
}

fn int_of(e: &Expr) -> Option<u64> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<u64>().ok(),
        _ => None,
    }
}

fn float_of(e: &Expr) -> Option<f64> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<f64>().ok(),
        _ => None,
    }
}

fn tolerance(e: &Expr) -> syn::Result<TokenStream2> {
    let bad = || {
        syn::Error::new(
            e.span(),
            "expected `exact`, `ulp(N)`, `abs(X)` or `rel(X)` for `tolerance`",
        )
    };
    match e {
        Expr::Path(p) if p.path.is_ident("exact") => {
            Ok(quote! { ::xla_props::property::Tolerance::Exact })
        }
        Expr::Call(c) if c.args.len() == 1 => {
            let Expr::Path(f) = &*c.func else {
                return Err(bad());
            };
            let arg = &c.args[0];
            if f.path.is_ident("ulp") {
                let n = int_of(arg).ok_or_else(|| {
                    syn::Error::new(arg.span(), "`ulp(N)` takes a non-negative integer")
                })?;
                Ok(quote! { ::xla_props::property::Tolerance::Ulp(#n) })
            } else if f.path.is_ident("abs") || f.path.is_ident("rel") {
                let x = float_of(arg)
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        syn::Error::new(arg.span(), "the tolerance must be a non-negative number")
                    })?;
                if f.path.is_ident("abs") {
                    Ok(quote! { ::xla_props::property::Tolerance::Abs(#x) })
                } else {
                    Ok(quote! { ::xla_props::property::Tolerance::Rel(#x) })
                }
            } else {
                Err(bad())
            }
        }
        _ => Err(bad()),
    }
}

fn limitation(e: &Expr, checks: &mut Vec<TokenStream2>) -> syn::Result<TokenStream2> {
    let bad = || {
        syn::Error::new(
            e.span(),
            "expected `skip(..., reason = \"...\")` or `xfail(..., reason = \"...\")`",
        )
    };
    let Expr::Call(c) = e else { return Err(bad()) };
    let Expr::Path(f) = &*c.func else {
        return Err(bad());
    };
    let kind = if f.path.is_ident("skip") {
        quote! { ::xla_props::property::LimitationKind::Skip }
    } else if f.path.is_ident("xfail") {
        quote! { ::xla_props::property::LimitationKind::XFail }
    } else {
        return Err(bad());
    };
    let (mut op, mut dtype, mut backend, mut reason) = (None, None, None, None);
    for arg in &c.args {
        let Expr::Assign(a) = arg else {
            return Err(syn::Error::new(
                arg.span(),
                "expected `key = value` (op, dtype, backend, reason)",
            ));
        };
        let Expr::Path(k) = &*a.left else {
            return Err(syn::Error::new(
                a.left.span(),
                "expected a key: op, dtype, backend or reason",
            ));
        };
        let key = k
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        let slot = match key.as_str() {
            "op" => &mut op,
            "dtype" => &mut dtype,
            "backend" => &mut backend,
            "reason" => &mut reason,
            other => {
                return Err(syn::Error::new(
                    a.left.span(),
                    format!(
                        "unknown limitation key `{other}`; expected op, dtype, backend or reason"
                    ),
                ))
            }
        };
        if slot.is_some() {
            return Err(syn::Error::new(
                a.left.span(),
                format!("duplicate limitation key `{key}`"),
            ));
        }
        *slot = Some(name_of(&a.right, &key)?);
    }
    let Some((reason, rspan)) = reason else {
        return Err(syn::Error::new(
            e.span(),
            "each limitation needs a `reason = \"...\"`",
        ));
    };
    if reason.trim().is_empty() {
        return Err(syn::Error::new(rspan, "the reason must not be empty"));
    }
    let opt = |v: &Option<(String, Span)>,
               check: Option<&str>,
               map: &dyn Fn(&str) -> String,
               checks: &mut Vec<TokenStream2>| match v {
        Some((n, span)) => {
            let lit = syn::LitStr::new(&map(n), *span);
            if let Some(check) = check {
                checks.push(check_call(check, &lit, *span));
            }
            quote! { ::core::option::Option::Some(#lit) }
        }
        None => quote! { ::core::option::Option::None },
    };
    let op = opt(&op, Some("op"), &op_name, checks);
    let dtype = opt(&dtype, Some("dtype"), &|s| s.to_string(), checks);
    let backend = opt(&backend, None, &|s| s.to_string(), checks);
    Ok(quote! {
        ::xla_props::property::Limitation {
            kind: #kind, op: #op, dtype: #dtype, backend: #backend, reason: #reason,
        }
    })
}

/// Op names are written with `_` (identifiers) for HLO's `-`.
fn op_name(s: &str) -> String {
    s.replace('_', "-")
}

fn expand(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    let func: ItemFn = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[xla_property] goes on a function `fn(&mut CaseContext) -> Outcome`",
        )
    })?;
    let args = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr)?;
    let mut seen: Vec<String> = Vec::new();
    let mut checks = Vec::new();
    let mut ops = None;
    let mut dtypes = quote! { ::xla_props::property::Selection::Group("all") };
    let mut shapes = quote! { "default" };
    let mut dists = quote! { ::xla_props::property::Selection::Group("default") };
    let mut layouts = quote! { ::xla_props::property::LayoutSelection::All };
    let mut template = quote! { ::xla_props::property::Template::SingleOp };
    let mut tol = quote! { ::xla_props::property::Tolerance::Exact };
    let mut strict = false;
    let mut harness_check = true;
    let mut limitations = Vec::new();
    let mut budget = quote! { ::core::option::Option::None };
    for meta in &args {
        let path = meta.path();
        let key = path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        if !KEYS.contains(&key.as_str()) {
            return Err(syn::Error::new(
                path.span(),
                format!("unknown key `{key}`; expected one of: {}", KEYS.join(", ")),
            ));
        }
        if seen.contains(&key) {
            return Err(syn::Error::new(
                path.span(),
                format!("duplicate key `{key}`"),
            ));
        }
        seen.push(key.clone());
        if key == "strict_rounding" || key == "harness_check" {
            let value = match meta {
                Meta::Path(_) => true,
                Meta::NameValue(nv) => match &nv.value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Bool(b), ..
                    }) => b.value,
                    v => {
                        return Err(syn::Error::new(
                            v.span(),
                            format!("`{key}` takes `true` or `false`"),
                        ))
                    }
                },
                Meta::List(l) => {
                    return Err(syn::Error::new(
                        l.span(),
                        format!("write `{key}` or `{key} = true`"),
                    ))
                }
            };
            if key == "strict_rounding" {
                strict = value;
            } else {
                harness_check = value;
            }
            continue;
        }
        let Meta::NameValue(nv) = meta else {
            return Err(syn::Error::new(
                meta.span(),
                format!("expected `{key} = ...`"),
            ));
        };
        let v = &nv.value;
        match key.as_str() {
            "ops" => {
                let names = ("op", "op_group");
                ops = Some(selection_tokens(v, names, op_name, &mut checks)?)
            }
            "dtypes" => {
                let names = ("dtype", "dtype_group");
                dtypes = selection_tokens(v, names, str::to_string, &mut checks)?
            }
            "distributions" => {
                let names = ("distribution", "distribution");
                dists = selection_tokens(v, names, str::to_string, &mut checks)?
            }
            "shapes" => {
                let (name, span) = name_of(v, "shape set")?;
                let lit = syn::LitStr::new(&name, span);
                checks.push(check_call("shapes", &lit, span));
                shapes = quote! { #lit };
            }
            "layouts" => {
                let (name, span) = name_of(v, "layout selection")?;
                layouts = match name.as_str() {
                    "all" => quote! { ::xla_props::property::LayoutSelection::All },
                    "default" => quote! { ::xla_props::property::LayoutSelection::Default },
                    "permuted" => quote! { ::xla_props::property::LayoutSelection::Permuted },
                    _ => {
                        return Err(syn::Error::new(
                            span,
                            "expected `all`, `default` or `permuted` for `layouts`",
                        ))
                    }
                };
            }
            "template" => {
                let (name, span) = name_of(v, "template")?;
                template =
                    match name.as_str() {
                        "single_op" => quote! { ::xla_props::property::Template::SingleOp },
                        "elementwise_chain" => {
                            quote! { ::xla_props::property::Template::ElementwiseChain }
                        }
                        "program" => quote! { ::xla_props::property::Template::Program },
                        _ => return Err(syn::Error::new(
                            span,
                            "expected `single_op`, `elementwise_chain` or `program` for `template`",
                        )),
                    };
            }
            "tolerance" => tol = tolerance(v)?,
            "budget" => {
                let n = int_of(v).filter(|n| *n > 0).ok_or_else(|| {
                    syn::Error::new(v.span(), "`budget` must be a positive integer")
                })?;
                budget = quote! { ::core::option::Option::Some(#n) };
            }
            "limitations" => {
                let Expr::Array(a) = v else {
                    return Err(syn::Error::new(
                        v.span(),
                        "expected a list: `limitations = [skip(...), xfail(...)]`",
                    ));
                };
                for e in &a.elems {
                    limitations.push(limitation(e, &mut checks)?);
                }
            }
            _ => {}
        }
    }
    let Some(ops) = ops else {
        return Err(syn::Error::new(
            Span::call_site(),
            "missing `ops = ...`: name an op group (e.g. `elementwise_binary`) or a list (`[add, subtract]`)",
        ));
    };
    let sig = &func.sig;
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new(a.span(), "a property body cannot be async"));
    }
    if !sig.generics.params.is_empty()
        && sig.generics.lifetimes().count() != sig.generics.params.len()
    {
        return Err(syn::Error::new(
            sig.generics.span(),
            "a property body cannot be generic",
        ));
    }
    if sig.inputs.len() != 1 {
        return Err(syn::Error::new(
            sig.inputs.span(),
            "a property body takes exactly one argument: `ctx: &mut CaseContext<'_>`",
        ));
    }
    let ident = &sig.ident;
    let name = ident.to_string();
    let fn_check = quote_spanned! {sig.span()=>
        const _: fn(&mut ::xla_props::property::CaseContext<'_>) -> ::xla_props::property::Outcome = #ident;
    };
    let harness_test = if harness_check {
        harness_missing_test(&name)
    } else {
        TokenStream2::new()
    };
    Ok(quote! {
        #func
        #fn_check
        #harness_test
        #(#checks)*
        ::xla_props::inventory::submit! {
            ::xla_props::property::PropertySpec {
                name: #name,
                module_path: ::core::module_path!(),
                ops: #ops,
                dtypes: #dtypes,
                shapes: #shapes,
                distributions: #dists,
                layouts: #layouts,
                template: #template,
                tolerance: #tol,
                strict_rounding: #strict,
                limitations: &[#(#limitations),*],
                budget: #budget,
                body: #ident,
            }
        }
    })
}

/// The libtest test that tells a user their properties are not running.
///
/// A `#[test]` only exists when rustc builds the target with libtest's
/// harness (`--test`); under `harness = false` rustc drops it, and the
/// xla-props runner collects the property instead. So this test runs exactly
/// when the property would not: it fails with the two lines to add.
/// Emitted only in integration tests and benches (cargo sets
/// `CARGO_TARGET_TMPDIR` for those alone), where properties are declared;
/// a library's own unit tests (xla-props' built-ins) get none.
fn harness_missing_test(property: &str) -> TokenStream2 {
    if std::env::var_os("CARGO_TARGET_TMPDIR").is_none() {
        return TokenStream2::new();
    }
    let target = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "my_props".into());
    let test = syn::Ident::new(
        &format!("{property}_needs_harness_false"),
        Span::call_site(),
    );
    let message = harness_missing_message(property, &target);
    quote! {
        #[cfg(test)]
        #[test]
        fn #test() {
            ::core::panic!("{}", #message);
        }
    }
}

/// What the harness-missing test says: the fix, to paste.
fn harness_missing_message(property: &str, target: &str) -> String {
    format!(
        "the xla-props property `{property}` did not run: this test target runs under \
         libtest's default harness, which does not know xla-props properties.\n\
         add to Cargo.toml:\n\n\
         [[test]]\nname = \"{target}\"\nharness = false\n\n\
         and to tests/{target}.rs:\n\n\
         xla_props::main!();\n\n\
         (a property compiled here only for its case names, run by another \
         harness = false target, says so with `harness_check = false`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_message_names_the_target_and_the_fix() {
        let m = harness_missing_message("my_property", "my_props");
        assert!(m.contains("`my_property` did not run"), "{m}");
        assert!(
            m.contains("[[test]]\nname = \"my_props\"\nharness = false"),
            "{m}"
        );
        assert!(m.contains("xla_props::main!();"), "{m}");
    }
}
