//! A small Rust lexer and item scanner: enough to find functions, `use`
//! paths, inline modules and `#[cfg(test)]` items in the library's sources.
//! Comments, strings, chars and numbers never produce identifiers or
//! punctuation, so braces inside them do not disturb the item structure.

/// One token and the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Punct(char),
    /// A string, char, byte or number literal (its text is not needed).
    Lit,
    /// A lifetime or label (`'a`).
    Lifetime,
}

/// Tokens of `src`, each with its 1-based line.
pub fn tokenize(src: &str) -> Vec<(Tok, usize)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    let count_lines = |from: usize, to: usize| b[from..to].iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let start = i;
            let mut depth = 0usize;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += count_lines(start, i.min(b.len()));
        } else if let Some(end) = raw_string_end(b, i) {
            out.push((Tok::Lit, line));
            line += count_lines(i, end);
            i = end;
        } else if c == b'"' || (c == b'b' && b.get(i + 1) == Some(&b'"')) {
            let start = i;
            i += if c == b'b' { 2 } else { 1 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push((Tok::Lit, line));
            line += count_lines(start, i);
        } else if c == b'\'' || (c == b'b' && b.get(i + 1) == Some(&b'\'')) {
            let (tok, end) = quote(b, i);
            out.push((tok, line));
            i = end;
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // a fraction, not a method call or a range
            if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
            }
            out.push((Tok::Lit, line));
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            let word = &src[start..i];
            // r#ident
            if word == "r" && b.get(i) == Some(&b'#') {
                i += 1;
                let s = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                out.push((Tok::Ident(src[s..i].to_string()), line));
            } else {
                out.push((Tok::Ident(word.to_string()), line));
            }
        } else {
            out.push((Tok::Punct(c as char), line));
            i += 1;
        }
    }
    out
}

/// The end of a raw string (`r"..."`, `r#"..."#`, `br#"..."#`) starting at `i`.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    // an identifier ending in r (e.g. `for`) is not a raw string
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    loop {
        if j >= b.len() {
            return Some(b.len());
        }
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
}

/// A char literal or a lifetime at `i` (a `'` or `b'`).
fn quote(b: &[u8], i: usize) -> (Tok, usize) {
    let mut j = i + if b[i] == b'b' { 2 } else { 1 };
    if b.get(j) == Some(&b'\\') {
        // an escaped char: up to the closing quote
        j += 2;
        while j < b.len() && b[j] != b'\'' {
            j += 1;
        }
        return (Tok::Lit, (j + 1).min(b.len()));
    }
    // one (possibly multi-byte) char, then a quote: a char literal
    let width = match b.get(j) {
        Some(&c) if c >= 0xf0 => 4,
        Some(&c) if c >= 0xe0 => 3,
        Some(&c) if c >= 0xc0 => 2,
        _ => 1,
    };
    if b.get(j + width) == Some(&b'\'') {
        return (Tok::Lit, j + width + 1);
    }
    // otherwise a lifetime or label
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    (Tok::Lifetime, j)
}

/// A function item: its name and the lines of `fn` and of its closing brace.
#[derive(Clone, Debug)]
pub struct FnItem {
    pub name: String,
    pub start: usize,
    pub end: usize,
}

impl FnItem {
    pub fn lines(&self) -> usize {
        self.end - self.start + 1
    }
}

/// A path the file names (`crate::a::b`, `super::x`, `self::y`), with the
/// inline modules it sits in.
#[derive(Clone, Debug)]
pub struct PathRef {
    pub segments: Vec<String>,
    /// Inline `mod x { ... }` names around it, outermost first.
    pub inline: Vec<String>,
}

/// What one source file holds, outside `#[cfg(test)]` items.
#[derive(Clone, Debug, Default)]
pub struct FileScan {
    pub fns: Vec<FnItem>,
    pub paths: Vec<PathRef>,
    /// Lines covered by `#[cfg(test)]` items.
    pub test_lines: usize,
    /// Child modules declared `#[cfg(test)] mod x;` (their files are tests).
    pub test_children: Vec<String>,
    /// `use` trees written at the file's top level with `pub` (re-exports).
    pub reexports: Vec<Vec<String>>,
    /// Names of items the file defines at its top level.
    pub items: Vec<String>,
}

fn is_punct(t: Option<&(Tok, usize)>, c: char) -> bool {
    matches!(t, Some((Tok::Punct(p), _)) if *p == c)
}

