//! Plots drawn with plotters' SVG backend: ULP histograms and the culprit
//! fusion's graph. Each returns an `<svg>` element as a string, to be inlined.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::results::{Isolation, ReportError};

fn draw_error(e: impl Display) -> ReportError {
    ReportError(format!("failed to draw a plot: {e}"))
}

/// The bucket's label as drawn on an axis: `≤8` for `5-8`, `≤2^20` for large ones.
fn axis_label(label: &str) -> String {
    match label.split_once('-') {
        Some((_, hi)) => match hi.parse::<u64>() {
            Ok(h) if h >= 1024 && h.is_power_of_two() => format!("≤2^{}", h.trailing_zeros()),
            Ok(h) => format!("≤{h}"),
            Err(_) => label.to_string(),
        },
        None if label == "nan/inf/sign" => "class".to_string(),
        None => label.to_string(),
    }
}

/// One backend's bars in a ULP histogram: its name, its count per bucket
/// (in the order of the chart's labels) and its colour.
pub(crate) struct Series<'a> {
    pub name: &'a str,
    pub counts: Vec<u64>,
    pub color: RGBColor,
}

/// A histogram of counts per ULP bucket, with a log count axis; with more
/// than one series, their bars stand side by side in each bucket, with a legend.
pub(crate) fn ulp_histogram_svg(
    caption: &str,
    labels: &[String],
    series: &[Series],
) -> Result<String, ReportError> {
    let legend_rows = if series.len() > 1 { series.len() } else { 0 };
    let size: (u32, u32) = (380, 210 + 14 * legend_rows as u32);
    let n = labels.len() as u32;
    let max = series
        .iter()
        .flat_map(|s| s.counts.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let (root, legend) = root.split_vertically(210);
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 13))
            .margin(6)
            .x_label_area_size(if n > 8 { 46 } else { 30 })
            .y_label_area_size(48)
            .build_cartesian_2d(
                (0u32..n.max(1) - 1).into_segmented(),
                (0.5f64..max * 2.0).log_scale(),
            )
            .map_err(draw_error)?;
        let label = |v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) => labels
                .get(*i as usize)
                .map(|b| axis_label(b))
                .unwrap_or_default(),
            _ => String::new(),
        };
        let x_style = if n > 8 {
            ("sans-serif", 10)
                .into_font()
                .transform(FontTransform::Rotate90)
        } else {
            ("sans-serif", 11).into_font()
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n as usize + 1)
            .x_label_formatter(&label)
            .x_label_style(x_style)
            .y_labels(5)
            .y_label_formatter(&|y| format!("{}", y.round() as u64))
            .y_desc("count")
            .draw()
            .map_err(draw_error)?;
        // side by side: each series gets a slice of the bucket, by pixel margins
        let width = chart.plotting_area().dim_in_pixel().0 as f64;
        let bucket_px = width / f64::from(n.max(1));
        let slice = ((bucket_px - 4.0) / series.len().max(1) as f64).max(1.0);
        for (k, s) in series.iter().enumerate() {
            let left = 2.0 + slice * k as f64;
            let right = 2.0 + slice * (series.len() - 1 - k) as f64;
            chart
                .draw_series(
                    s.counts
                        .iter()
                        .enumerate()
                        .filter(|(_, &c)| c > 0)
                        .map(|(i, &c)| {
                            let i = i as u32;
                            let mut bar = Rectangle::new(
                                [
                                    (SegmentValue::Exact(i), 0.5),
                                    (SegmentValue::Exact(i + 1), c as f64),
                                ],
                                s.color.filled(),
                            );
                            bar.set_margin(0, 0, left as u32, right as u32);
                            bar
                        }),
                )
                .map_err(draw_error)?;
        }
        for (k, s) in series.iter().enumerate().take(legend_rows) {
            let y = 14 * k as i32 + 2;
            legend
                .draw(&Rectangle::new(
                    [(56, y + 2), (66, y + 12)],
                    s.color.filled(),
                ))
                .map_err(draw_error)?;
            legend
                .draw(&Text::new(
                    s.name.to_string(),
                    (72, y + 1),
                    ("sans-serif", 11).into_font(),
                ))
                .map_err(draw_error)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Node boxes and spacing of the fusion graph, in pixels.
const NODE_W: i32 = 170;
const NODE_H: i32 = 34;
const GAP_X: i32 = 24;
const GAP_Y: i32 = 40;
const PAD: i32 = 12;
/// Horizontal room for each edge routed around the boxes.
const LANE: i32 = 10;
/// Graphs larger than this are listed, not drawn: a drawing of hundreds of
/// boxes is unreadable at report size.
pub(crate) const MAX_DRAWN_NODES: usize = 80;

/// A node's rows: layer by longest path from the sources (operands above users).
fn layers(iso: &Isolation) -> (Vec<String>, HashMap<String, usize>) {
    let mut names: Vec<String> = iso.nodes.iter().map(|n| n.name().to_string()).collect();
    for e in &iso.edges {
        let (a, b) = e.ends();
        for n in [a, b] {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    let mut layer: HashMap<String, usize> = names.iter().map(|n| (n.clone(), 0)).collect();
    // longest path by relaxation; bounded by the node count, so a cycle in
    // bad input cannot loop forever
    for _ in 0..names.len() {
        let mut changed = false;
        for e in &iso.edges {
            let (a, b) = e.ends();
            let want = layer[a] + 1;
            if want > layer[b] && want < names.len() {
                layer.insert(b.to_string(), want);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (names, layer)
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// The culprit fusion as a graph, operands above their users, with the
/// diverging instruction in red. `None` when there is nothing to draw or too much.
pub(crate) fn fusion_graph_svg(iso: &Isolation) -> Result<Option<String>, ReportError> {
    let (names, layer) = layers(iso);
    if names.is_empty() || names.len() > MAX_DRAWN_NODES {
        return Ok(None);
    }
    let mut rows: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for n in &names {
        rows.entry(layer[n]).or_default().push(n);
    }
    let widest = rows.values().map(Vec::len).max().unwrap_or(1) as i32;
    // edges that skip a row go around the boxes, each in its own lane on the right
    let is_long = |a: &str, b: &str| layer[b].abs_diff(layer[a]) > 1;
    let long_edges = iso
        .edges
        .iter()
        .filter(|e| {
            let (a, b) = e.ends();
            is_long(a, b)
        })
        .count() as i32;
    let boxes_w = widest * NODE_W + (widest - 1) * GAP_X;
    let width = 2 * PAD
        + boxes_w
        + if long_edges > 0 {
            8 + LANE * long_edges
        } else {
            0
        };
    let height = 2 * PAD + rows.len() as i32 * (NODE_H + GAP_Y) - GAP_Y;
    let mut pos: HashMap<&str, (i32, i32)> = HashMap::new();
    for (r, (_, row)) in rows.iter().enumerate() {
        let row_w = row.len() as i32 * NODE_W + (row.len() as i32 - 1) * GAP_X;
        let x0 = PAD + (boxes_w - row_w) / 2;
        for (k, n) in row.iter().enumerate() {
            let x = x0 + k as i32 * (NODE_W + GAP_X);
            let y = PAD + r as i32 * (NODE_H + GAP_Y);
            pos.insert(n, (x, y));
        }
    }
    let opcode: HashMap<&str, &str> = iso
        .nodes
        .iter()
        .filter_map(|n| n.opcode().map(|o| (n.name(), o)))
        .collect();
    let culprit = iso.culprit.instruction.as_deref();
    let red = RGBColor(0xc6, 0x28, 0x28);
    let grey = RGBColor(0x55, 0x55, 0x55);
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut lane = 0;
        for e in &iso.edges {
            let (a, b) = e.ends();
            let (Some(&(ax, ay)), Some(&(bx, by))) = (pos.get(a), pos.get(b)) else {
                continue;
            };
            let path = if is_long(a, b) {
                lane += 1;
                let x = PAD + boxes_w + 8 + LANE * lane - LANE / 2;
                let (y0, y1) = (ay + NODE_H / 2, by + NODE_H / 2);
                vec![(ax + NODE_W, y0), (x, y0), (x, y1), (bx + NODE_W, y1)]
            } else {
                vec![(ax + NODE_W / 2, ay + NODE_H), (bx + NODE_W / 2, by)]
            };
            let (from, to) = (path[path.len() - 2], path[path.len() - 1]);
            root.draw(&PathElement::new(path, grey.stroke_width(1)))
                .map_err(draw_error)?;
            // the arrowhead, pointing along the edge
            let (dx, dy) = ((to.0 - from.0) as f64, (to.1 - from.1) as f64);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (ux, uy) = (dx / len, dy / len);
            let back = (to.0 as f64 - 8.0 * ux, to.1 as f64 - 8.0 * uy);
            let left = ((back.0 - 4.0 * uy) as i32, (back.1 + 4.0 * ux) as i32);
            let right = ((back.0 + 4.0 * uy) as i32, (back.1 - 4.0 * ux) as i32);
            root.draw(&Polygon::new(vec![to, left, right], grey.filled()))
                .map_err(draw_error)?;
        }
        for n in &names {
            let (x, y) = pos[n.as_str()];
            let hot = Some(n.as_str()) == culprit;
            let (fill, stroke) = if hot {
                (RGBColor(0xff, 0xcd, 0xd2), red)
            } else {
                (RGBColor(0xe3, 0xf2, 0xfd), RGBColor(0x15, 0x65, 0xc0))
            };
            root.draw(&Rectangle::new(
                [(x, y), (x + NODE_W, y + NODE_H)],
                fill.filled(),
            ))
            .map_err(draw_error)?;
            root.draw(&Rectangle::new(
                [(x, y), (x + NODE_W, y + NODE_H)],
                stroke.stroke_width(if hot { 3 } else { 1 }),
            ))
            .map_err(draw_error)?;
            let text = match opcode.get(n.as_str()) {
                Some(op) => format!("{} = {op}", shorten(n, 12)),
                None => shorten(n, 22),
            };
            let style = TextStyle::from(("monospace", 12).into_font())
                .color(if hot { &red } else { &BLACK })
                .pos(Pos::new(HPos::Center, VPos::Center));
            root.draw(&Text::new(text, (x + NODE_W / 2, y + NODE_H / 2), style))
                .map_err(draw_error)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(Some(svg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::{Culprit, GraphEdge, GraphNode};

    #[test]
    fn axis_labels_are_short() {
        assert_eq!(axis_label("0"), "0");
        assert_eq!(axis_label("5-8"), "≤8");
        assert_eq!(axis_label("1048577-2097152"), "≤2^21");
        assert_eq!(axis_label("nan/inf/sign"), "class");
    }

    #[test]
    fn histogram_is_svg_with_one_bar_per_nonempty_bucket() {
        let labels = ["0".to_string(), "1".into(), "2".into()];
        let one = [Series {
            name: "interpreter",
            counts: vec![100, 0, 3],
            color: RGBColor(1, 2, 3),
        }];
        let svg = ulp_histogram_svg("add f32", &labels, &one).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert_eq!(svg.matches("fill=\"#010203\"").count(), 2, "{svg}");
        // a single series has no legend
        assert!(!svg.contains("interpreter"), "{svg}");
    }

    #[test]
    fn series_stand_side_by_side_with_a_legend() {
        let labels = ["0".to_string(), "1".into(), "2".into()];
        let two = [
            Series {
                name: "interpreter",
                counts: vec![100, 0, 0],
                color: RGBColor(1, 2, 3),
            },
            Series {
                name: "mutant:x",
                counts: vec![50, 7, 3],
                color: RGBColor(4, 5, 6),
            },
        ];
        let svg = ulp_histogram_svg("add f32", &labels, &two).unwrap();
        // bars plus the legend's swatch
        assert_eq!(svg.matches("fill=\"#010203\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("fill=\"#040506\"").count(), 4, "{svg}");
        assert!(
            svg.contains("interpreter") && svg.contains("mutant:x"),
            "{svg}"
        );
        // in bucket 0 the two bars do not overlap: the first ends where the second starts
        let xs = |color: &str| -> Vec<(f64, f64)> {
            svg.lines()
                .filter(|l| l.contains("<rect") && l.contains(color))
                .map(|l| {
                    let attr = |a: &str| -> f64 {
                        let s = l.split(&format!(" {a}=\"")).nth(1).unwrap();
                        s[..s.find('"').unwrap()].parse().unwrap()
                    };
                    (attr("x"), attr("x") + attr("width"))
                })
                .collect()
        };
        let (a, b) = (xs("#010203")[0], xs("#040506")[0]);
        assert!(a.1 <= b.0 + 1.0 && a.0 < b.0, "{a:?} {b:?}");
    }

    #[test]
    fn graph_highlights_the_culprit_and_survives_cycles() {
        let iso = Isolation {
            culprit: Culprit {
                instruction: Some("sub".into()),
                ..Culprit::default()
            },
            nodes: vec![
                GraphNode::Name("p".into()),
                GraphNode::Detailed {
                    name: "sub".into(),
                    opcode: Some("subtract".into()),
                },
            ],
            edges: vec![
                GraphEdge::Pair("p".into(), "sub".into()),
                GraphEdge::Pair("sub".into(), "p".into()),
            ],
            ..Isolation::default()
        };
        let svg = fusion_graph_svg(&iso).unwrap().unwrap();
        assert!(svg.contains("sub = subtract"), "{svg}");
        assert!(svg.contains("#C62828") || svg.contains("#c62828"), "{svg}");
        let empty = Isolation::default();
        assert!(fusion_graph_svg(&empty).unwrap().is_none());
    }
}
