//! `sharding=` attributes: how an array is laid out over devices.
//!
//! Read in the forms XLA prints: `{replicated}`, `{maximal device=N}`,
//! `{manual}`, tiled `{devices=[2,2]0,1,2,3}` or with an iota tile
//! assignment `{devices=[2,2]<=[4]}` / `<=[2,2]T(1,0)`, with
//! `last_tile_dim_replicate` or `last_tile_dims={manual, replicated}`, and
//! tuples `{{replicated}, {devices=[4,1]<=[4]}}`. Trailing `metadata={...}`
//! is ignored.
//!
//! ```
//! use xla_props::hlo::sharding::Sharding;
//! let s = Sharding::parse("{devices=[2,1,2]<=[4] last_tile_dim_replicate}").unwrap();
//! // device 3 holds rows [2, 4) of an [4, 6] array; devices 2 and 3 hold the same tile
//! assert_eq!(s.tile_of(3, &[4, 6]).unwrap(), vec![(2, 2), (0, 6)]);
//! assert_eq!(s.tile_of(2, &[4, 6]).unwrap(), s.tile_of(3, &[4, 6]).unwrap());
//! ```

use super::collective::iota_transposed;

/// One array's (or tuple's) sharding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sharding {
    /// Every device holds the whole array.
    Replicated,
    /// One device holds it (the others hold it too in our reading: the
    /// partitioner broadcasts it where it is used).
    Maximal(usize),
    /// Each device holds its own part, not described (shard_map's body).
    Manual,
    /// Split into tiles.
    Tiled {
        /// Tiles per array dimension, then the trailing subgroup dimensions.
        tiles: Vec<usize>,
        /// The device of each tile, row-major over `tiles`.
        devices: Vec<usize>,
        /// How many trailing entries of `tiles` are subgroups (replicated
        /// or manual), not array dimensions.
        subgroups: usize,
        /// Whether a trailing subgroup is manual.
        manual: bool,
    },
    /// A tuple's shardings, one per element.
    Tuple(Vec<Sharding>),
}

impl Sharding {
    /// Parses a `sharding=` value.
    pub fn parse(text: &str) -> Result<Sharding, String> {
        let (t, inner) = braced(text)?;
        if inner.starts_with('{') || inner.is_empty() {
            return split_top(inner)?
                .into_iter()
                .map(Sharding::parse)
                .collect::<Result<_, _>>()
                .map(Sharding::Tuple);
        }
        let body = strip_metadata(inner);
        let word = body.split_whitespace().next().unwrap_or("");
        match word {
            "replicated" => return Ok(Sharding::Replicated),
            "manual" => return Ok(Sharding::Manual),
            "maximal" => {
                let d = body
                    .split("device=")
                    .nth(1)
                    .and_then(|d| d.split_whitespace().next())
                    .and_then(|d| d.parse::<usize>().ok())
                    .ok_or_else(|| format!("sharding `{t}`: maximal without a device"))?;
                return Ok(Sharding::Maximal(d));
            }
            _ => {}
        }
        let rest = body
            .strip_prefix("devices=")
            .ok_or_else(|| format!("sharding `{t}` is not understood"))?;
        parse_tiled(rest).map_err(|e| format!("sharding `{t}`: {e}"))
    }

