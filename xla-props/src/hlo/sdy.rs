//! Shardy's form of sharded HLO (JAX's default since 0.7): shardings as
//! `#sdy.sharding<@mesh, [{"a"}, {}]>` in `frontend_attributes`, meshes in
//! the module's `xla.sdy.meshes`, and the custom calls
//! `xla.sdy.GlobalToLocalShape` / `xla.sdy.LocalToGlobalShape` around a
//! `shard_map` body (`xla.sdy.manual_computation_body`) and
//! `xla.sdy.FuncResultSharding` on results.
//!
//! A Shardy sharding is written over mesh axes; [`SdyMesh::to_hlo`] turns it
//! into the tiled [`Sharding`] over device ids that the rest of xla-props
//! reads: a dimension sharded by axes `a, b` (major to minor) is tiled by
//! `|a|·|b|`, the mesh axes no dimension uses make the replicated last tile
//! dimension, and tile coordinates map to devices through the mesh's
//! row-major order (or its `device_ids`). Restricted to a `shard_map`'s
//! manual axes, the same conversion cuts its local shapes.
//!
//! Sub-axes (`"a":(1)2`) and inline meshes are Unsupported (an error that
//! says so).

use super::ir::{Instruction, Module};
use super::sharding::Sharding;

/// One mesh: named axes with sizes, major to minor, and the device of each
/// mesh position (row-major iota unless `device_ids` says otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdyMesh {
    /// (axis name, size).
    pub axes: Vec<(String, usize)>,
    /// The device at each row-major mesh position.
    pub device_ids: Vec<usize>,
}

/// One value's Shardy sharding: the mesh it names and, per dimension, the
/// axes that shard it (major to minor).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdySharding {
    /// The mesh's name (without `@`).
    pub mesh: String,
    /// Per dimension, its axes.
    pub dims: Vec<Vec<String>>,
}

/// The value of `key` in a `frontend_attributes={k="v",k2={...}}` text,
/// unquoted and unescaped.
pub fn frontend_attr(attrs: &str, key: &str) -> Option<String> {
    let body = attrs.trim().strip_prefix('{')?.strip_suffix('}')?;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && matches!(bytes[i], b',' | b' ') {
            i += 1;
        }
        let k_start = i;
        while i < bytes.len() && bytes[i] != b'=' {
            i += 1;
        }
        let k = body[k_start..i].trim();
        i += 1;
        let (v, next) = attr_value(body, i)?;
        if k == key {
            return Some(v);
        }
        i = next;
    }
    None
}

/// One value starting at byte `i`: a quoted string (unescaped) or a braced
/// group (verbatim, balanced); with the index after it.
fn attr_value(s: &str, mut i: usize) -> Option<(String, usize)> {
    let b = s.as_bytes();
    match b.get(i)? {
        b'"' => {
            let mut out = String::new();
            i += 1;
            let mut chars = s[i..].char_indices();
            while let Some((j, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, e)) = chars.next() {
                            out.push(e);
                        }
                    }
                    '"' => return Some((out, i + j + 1)),
                    c => out.push(c),
                }
            }
            None
        }
        b'{' => {
            let mut depth = 0usize;
            for (j, &c) in b[i..].iter().enumerate() {
                match c {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some((s[i..i + j + 1].to_string(), i + j + 1));
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        _ => {
            let end = s[i..].find(',').map_or(s.len(), |j| i + j);
            Some((s[i..end].trim().to_string(), end))
        }
    }
}

/// An instruction's Shardy frontend attribute `key`.
pub fn instruction_attr(ins: &Instruction, key: &str) -> Option<String> {
    let fa = ins
        .attrs
        .other
        .iter()
        .find(|(k, _)| k == "frontend_attributes")?;
    frontend_attr(&fa.1, key)
}

/// Whether the module is in Shardy's form (it names meshes).
pub fn is_sdy_module(module: &Module) -> bool {
    module_meshes_text(module).is_some()
}

fn module_meshes_text(module: &Module) -> Option<String> {
    let fa = module
        .attrs
        .iter()
        .find(|(k, _)| k == "frontend_attributes")?;
    frontend_attr(&fa.1, "xla.sdy.meshes")
}

/// The module's meshes by name.
pub fn module_meshes(module: &Module) -> Result<Vec<(String, SdyMesh)>, String> {
    let Some(text) = module_meshes_text(module) else {
        return Ok(Vec::new());
    };
    let body = text
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| {
            format!("xla.sdy.meshes: expected `{{name = #sdy.mesh<...>}}`, got `{text}`")
        })?;
    let mut out = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let (name, after) = rest
            .split_once('=')
            .ok_or_else(|| format!("xla.sdy.meshes: expected `name = ...` in `{rest}`"))?;
        let after = after.trim_start();
        let inner = after
            .strip_prefix("#sdy.mesh<")
            .ok_or_else(|| format!("xla.sdy.meshes: expected `#sdy.mesh<` in `{after}`"))?;
        let end = matching(inner, '<', '>')
            .ok_or_else(|| format!("xla.sdy.meshes: unbalanced `<` in `{after}`"))?;
        out.push((name.trim().to_string(), parse_mesh(&inner[..end])?));
        rest = inner[end + 1..].trim_start().trim_start_matches(',').trim();
    }
    Ok(out)
}