fn ident(t: Option<&(Tok, usize)>) -> Option<&str> {
    match t {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

/// Index just past the bracket group opening at `i` (`(`, `[` or `{`).
fn skip_group(toks: &[(Tok, usize)], i: usize) -> usize {
    let mut depth = 0i64;
    let mut j = i;
    while j < toks.len() {
        if let Tok::Punct(c) = toks[j].0 {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
        }
        j += 1;
    }
    toks.len()
}

/// Index just past the item starting at `i`: up to a `;` at depth 0, or
/// through the first `{...}` group at depth 0 (a body).
fn skip_item(toks: &[(Tok, usize)], i: usize) -> usize {
    let mut j = i;
    while j < toks.len() {
        match toks[j].0 {
            Tok::Punct(';') => return j + 1,
            Tok::Punct('{') => return skip_group(toks, j),
            Tok::Punct('(') | Tok::Punct('[') => j = skip_group(toks, j),
            _ => j += 1,
        }
    }
    toks.len()
}

/// `#[cfg(test)]` at `i`: returns the index past the attribute.
fn cfg_test_attr(toks: &[(Tok, usize)], i: usize) -> Option<usize> {
    let want = ["#", "[", "cfg", "(", "test", ")", "]"];
    for (k, w) in want.iter().enumerate() {
        let ok = match toks.get(i + k) {
            Some((Tok::Punct(c), _)) => w.len() == 1 && w.starts_with(*c),
            Some((Tok::Ident(s), _)) => s == w,
            _ => false,
        };
        if !ok {
            return None;
        }
    }
    Some(i + want.len())
}

/// Expands a `use` tree starting at `i` (after `use`) into full paths;
/// returns them and the index past the closing `;`.
fn use_tree(toks: &[(Tok, usize)], i: usize) -> (Vec<Vec<String>>, usize) {
    fn tree(
        toks: &[(Tok, usize)],
        mut i: usize,
        prefix: &[String],
        out: &mut Vec<Vec<String>>,
    ) -> usize {
        let mut path = prefix.to_vec();
        loop {
            match toks.get(i) {
                Some((Tok::Ident(s), _)) => {
                    if s == "as" {
                        // `x as y`: the path is x's; skip the alias
                        i += 2;
                        continue;
                    }
                    path.push(s.clone());
                    i += 1;
                }
                Some((Tok::Punct(':'), _)) => i += 1,
                Some((Tok::Punct('*'), _)) => {
                    i += 1;
                }
                Some((Tok::Punct('{'), _)) => {
                    i += 1;
                    loop {
                        if is_punct(toks.get(i), '}') {
                            i += 1;
                            break;
                        }
                        i = tree(toks, i, &path, out);
                        if is_punct(toks.get(i), ',') {
                            i += 1;
                        }
                        if i >= toks.len() {
                            break;
                        }
                    }
                    return i;
                }
                _ => {
                    if path.len() > prefix.len() {
                        out.push(path);
                    }
                    return i;
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut j = tree(toks, i, &[], &mut out);
    while j < toks.len() && !is_punct(toks.get(j), ';') {
        j += 1;
    }
    (out, j + 1)
}

const PATH_ROOTS: [&str; 4] = ["crate", "super", "self", "xla_props"];

/// Scans one file's source.
pub fn scan(src: &str) -> FileScan {
    let toks = tokenize(src);
    let mut s = FileScan::default();
    // (inline module name, index of its closing brace)
    let mut inline: Vec<(String, usize)> = Vec::new();
    // open `fn` bodies: (name, start line, index past the body)
    let mut i = 0;
    let mut brace_depth = 0usize;
    while i < toks.len() {
        while let Some(&(_, end)) = inline.last() {
            if i >= end {
                inline.pop();
            } else {
                break;
            }
        }
        if let Some(after) = cfg_test_attr(&toks, i) {
            // skip further attributes, then the item
            let mut j = after;
            while is_punct(toks.get(j), '#') {
                j = skip_group(&toks, j + 1);
            }
            let start_line = toks[i].1;
            let mut k = j;
            while matches!(ident(toks.get(k)), Some("pub" | "crate" | "super" | "in"))
                || is_punct(toks.get(k), '(')
            {
                if is_punct(toks.get(k), '(') {
                    k = skip_group(&toks, k);
                } else {
                    k += 1;
                }
            }
            if ident(toks.get(k)) == Some("mod") && is_punct(toks.get(k + 2), ';') {
                if let Some(name) = ident(toks.get(k + 1)) {
                    s.test_children.push(name.to_string());
                }
            }
            let end = skip_item(&toks, j);
            let end_line = toks.get(end.saturating_sub(1)).map_or(start_line, |t| t.1);
            s.test_lines += end_line - start_line + 1;
            i = end;
            continue;
        }
        match &toks[i].0 {
            Tok::Punct('{') => brace_depth += 1,
            Tok::Punct('}') => brace_depth = brace_depth.saturating_sub(1),
            Tok::Ident(w) if w == "mod" && is_punct(toks.get(i + 2), '{') => {
                if let Some(name) = ident(toks.get(i + 1)) {
                    let end = skip_group(&toks, i + 2);
                    inline.push((name.to_string(), end));
                    if brace_depth == 0 {
                        s.items.push(name.to_string());
                    }
                }
            }
            Tok::Ident(w) if w == "use" => {
                let is_pub = i > 0
                    && (ident(toks.get(i - 1)) == Some("pub") || is_punct(toks.get(i - 1), ')'));
                let (paths, end) = use_tree(&toks, i + 1);
                for p in paths {
                    if is_pub && brace_depth == 0 && inline.is_empty() {
                        s.reexports.push(p.clone());
                    }
                    if PATH_ROOTS.contains(&p[0].as_str()) {
                        s.paths.push(PathRef {
                            segments: p,
                            inline: inline.iter().map(|(n, _)| n.clone()).collect(),
                        });
                    }
                }
                i = end;
                continue;
            }
            Tok::Ident(w) if w == "fn" => {
                if let Some(name) = ident(toks.get(i + 1)) {
                    // the body: the first `{` before a `;` at depth 0
                    let mut j = i + 2;
                    let mut body = None;
                    while j < toks.len() {
                        match toks[j].0 {
                            Tok::Punct(';') => break,
                            Tok::Punct('{') => {
                                body = Some(j);
                                break;
                            }
                            Tok::Punct('(') | Tok::Punct('[') => j = skip_group(&toks, j),
                            _ => j += 1,
                        }
                    }
                    if let Some(open) = body {
                        let end = skip_group(&toks, open);
                        let end_line = toks[end - 1].1;
                        s.fns.push(FnItem {
                            name: name.to_string(),
                            start: toks[i].1,
                            end: end_line,
                        });
                    }
                    if brace_depth == 0 {
                        s.items.push(name.to_string());
                    }
                }
            }
            Tok::Ident(w)
                if brace_depth == 0
                    && matches!(
                        w.as_str(),
                        "struct" | "enum" | "trait" | "type" | "const" | "static" | "union"
                    ) =>
            {
                if let Some(name) = ident(toks.get(i + 1)) {
                    s.items.push(name.to_string());
                }
            }
            Tok::Ident(w) if PATH_ROOTS.contains(&w.as_str()) && is_punct(toks.get(i + 1), ':') => {
                // a path in code: `crate::a::b(...)`
                let mut segments = vec![w.clone()];
                let mut j = i + 1;
                while is_punct(toks.get(j), ':') && is_punct(toks.get(j + 1), ':') {
                    match ident(toks.get(j + 2)) {
                        Some(seg) => segments.push(seg.to_string()),
                        None => break,
                    }
                    j += 3;
                }
                let preceded_by_dollar = i > 0 && is_punct(toks.get(i - 1), '$');
                if segments.len() > 1 && !preceded_by_dollar {
                    s.paths.push(PathRef {
                        segments,
                        inline: inline.iter().map(|(n, _)| n.clone()).collect(),
                    });
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_in_strings_and_comments_do_not_count() {
        let s = scan("fn a() {\n let x = \"}\"; // }\n /* } */ let c = '}';\n}\nfn b() {}\n");
        assert_eq!(s.fns.len(), 2);
        assert_eq!((s.fns[0].start, s.fns[0].end), (1, 4));
        assert_eq!(s.fns[1].name, "b");
    }

    #[test]
    fn cfg_test_items_are_left_out() {
        let s =
            scan("fn a() {}\n#[cfg(test)]\nmod tests {\n fn b() {}\n}\n#[cfg(test)]\nmod more;\n");
        assert_eq!(s.fns.len(), 1);
        assert_eq!(s.test_children, vec!["more".to_string()]);
        assert_eq!(s.test_lines, 4 + 2);
    }

    #[test]
    fn use_trees_expand() {
        let s = scan("use crate::{a::{b, c as d}, e};\nuse super::x;\nfn f() { crate::g::h(); }\n");
        let p: Vec<String> = s.paths.iter().map(|p| p.segments.join("::")).collect();
        assert_eq!(
            p,
            [
                "crate::a::b",
                "crate::a::c",
                "crate::e",
                "super::x",
                "crate::g::h"
            ]
        );
    }

    #[test]
    fn lifetimes_are_not_chars() {
        let s = scan("fn a<'x>(v: &'x str) -> char {\n 'y'\n}\n");
        assert_eq!(s.fns.len(), 1);
        assert_eq!(s.fns[0].end, 3);
    }
}
