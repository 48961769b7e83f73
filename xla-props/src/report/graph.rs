//! The culprit fusion's graph for isolation reports that do not carry one
//! (`xla-props isolate`'s `report.json` names the culprit's computation and
//! the reproducer file, whose module holds the minimized culprit fusion):
//! read from the module itself.

use std::path::Path;

use super::results::{GraphEdge, GraphNode, Isolation};

/// Fills `iso.nodes` and `iso.edges`, when it has none, from the first
/// readable module among its `module` and its `reproducer` (each as written,
/// relative to `beside`, the isolation report's directory, or by file name
/// in it) that holds the culprit's computation. Returns why not, when it could not.
pub fn graph_from_module(iso: &mut Isolation, beside: Option<&Path>) -> Result<(), String> {
    if !iso.nodes.is_empty() || !iso.edges.is_empty() {
        return Ok(());
    }
    let Some(computation) = iso.culprit.computation.clone() else {
        return Err("the isolation report names no computation".into());
    };
    let named: Vec<String> = iso
        .extra
        .get("module")
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .into_iter()
        .chain(iso.reproducer.clone())
        .collect();
    if named.is_empty() {
        return Err("the isolation report names no module or reproducer".into());
    }
    let path = named
        .iter()
        .flat_map(|m| {
            let m = Path::new(m);
            [
                Some(m.to_path_buf()),
                beside.map(|d| d.join(m)),
                beside.zip(m.file_name()).map(|(d, f)| d.join(f)),
            ]
        })
        .flatten()
        .filter(|p| p.is_file())
        .find(|p| {
            crate::hlo::load_module_file(p)
                .is_ok_and(|m| m.computations.iter().any(|c| c.name == computation))
        })
        .ok_or_else(|| {
            format!(
                "no module with computation `{computation}` among {}",
                named.join(", ")
            )
        })?;
    let module = crate::hlo::load_module_file(&path).map_err(|e| e.to_string())?;
    let comp = module
        .computations
        .iter()
        .find(|c| c.name == computation)
        .ok_or_else(|| format!("{}: no computation `{computation}`", path.display()))?;
    iso.nodes = comp
        .instructions
        .iter()
        .map(|i| GraphNode::Detailed {
            name: i.name.clone(),
            opcode: Some(i.opcode.to_string()),
        })
        .collect();
    iso.edges = comp
        .instructions
        .iter()
        .flat_map(|user| {
            user.operands.iter().filter_map(move |o| {
                comp.instructions
                    .get(o.0 as usize)
                    .map(|op| GraphEdge::Pair(op.name.clone(), user.name.clone()))
            })
        })
        .collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::Culprit;

    const MODULE: &str = "HloModule m

fused {
  p0 = f32[4] parameter(0)
  e = f32[4] exponential(p0)
  ROOT m = f32[4] multiply(e, p0)
}

ENTRY main {
  x = f32[4] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
}
";

    #[test]
    fn the_fused_computation_becomes_the_graph() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("module.hlo"), MODULE).unwrap();
        let mut iso = Isolation {
            culprit: Culprit {
                computation: Some("fused".into()),
                fusion: Some("f".into()),
                instruction: Some("e".into()),
            },
            ..Isolation::default()
        };
        iso.extra
            .insert("module".into(), "elsewhere/module.hlo".into());
        // found beside the report by its file name
        graph_from_module(&mut iso, Some(dir.path())).unwrap();
        let names: Vec<&str> = iso.nodes.iter().map(|n| n.name()).collect();
        assert_eq!(names, ["p0", "e", "m"]);
        assert_eq!(iso.nodes[1].opcode(), Some("exponential"));
        let edges: Vec<(&str, &str)> = iso.edges.iter().map(|e| e.ends()).collect();
        assert_eq!(edges, [("p0", "e"), ("e", "m"), ("p0", "m")]);
        // a report that has a graph keeps it; one without a module says so
        let mut none = Isolation::default();
        assert!(graph_from_module(&mut none, None).is_err());
        iso.culprit.computation = Some("nope".into());
        iso.nodes.clear();
        iso.edges.clear();
        let e = graph_from_module(&mut iso, Some(dir.path())).unwrap_err();
        assert!(e.contains("no module with computation `nope`"), "{e}");
        // what `xla-props isolate` writes: the module's name, and the reproducer's path
        let mut tool = Isolation {
            culprit: Culprit {
                computation: Some("fused".into()),
                ..Culprit::default()
            },
            reproducer: Some("out/reproducer.hlotest".into()),
            ..Isolation::default()
        };
        tool.extra.insert("module".into(), "m".into());
        std::fs::write(
            dir.path().join("reproducer.hlotest"),
            format!("// run: backends=interpreter\n{MODULE}"),
        )
        .unwrap();
        graph_from_module(&mut tool, Some(dir.path())).unwrap();
        assert_eq!(tool.nodes.len(), 3);
    }
}