/// The index of the bracket closing an already opened one in `s`.
fn matching(s: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// `["a"=2, "b"=4], device_ids=[...]` (the text inside `#sdy.mesh<...>`).
fn parse_mesh(text: &str) -> Result<SdyMesh, String> {
    let text = text.trim();
    let inner = text
        .strip_prefix('[')
        .ok_or_else(|| format!("mesh `{text}`: expected `[`"))?;
    let end = inner
        .find(']')
        .ok_or_else(|| format!("mesh `{text}`: expected `]`"))?;
    let mut axes = Vec::new();
    for a in inner[..end]
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
    {
        let (n, size) = a
            .split_once('=')
            .ok_or_else(|| format!("mesh axis `{a}`: expected `\"name\"=size`"))?;
        let size: usize = size
            .trim()
            .parse()
            .map_err(|_| format!("mesh axis `{a}`: bad size"))?;
        axes.push((n.trim().trim_matches('"').to_string(), size));
    }
    let total: usize = axes.iter().map(|a| a.1).product();
    let rest = inner[end + 1..].trim().trim_start_matches(',').trim();
    let device_ids = match rest.strip_prefix("device_ids=") {
        Some(ids) => {
            let ids = ids.trim().trim_start_matches('[');
            let ids = &ids[..ids.find(']').ok_or("device_ids: expected `]`")?];
            let v: Result<Vec<usize>, _> = ids.split(',').map(|d| d.trim().parse()).collect();
            let v = v.map_err(|_| format!("mesh `{text}`: bad device_ids"))?;
            if v.len() != total {
                return Err(format!(
                    "mesh `{text}`: {} device ids for {total} devices",
                    v.len()
                ));
            }
            v
        }
        None if rest.is_empty() => (0..total).collect(),
        None => return Err(format!("mesh `{text}`: unexpected `{rest}`")),
    };
    Ok(SdyMesh { axes, device_ids })
}

/// `#sdy.sharding<@mesh, [{"a"}, {}]>` or `#sdy.sharding_per_value<[<@mesh,
/// [...]>, ...]>`: one sharding per value.
pub fn parse_shardings(text: &str) -> Result<Vec<SdySharding>, String> {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix("#sdy.sharding_per_value<[") {
        let inner = inner
            .strip_suffix("]>")
            .ok_or_else(|| format!("`{t}`: expected `]>` at the end"))?;
        let mut out = Vec::new();
        let mut rest = inner.trim();
        while let Some(r) = rest.strip_prefix('<') {
            let end = matching(r, '<', '>').ok_or_else(|| format!("`{t}`: unbalanced `<`"))?;
            out.push(parse_one(&r[..end])?);
            rest = r[end + 1..]
                .trim_start()
                .trim_start_matches(',')
                .trim_start();
        }
        if !rest.is_empty() {
            return Err(format!("`{t}`: unexpected `{rest}`"));
        }
        Ok(out)
    } else if let Some(inner) = t.strip_prefix("#sdy.sharding<") {
        let inner = inner
            .strip_suffix('>')
            .ok_or_else(|| format!("`{t}`: expected `>` at the end"))?;
        Ok(vec![parse_one(inner)?])
    } else {
        Err(format!("`{t}`: not a Shardy sharding"))
    }
}

/// `@mesh, [{"a", "b"}, {}], replicated={"c"}`.
fn parse_one(text: &str) -> Result<SdySharding, String> {
    let t = text.trim();
    let Some(rest) = t.strip_prefix('@') else {
        return Err(format!(
            "`{t}`: inline meshes are not supported (expected `@name`)"
        ));
    };
    let (mesh, rest) = rest
        .split_once(',')
        .ok_or_else(|| format!("`{t}`: expected `@mesh, [...]`"))?;
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('[')
        .ok_or_else(|| format!("`{t}`: expected `[` after the mesh"))?;
    let end = matching(inner, '[', ']').ok_or_else(|| format!("`{t}`: unbalanced `[`"))?;
    let mut dims = Vec::new();
    let mut body = inner[..end].trim();
    while let Some(b) = body.strip_prefix('{') {
        let close = b
            .find('}')
            .ok_or_else(|| format!("`{t}`: unbalanced `{{`"))?;
        let mut axes = Vec::new();
        for a in b[..close]
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty() && *a != "?")
        {
            if a.contains(':') {
                return Err(format!("`{t}`: sub-axes (`{a}`) are not supported"));
            }
            axes.push(a.trim_matches('"').to_string());
        }
        dims.push(axes);
        body = b[close + 1..]
            .trim_start()
            .trim_start_matches(',')
            .trim_start();
    }
    // `replicated={...}` and `unreduced={...}` after the list name axes that
    // shard no dimension: the replicated tile dimension covers them anyway
    Ok(SdySharding {
        mesh: mesh.trim().to_string(),
        dims,
    })
}

