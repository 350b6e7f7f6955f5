//! The library's source stays easy to read: no function in `src/` runs past 80 lines (from its
//! `fn` line to its closing brace). A longer one is split into named steps.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source with comments, strings and character literals blanked out (newlines kept), so
/// that only code braces, parentheses and keywords remain.
fn code_only(src: &str) -> Vec<char> {
    let s: Vec<char> = src.chars().collect();
    let mut out = s.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(s.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let start = i;
        if s[i] == '/' && at(&s, i + 1) == Some('/') {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if s[i] == '/' && at(&s, i + 1) == Some('*') {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && at(&s, i + 1) == Some('*') {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && at(&s, i + 1) == Some('/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if s[i] == 'r'
            && matches!(at(&s, i + 1), Some('#' | '"'))
            && !ident_char(s.get(i.wrapping_sub(1)))
        {
            let hashes = s[i + 1..].iter().take_while(|&&c| c == '#').count();
            if s.get(i + 1 + hashes) != Some(&'"') {
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < s.len()
                && !(s[i] == '"'
                    && s[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == '#')
                        .count()
                        == hashes)
            {
                i += 1;
            }
            i += 1 + hashes;
        } else if s[i] == '"' {
            i += 1;
            while i < s.len() && s[i] != '"' {
                i += if s[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if s[i] == '\'' && (at(&s, i + 2) == Some('\'') || at(&s, i + 1) == Some('\\')) {
            // A character literal (a lifetime has no closing quote).
            i += 1;
            while i < s.len() && s[i] != '\'' {
                i += if s[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            i += 1;
            continue;
        }
        blank(&mut out, start, i);
    }
    out
}

fn at(s: &[char], i: usize) -> Option<char> {
    s.get(i).copied()
}

fn ident_char(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// Every function with a body: (first line, last line, name), 1-based.
fn functions(src: &str) -> Vec<(usize, usize, String)> {
    let code = code_only(src);
    let line_of = |at: usize| code[..at].iter().filter(|&&c| c == '\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while i + 2 < code.len() {
        let is_fn = code[i] == 'f'
            && code[i + 1] == 'n'
            && !ident_char(code.get(i.wrapping_sub(1)))
            && code[i + 2].is_whitespace();
        if !is_fn {
            i += 1;
            continue;
        }
        let name_at = i
            + 2
            + code[i + 2..]
                .iter()
                .take_while(|c| c.is_whitespace())
                .count();
        let name: String = code[name_at..]
            .iter()
            .take_while(|&&c| ident_char(Some(&c)) || c == '$')
            .collect();
        // The body's opening brace, unless a `;` (a declaration) comes first outside brackets.
        let (mut j, mut depth) = (name_at, 0i32);
        let open = loop {
            match code.get(j) {
                None => break None,
                Some('(' | '[') => depth += 1,
                Some(')' | ']') => depth -= 1,
                Some(';') if depth == 0 => break None,
                Some('{') if depth == 0 => break Some(j),
                _ => {}
            }
            j += 1;
        };
        if let (false, Some(open)) = (name.is_empty(), open) {
            let mut braces = 0;
            let mut k = open;
            while k < code.len() {
                match code[k] {
                    '{' => braces += 1,
                    '}' => {
                        braces -= 1;
                        if braces == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            found.push((line_of(i), line_of(k), name));
        }
        i = name_at;
    }
    found
}

#[test]
fn the_reader_finds_every_function_and_ignores_braces_in_strings_and_comments() {
    let src = "fn a() {\n    let s = \"}}\"; // }\n    let c = '{';\n}\n\
               trait T { fn decl(&self) -> [u8; 2]; }\n\
               fn b<'x>(v: &'x [u8; 4]) -> impl Fn(u8) -> [u8; 2] + 'x {\n    move |_| [v[0], r#\"}\"#.len() as u8]\n}\n";
    let names: Vec<_> = functions(src)
        .into_iter()
        .map(|(a, b, n)| (n, a, b))
        .collect();
    assert_eq!(
        names,
        [("a".to_string(), 1, 4), ("b".to_string(), 6, 8)],
        "{src}"
    );
}

#[test]
fn no_library_function_runs_past_80_lines() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 20, "read the library's sources: {files:?}");
    let mut long = Vec::new();
    let mut count = 0;
    for file in &files {
        let src = std::fs::read_to_string(file).unwrap();
        for (first, last, name) in functions(&src) {
            count += 1;
            if last - first + 1 > MAX_LINES {
                long.push(format!(
                    "{}:{first}: fn {name}, {} lines",
                    file.display(),
                    last - first + 1
                ));
            }
        }
    }
    assert!(count > 500, "found {count} functions");
    assert!(
        long.is_empty(),
        "functions past {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}
