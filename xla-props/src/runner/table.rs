//! Plain-text tables whose columns fit their contents (a 21-character
//! backend name widens its column instead of pushing the row out of line).

/// How a column's cells are aligned.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// Lays out `rows` under `header`, each column as wide as its widest cell,
/// two spaces between columns, the last column unpadded; one line each.
pub(crate) fn render(header: &[(&str, Align)], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|(h, _)| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| -> String {
        let mut out = String::new();
        for (k, cell) in cells.enumerate() {
            let last = k + 1 == header.len();
            let pad = widths[k].saturating_sub(cell.chars().count());
            if k > 0 {
                out.push_str("  ");
            }
            match header[k].1 {
                Align::Right => {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(cell);
                }
                Align::Left => {
                    out.push_str(cell);
                    if !last {
                        out.push_str(&" ".repeat(pad));
                    }
                }
            }
        }
        out.push('\n');
        out
    };
    let mut out = line(&mut header.iter().map(|(h, _)| *h));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_widest_cell() {
        let t = render(
            &[
                ("n", Align::Right),
                ("backend", Align::Left),
                ("kind", Align::Left),
            ],
            &[
                vec![
                    "3".into(),
                    "a-21-character-backend".into(),
                    "mismatch".into(),
                ],
                vec!["120".into(), "x".into(), "panicked".into()],
            ],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "  n  backend                 kind");
        assert_eq!(lines[1], "  3  a-21-character-backend  mismatch");
        assert_eq!(lines[2], "120  x                       panicked");
    }
}