impl SdyMesh {
    /// The device count.
    pub fn devices(&self) -> usize {
        self.device_ids.len()
    }

    /// `sharding` as tiles over device ids, counting only the axes in
    /// `only` (every axis when None); the other axes replicate.
    pub fn to_hlo(
        &self,
        sharding: &SdySharding,
        only: Option<&[String]>,
    ) -> Result<Sharding, String> {
        let index = |a: &str| {
            self.axes
                .iter()
                .position(|(n, _)| n == a)
                .ok_or_else(|| format!("axis `{a}` is not in the mesh"))
        };
        let mut order = Vec::new();
        let mut tiles = Vec::new();
        for axes in &sharding.dims {
            let mut t = 1;
            for a in axes {
                if only.is_some_and(|o| !o.iter().any(|m| m == a)) {
                    continue;
                }
                let i = index(a)?;
                if order.contains(&i) {
                    return Err(format!("axis `{a}` shards two dimensions"));
                }
                order.push(i);
                t *= self.axes[i].1;
            }
            tiles.push(t);
        }
        let used: usize = order.iter().map(|&i| self.axes[i].1).product();
        let replicate = self.devices() / used.max(1);
        let rest: Vec<usize> = (0..self.axes.len())
            .filter(|i| !order.contains(i))
            .collect();
        order.extend(rest);
        if used <= 1 {
            return Sharding::parse("{replicated}");
        }
        // the device of each tile, tile coordinates row-major over the
        // axes in `order`
        let sizes: Vec<usize> = order.iter().map(|&i| self.axes[i].1).collect();
        let strides = row_major_strides(&self.axes.iter().map(|a| a.1).collect::<Vec<_>>());
        let mut devices = Vec::with_capacity(self.devices());
        let mut coord = vec![0usize; sizes.len()];
        for _ in 0..self.devices() {
            let pos: usize = coord
                .iter()
                .zip(&order)
                .map(|(&c, &axis)| c * strides[axis])
                .sum();
            devices.push(self.device_ids[pos].to_string());
            for k in (0..coord.len()).rev() {
                coord[k] += 1;
                if coord[k] < sizes[k] {
                    break;
                }
                coord[k] = 0;
            }
        }
        let mut dims: Vec<String> = tiles.iter().map(usize::to_string).collect();
        let suffix = if replicate > 1 {
            dims.push(replicate.to_string());
            " last_tile_dim_replicate"
        } else {
            ""
        };
        Sharding::parse(&format!(
            "{{devices=[{}]{}{suffix}}}",
            dims.join(","),
            devices.join(",")
        ))
    }
}