    /// The device count this sharding names (the largest device id + 1).
    pub fn device_span(&self) -> usize {
        match self {
            Sharding::Tiled { devices, .. } => devices.iter().max().map_or(0, |m| m + 1),
            Sharding::Maximal(d) => d + 1,
            Sharding::Tuple(items) => items.iter().map(Sharding::device_span).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// The tile size of each array dimension for an array of `dims`
    /// (the ceiling of the dimension over its tile count).
    pub fn tile_dims(&self, dims: &[usize]) -> Result<Vec<usize>, String> {
        self.per_dimension(dims, |d, t| d.div_ceil(t.max(1)))
    }

    /// `f(size, tile count)` for each array dimension of `dims` (the sizes
    /// themselves where the sharding does not tile).
    fn per_dimension(
        &self,
        dims: &[usize],
        f: impl Fn(usize, usize) -> usize,
    ) -> Result<Vec<usize>, String> {
        match self {
            Sharding::Tiled {
                tiles, subgroups, ..
            } => {
                let data = &tiles[..tiles.len() - subgroups];
                if data.len() != dims.len() {
                    return Err(format!(
                        "a sharding of {} dimensions on an array of {}",
                        data.len(),
                        dims.len()
                    ));
                }
                Ok(dims.iter().zip(data).map(|(&d, &t)| f(d, t)).collect())
            }
            Sharding::Tuple(_) => Err("a tuple sharding on an array".into()),
            _ => Ok(dims.to_vec()),
        }
    }

    /// The part of an array of `dims` that `device` holds: per dimension
    /// `(start, size)` with the tile size (a tile past the end is padding).
    pub fn tile_of(&self, device: usize, dims: &[usize]) -> Result<Vec<(usize, usize)>, String> {
        let sizes = self.tile_dims(dims)?;
        match self {
            Sharding::Tiled { tiles, devices, .. } => {
                let pos = devices
                    .iter()
                    .position(|&d| d == device)
                    .ok_or_else(|| format!("device {device} holds no tile of this sharding"))?;
                let mut coords = vec![0usize; tiles.len()];
                let mut rest = pos;
                for k in (0..tiles.len()).rev() {
                    coords[k] = rest % tiles[k];
                    rest /= tiles[k];
                }
                Ok(sizes
                    .iter()
                    .zip(&coords)
                    .map(|(&s, &c)| (c * s, s))
                    .collect())
            }
            _ => Ok(sizes.iter().map(|&s| (0, s)).collect()),
        }
    }

    /// The array dims on a device for a global array of `dims`.
    pub fn local_dims(&self, dims: &[usize]) -> Result<Vec<usize>, String> {
        self.tile_dims(dims)
    }

    /// The global dims of an array whose tiles are `local` (an even split).
    pub fn global_dims(&self, local: &[usize]) -> Result<Vec<usize>, String> {
        self.per_dimension(local, |l, t| l * t)
    }

    /// The element shardings of a tuple sharding laid over `leaves` arrays
    /// (an array sharding on a tuple applies to every leaf).
    pub fn leaves(&self, leaves: usize) -> Result<Vec<Sharding>, String> {
        match self {
            Sharding::Tuple(items) if items.len() == leaves => Ok(items.clone()),
            Sharding::Tuple(items) => Err(format!(
                "a tuple sharding of {} elements for {leaves} arrays",
                items.len()
            )),
            s => Ok(vec![s.clone(); leaves]),
        }
    }
}

/// The devices an annotated module's shardings name, when it has more
/// than one and its header declares one device (JAX's module before the
/// SPMD partitioner); `None` for any other module.
pub fn annotated_devices(module: &super::Module) -> Option<usize> {
    if !super::collective::DeviceGrid::of(module).is_ok_and(|g| g.devices() == 1) {
        return None;
    }
    let span = module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter_map(|ins| Sharding::parse(super::collective::verbatim(ins, "sharding")?).ok())
        .map(|s| s.device_span())
        .max()
        .unwrap_or(0);
    (span > 1).then_some(span)
}

/// A sharding's text trimmed, and what its braces enclose (trimmed).
fn braced(text: &str) -> Result<(&str, &str), String> {
    let t = text.trim();
    let inner = t
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or_else(|| format!("sharding `{t}` is not in braces"))?
        .trim();
    Ok((t, inner))
}

/// The `sharding=` text of each of `leaves` arrays: a tuple sharding's
/// element texts (`{{replicated}, {devices=[4,1]<=[4]}}` gives
/// `{replicated}` and `{devices=[4,1]<=[4]}`), or an array sharding's own
/// text for every leaf; XLA's text form, as written.
pub fn leaf_texts(text: &str, leaves: usize) -> Result<Vec<String>, String> {
    let (t, inner) = braced(text)?;
    if !(inner.starts_with('{') || inner.is_empty()) {
        return Ok(vec![t.to_string(); leaves]);
    }
    let items = split_top(inner)?;
    if items.len() != leaves
        || items.iter().any(|i| {
            i.strip_prefix('{')
                .is_some_and(|r| r.trim_start().starts_with('{'))
        })
    {
        return Err(format!(
            "a tuple sharding of {} elements for {leaves} arrays",
            items.len()
        ));
    }
    Ok(items.into_iter().map(str::to_string).collect())
}

fn strip_metadata(s: &str) -> &str {
    match s.find(" metadata=") {
        Some(k) => s[..k].trim(),
        None => s.trim(),
    }
}

/// `[2,2]<=[4] last_tile_dim_replicate` or `[2,2]0,1,2,3 last_tile_dims={manual}`.
fn parse_tiled(rest: &str) -> Result<Sharding, String> {
    let body = rest
        .strip_prefix('[')
        .ok_or("expected `[` after devices=")?;
    let end = body.find(']').ok_or("unclosed tile shape")?;
    let tiles = nums(&body[..end])?;
    let after = body[end + 1..].trim_start();
    let n: usize = tiles.iter().product();
    let (devices, after) = if let Some(iota) = after.strip_prefix("<=") {
        let iota = iota.trim_start();
        let b = iota.strip_prefix('[').ok_or("expected `[` after <=")?;
        let e = b.find(']').ok_or("unclosed iota shape")?;
        let dims = nums(&b[..e])?;
        let mut tail = b[e + 1..].trim_start();
        let perm = if let Some(p) = tail.strip_prefix("T(") {
            let close = p.find(')').ok_or("unclosed transpose")?;
            tail = p[close + 1..].trim_start();
            nums(&p[..close])?
        } else {
            (0..dims.len()).collect()
        };
        (iota_transposed(&dims, &perm)?, tail)
    } else {
        let stop = after
            .find(|c: char| c.is_whitespace())
            .unwrap_or(after.len());
        (nums(&after[..stop])?, after[stop..].trim_start())
    };
    if devices.len() != n {
        return Err(format!("{} devices for {n} tiles", devices.len()));
    }
    let (mut subgroups, mut manual) = (0, false);
    if after.starts_with("last_tile_dim_replicate") {
        subgroups = 1;
    } else if let Some(kinds) = after.strip_prefix("last_tile_dims=") {
        let k = kinds
            .trim_start_matches('{')
            .split('}')
            .next()
            .unwrap_or("");
        for kind in k.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            subgroups += 1;
            match kind {
                "manual" => manual = true,
                "replicated" => {}
                other => return Err(format!("unknown subgroup kind `{other}`")),
            }
        }
    } else if !after.is_empty() && !after.starts_with("shard_") {
        return Err(format!("unexpected `{after}`"));
    }
    if subgroups > tiles.len() {
        return Err("more subgroup dimensions than tile dimensions".into());
    }
    Ok(Sharding::Tiled {
        tiles,
        devices,
        subgroups,
        manual,
    })
}

fn nums(s: &str) -> Result<Vec<usize>, String> {
    super::collective::usize_list(s, "a count")
}

/// Splits `{a}, {b {c}}` at top-level commas into `{a}` and `{b {c}}`.
fn split_top(s: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(format!("unbalanced braces in `{s}`"));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced braces in `{s}`"));
    }
    let last = s[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_texts_split_a_tuple_sharding_as_written() {
        let t = leaf_texts("{{replicated}, {devices=[4,1]<=[4]}}", 2).unwrap();
        assert_eq!(t, vec!["{replicated}", "{devices=[4,1]<=[4]}"]);
        let t = leaf_texts("{devices=[2,2]<=[4]}", 3).unwrap();
        assert_eq!(t, vec!["{devices=[2,2]<=[4]}"; 3]);
        assert!(leaf_texts("{{replicated}}", 2).is_err());
        assert!(leaf_texts("{{{manual}}, {manual}}", 2).is_err());
    }

    #[test]
    fn reads_every_printed_form() {
        assert_eq!(
            Sharding::parse("{replicated}").unwrap(),
            Sharding::Replicated
        );
        assert_eq!(Sharding::parse("{manual}").unwrap(), Sharding::Manual);
        assert_eq!(
            Sharding::parse("{maximal device=3}").unwrap(),
            Sharding::Maximal(3)
        );
        let s = Sharding::parse("{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}").unwrap();
        assert_eq!(s.device_span(), 4);
        assert_eq!(s.tile_of(1, &[8]).unwrap(), vec![(4, 4)]);
        let s = Sharding::parse("{devices=[4,1]0,2,1,3 metadata={op_name=\"x\"}}").unwrap();
        assert_eq!(s.tile_of(2, &[8, 3]).unwrap(), vec![(2, 2), (0, 3)]);
        let t = Sharding::parse("{{devices=[2,2]<=[4]}, {replicated}}").unwrap();
        assert_eq!(t.leaves(2).unwrap()[1], Sharding::Replicated);
        let m = Sharding::parse("{devices=[2,1,2]<=[4] last_tile_dims={manual}}").unwrap();
        assert!(matches!(
            m,
            Sharding::Tiled {
                manual: true,
                subgroups: 1,
                ..
            }
        ));
    }

    #[test]
    fn uneven_tiles_pad_and_errors_are_located() {
        let s = Sharding::parse("{devices=[4]<=[4]}").unwrap();
        assert_eq!(s.tile_of(3, &[6]).unwrap(), vec![(6, 2)]);
        assert!(Sharding::parse("{devices=[3]<=[4]}").is_err());
        assert!(Sharding::parse("{devices=[2]0,1 bogus}").is_err());
        assert!(Sharding::parse("replicated").is_err());
        assert!(s.tile_of(7, &[6]).is_err());
    }
}
