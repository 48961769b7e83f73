//! The pretty forms of operations (`stablehlo.add %a, %b : tensor<f32>`),
//! read into the generic shape.

use super::ast::{err, Attr, Op, Type, R};
use super::cursor::Cursor;

impl Cursor<'_> {
    /// `name = value` pairs of the pretty form, separated by commas.
    pub(super) fn keyword_attr(&mut self, op: &mut Op, key: &str, generic: &str) -> R<()> {
        self.expect(key)?;
        self.expect("=")?;
        let v = self.attr()?;
        op.attrs.push((generic.into(), v));
        Ok(())
    }

    pub(super) fn pretty(&mut self, op: &mut Op, name_pos: usize) -> R<()> {
        let name = op.name.clone();
        let short = name
            .strip_prefix("stablehlo.")
            .or_else(|| name.strip_prefix("chlo."))
            .unwrap_or(&name)
            .to_string();
        if self.pretty_call_or_return(op, &name)? {
            return Ok(());
        }
        if let Some(kind) = name.strip_prefix("check.") {
            return self.pretty_check(op, kind);
        }
        match short.as_str() {
            "constant" => {
                self.skip_ws();
                if self.peek() == Some(b'{') {
                    op.attrs.extend(self.attr_dict()?);
                }
                let v = self.attr()?;
                let t = match &v {
                    Attr::Dense(_, t) => t.clone(),
                    _ => return err(name_pos, "a constant needs a dense value"),
                };
                op.attrs.push(("value".into(), v));
                op.result_types = vec![t];
                return Ok(());
            }
            "iota" => {
                self.keyword_attr(op, "dim", "iota_dimension")?;
            }
            "compare" => {
                let dir = self.expect_ident("a comparison direction")?;
                op.attrs.push((
                    "comparison_direction".into(),
                    Attr::Enum("comparison_direction".into(), dir),
                ));
                self.expect(",")?;
                op.operands = self.operands()?;
                if self.eat(",") {
                    let t = self.expect_ident("a comparison type")?;
                    op.attrs.push((
                        "compare_type".into(),
                        Attr::Enum("comparison_type".into(), t),
                    ));
                }
            }
            "reduce" => return self.pretty_reduce(op),
            "composite" => {
                // `stablehlo.composite "name" %a, %b {attrs} : (T) -> T`
                let n = self.string()?;
                op.attrs.push(("name".into(), Attr::Str(n)));
                op.operands = self.operands()?;
            }
            "scan" => return self.pretty_scan(op),
            "while" => return self.pretty_while(op),
            "convolution" => self.pretty_convolution(op)?,
            "top_k" => {
                self.expect("(")?;
                op.operands.push(self.value_ref()?);
                self.expect(",")?;
                self.keyword_attr(op, "k", "k")?;
                if self.eat(",") {
                    self.keyword_attr(op, "largest", "largest")?;
                }
                self.expect(")")?;
            }
            "if" | "case" | "sort" | "scatter" | "gather" | "reduce_window"
            | "select_and_scatter" | "map" => {
                return err(
                    name_pos,
                    format!("the pretty form of `{name}` is not supported; use the generic form"),
                );
            }
            _ => {
                op.operands = self.operands()?;
                // keyword attributes after the operands: `, dims = [..]`, `low = [..]`
                self.skip_ws();
                if short == "slice" && self.peek() == Some(b'[') {
                    self.slice_ranges(op)?;
                }
                // `get_tuple_element %t[1]`
                if short == "get_tuple_element" && self.eat("[") {
                    let k = self.int()?;
                    self.expect("]")?;
                    op.attrs.push(("index".into(), Attr::Int(k.into())));
                }
                while self.eat(",") {
                    self.pretty_keyword(op, &short)?;
                }
            }
        }
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        op.result_types = self.trailing_types(op)?;
        Ok(())
    }

    /// The returns, `func.call` and `stablehlo.custom_call`, whose pretty
    /// forms put a symbol or a type list where others put operands; false
    /// for any other op.
    fn pretty_call_or_return(&mut self, op: &mut Op, name: &str) -> R<bool> {
        match name {
            "func.return" | "stablehlo.return" => {
                op.operands = self.operands()?;
                if !op.operands.is_empty() {
                    self.expect(":")?;
                    loop {
                        self.ty()?;
                        if !self.eat(",") {
                            break;
                        }
                    }
                }
                return Ok(true);
            }
            "func.call" => {
                let callee = self.sigil_name(b'@')?;
                op.attrs.push(("callee".into(), Attr::Symbol(callee)));
                self.expect("(")?;
                op.operands = self.operand_list_until(")")?;
                self.expect(":")?;
                self.expect("(")?;
                self.list_until(")", |p| p.ty())?;
                self.expect("->")?;
                op.result_types = self.result_types()?;
                return Ok(true);
            }
            "stablehlo.custom_call" => {
                let target = self.sigil_name(b'@')?;
                op.attrs
                    .push(("call_target_name".into(), Attr::Str(target)));
                self.expect("(")?;
                op.operands = self.operand_list_until(")")?;
                self.skip_ws();
                if self.peek() == Some(b'{') {
                    op.attrs.extend(self.attr_dict()?);
                }
                op.result_types = self.trailing_types(op)?;
                return Ok(true);
            }
            _ => {}
        }
        Ok(false)
    }

    /// `check.expect_eq %a, %b : T` and the other check ops of the pretty form.
    pub(super) fn pretty_check(&mut self, op: &mut Op, kind: &str) -> R<()> {
        // `check.expect_eq %a, %b : T` or `check.expect_eq(%a, %b) : T`;
        // `_const` forms take a dense attribute as their second operand.
        let paren = self.eat("(");
        op.operands.push(self.value_ref()?);
        if kind.ends_with("_const") {
            self.expect(",")?;
            let d = self.attr()?;
            op.attrs.push(("value".into(), d));
        } else if kind == "expect_serialized_eq" {
            // one operand, then `probe_id = "..."` and `iter = k`
        } else if self.eat(",") {
            op.operands.push(self.value_ref()?);
        }
        while self.eat(",") {
            let k = self.expect_ident("an attribute name")?;
            self.expect("=")?;
            let v = self.attr()?;
            op.attrs.push((k, v));
        }
        if paren {
            self.expect(")")?;
        }
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        if self.eat(":") {
            loop {
                self.ty()?;
                if !self.eat(",") {
                    break;
                }
            }
        }
        Ok(())
    }

    /// `convolution(%a, %b) dim_numbers = ..., window = {...}` of the pretty form.
    pub(super) fn pretty_convolution(&mut self, op: &mut Op) -> R<()> {
        self.expect("(")?;
        op.operands = self.operand_list_until(")")?;
        self.expect("dim_numbers")?;
        self.expect("=")?;
        let labels = self.conv_labels()?;
        op.attrs.push(("dimension_numbers".into(), labels));
        if self.eat(",") {
            self.expect("window")?;
            self.expect("=")?;
            let w = self.attr_dict()?;
            for (k, v) in w {
                let g = match k.as_str() {
                    "stride" => "window_strides",
                    "pad" => "padding",
                    "lhs_dilate" => "lhs_dilation",
                    "rhs_dilate" => "rhs_dilation",
                    "reverse" => "window_reversal",
                    _ => return err(self.pos, format!("unknown window field `{k}`")),
                };
                op.attrs.push((g.into(), v));
            }
        }
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        Ok(())
    }

    /// `[0:1, 2:4:2]` of a pretty slice.
    pub(super) fn slice_ranges(&mut self, op: &mut Op) -> R<()> {
        self.expect("[")?;
        let (mut starts, mut limits, mut strides) = (Vec::new(), Vec::new(), Vec::new());
        if !self.eat("]") {
            loop {
                starts.push(self.int()?);
                self.expect(":")?;
                limits.push(self.int()?);
                strides.push(if self.eat(":") { self.int()? } else { 1 });
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        op.attrs.push(("start_indices".into(), Attr::Array(starts)));
        op.attrs.push(("limit_indices".into(), Attr::Array(limits)));
        op.attrs.push(("strides".into(), Attr::Array(strides)));
        Ok(())
    }

    pub(super) fn pretty_keyword(&mut self, op: &mut Op, short: &str) -> R<()> {
        self.skip_ws();
        let pos = self.pos;
        let key = self.expect_ident("an attribute keyword")?;
        self.expect("=")?;
        let generic = match (short, key.as_str()) {
            (_, "dims") if short == "broadcast_in_dim" => "broadcast_dimensions",
            ("transpose", "dims") => "permutation",
            ("reverse", "dims") => "dimensions",
            ("concatenate", "dim") => "dimension",
            ("pad", "low") => "edge_padding_low",
            ("pad", "high") => "edge_padding_high",
            ("pad", "interior") => "interior_padding",
            ("dynamic_slice", "sizes") => "slice_sizes",
            ("reduce_precision", "format") => "format",
            ("rng_bit_generator", "algorithm") => "rng_algorithm",
            ("dynamic_iota", "dim") => "iota_dimension",
            ("get_dimension_size", "dim") => "dimension",
            ("fft", "type") => "fft_type",
            ("interpreter.probe", "probe_id") => "probe_id",
            ("fft", "length") => "fft_length",
            ("dot_general", "batching_dims") | ("dot_general", "contracting_dims") => {
                let lhs = self.int_list()?;
                self.expect("x")?;
                let rhs = self.int_list()?;
                let (l, r) = if key == "batching_dims" {
                    ("lhs_batching_dimensions", "rhs_batching_dimensions")
                } else {
                    ("lhs_contracting_dimensions", "rhs_contracting_dimensions")
                };
                op.attrs.push((l.into(), Attr::Array(lhs)));
                op.attrs.push((r.into(), Attr::Array(rhs)));
                return Ok(());
            }
            ("dot_general", "precision") => "precision_config",
            ("dot_general", "algorithm") => {
                // `algorithm = <lhs_precision_type = tf32, ...>`: the fields
                // of `#stablehlo.dot_algorithm<...>`
                self.skip_ws();
                let v = if self.eat("<") {
                    Attr::Struct("dot_algorithm".into(), self.struct_fields()?)
                } else {
                    self.attr()?
                };
                op.attrs.push(("algorithm".into(), v));
                return Ok(());
            }
            _ => return err(pos, format!("unknown attribute `{key}` of `{}`", op.name)),
        };
        let v = self.attr()?;
        op.attrs.push((generic.into(), v));
        Ok(())
    }

    /// `stablehlo.reduce(%a init: %b), ... across dimensions = [0] : types`
    /// then `applies stablehlo.add` or `reducer(%x: T, %y: T) ... { body }`.
    pub(super) fn pretty_reduce(&mut self, op: &mut Op) -> R<()> {
        let mut inputs = Vec::new();
        let mut inits = Vec::new();
        loop {
            self.expect("(")?;
            inputs.push(self.value_ref()?);
            self.expect("init")?;
            self.expect(":")?;
            inits.push(self.value_ref()?);
            self.expect(")")?;
            if !self.eat(",") {
                break;
            }
        }
        op.operands = inputs;
        op.operands.extend(inits);
        let applies = if self.eat("applies") {
            Some(self.expect_ident("a reducer operation")?)
        } else {
            None
        };
        self.expect("across")?;
        self.expect("dimensions")?;
        self.expect("=")?;
        let dims = self.int_list()?;
        op.attrs.push(("dimensions".into(), Attr::Array(dims)));
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        op.result_types = self.trailing_types(op)?;
        match applies {
            Some(name) => {
                op.attrs.push(("applies".into(), Attr::Word(name)));
            }
            None => {
                self.expect("reducer")?;
                let mut pairs = Vec::new();
                while self.eat("(") {
                    let a = self.value_ref()?;
                    self.expect(":")?;
                    let at = self.ty()?;
                    self.expect(",")?;
                    let b = self.value_ref()?;
                    self.expect(":")?;
                    let bt = self.ty()?;
                    self.expect(")")?;
                    pairs.push(((a.name, at), (b.name, bt)));
                }
                let mut args: Vec<(String, Type)> = pairs.iter().map(|p| p.0.clone()).collect();
                args.extend(pairs.into_iter().map(|p| p.1));
                op.regions.push(self.region_body(args)?);
            }
        }
        Ok(())
    }

    /// `stablehlo.while(%iterArg = %x, ...) : T, T cond { ... } do { ... }`.
    pub(super) fn pretty_while(&mut self, op: &mut Op) -> R<()> {
        self.expect("(")?;
        let pairs = self.list_until(")", |p| {
            let a = p.value_ref()?;
            p.expect("=")?;
            Ok((a.name, p.value_ref()?))
        })?;
        let mut args = Vec::new();
        for (a, v) in pairs {
            args.push(a);
            op.operands.push(v);
        }
        self.skip_ws();
        if self.peek() == Some(b'{') {
            op.attrs.extend(self.attr_dict()?);
        }
        let mut types = Vec::new();
        if self.eat(":") {
            loop {
                types.push(self.ty()?);
                if !self.eat(",") {
                    break;
                }
            }
        }
        if types.len() != args.len() {
            return err(op.pos, "while: one type per loop-carried value expected");
        }
        let block: Vec<(String, Type)> = args.into_iter().zip(types.iter().cloned()).collect();
        self.expect("cond")?;
        op.regions.push(self.region_body(block.clone())?);
        self.expect("do")?;
        op.regions.push(self.region_body(block)?);
        op.result_types = types;
        Ok(())
    }

    /// `chlo.scan(%in, ...) inits(%init, ...) dimension=0 [attributes {...}]
    /// { body } : (T, ...) -> (T, ...)`: the operands are the inputs then
    /// the inits, `num_inputs` says how many inputs.
    pub(super) fn pretty_scan(&mut self, op: &mut Op) -> R<()> {
        self.expect("(")?;
        let inputs = self.operand_list_until(")")?;
        self.expect("inits")?;
        self.expect("(")?;
        let inits = self.operand_list_until(")")?;
        op.attrs
            .push(("num_inputs".into(), Attr::Int(inputs.len() as i128)));
        op.operands = inputs;
        op.operands.extend(inits);
        self.expect("dimension")?;
        self.expect("=")?;
        let d = self.int()?;
        op.attrs.push(("dimension".into(), Attr::Int(d.into())));
        if self.eat("attributes") {
            op.attrs.extend(self.attr_dict()?);
        }
        op.regions.push(self.region_body(Vec::new())?);
        op.result_types = self.trailing_types(op)?;
        Ok(())
    }
}