fn row_major_strides(sizes: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * sizes[i + 1];
    }
    s
}

/// The manual axes of a `shard_map` custom call
/// (`#sdy<manual_axes{"a", "b"}>`).
pub fn manual_axes(ins: &Instruction) -> Option<Vec<String>> {
    let t = instruction_attr(ins, "xla.sdy.manual_axes")?;
    let inner = t.split_once('{')?.1.split_once('}')?.0;
    Some(
        inner
            .split(',')
            .map(|a| a.trim().trim_matches('"').to_string())
            .filter(|a| !a.is_empty())
            .collect(),
    )
}

/// The HLO shardings a Shardy `shard_map` call cuts or assembles by (its
/// `in_shardings` or `out_shardings`), over its manual axes: one per value.
pub fn manual_shardings(
    module: &Module,
    ins: &Instruction,
    key: &str,
) -> Result<Vec<Sharding>, String> {
    let meshes = module_meshes(module)?;
    let text =
        instruction_attr(ins, key).ok_or_else(|| format!("no `{key}` frontend attribute"))?;
    let manual = manual_axes(ins).ok_or("no `xla.sdy.manual_axes` frontend attribute")?;
    parse_shardings(&text)?
        .iter()
        .map(|s| {
            let mesh = meshes.iter().find(|(n, _)| *n == s.mesh).ok_or_else(|| {
                format!("mesh `@{}` is not in the module's xla.sdy.meshes", s.mesh)
            })?;
            mesh.1.to_hlo(s, Some(&manual))
        })
        .collect()
}

/// The device count of the module's largest mesh (0 without meshes).
pub fn mesh_devices(module: &Module) -> Result<usize, String> {
    Ok(module_meshes(module)?
        .iter()
        .map(|(_, m)| m.devices())
        .max()
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(axes: &[(&str, usize)]) -> SdyMesh {
        let n = axes.iter().map(|a| a.1).product();
        SdyMesh {
            axes: axes.iter().map(|(a, s)| (a.to_string(), *s)).collect(),
            device_ids: (0..n).collect(),
        }
    }

    #[test]
    fn frontend_attributes_read_quoted_and_braced_values() {
        let t = r##"{xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"a\"}>"}"##;
        assert_eq!(
            frontend_attr(t, "xla.sdy.manual_axes").unwrap(),
            "#sdy<manual_axes{\"a\"}>"
        );
        let m = "{xla.sdy.meshes={mesh = #sdy.mesh<[\"a\"=2, \"b\"=4]>}}";
        assert_eq!(
            frontend_attr(m, "xla.sdy.meshes").unwrap(),
            "{mesh = #sdy.mesh<[\"a\"=2, \"b\"=4]>}"
        );
    }

    #[test]
    fn shardings_become_device_tiles() {
        let m = mesh(&[("a", 2), ("b", 4)]);
        let s = &parse_shardings("#sdy.sharding<@mesh, [{\"b\"}]>").unwrap()[0];
        // JAX writes the same sharding as {devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
        let want = Sharding::parse("{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}").unwrap();
        let got = m.to_hlo(s, None).unwrap();
        for d in 0..8 {
            assert_eq!(
                got.tile_of(d, &[8]).unwrap(),
                want.tile_of(d, &[8]).unwrap(),
                "device {d}"
            );
        }
        let both =
            &parse_shardings("#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>, <@mesh, []>]>")
                .unwrap();
        assert_eq!(both.len(), 2);
        let got = m.to_hlo(&both[0], None).unwrap();
        let want = Sharding::parse("{devices=[2,4]<=[8]}").unwrap();
        for d in 0..8 {
            assert_eq!(
                got.tile_of(d, &[4, 8]).unwrap(),
                want.tile_of(d, &[4, 8]).unwrap()
            );
        }
        // only the manual axis `b` cuts: device 5 = (a 1, b 1) holds columns 2..4, all rows
        let got = m.to_hlo(&both[0], Some(&["b".to_string()])).unwrap();
        assert_eq!(got.tile_of(5, &[4, 8]).unwrap(), vec![(0, 4), (2, 2)]);
        assert!(parse_shardings("#sdy.sharding<@mesh, [{\"a\":(1)2}]>").is_err());
    }
}
