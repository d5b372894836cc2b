//! The files a `.proto` is compiled from: local ones beside it (or below its folder), checked
//! for nesting before protox's parser (which recurses once per level) reads them and kept by
//! import name for the registry's references; then the well-known types protox ships.

use std::path::Path;

/// Braces nested deeper than this in a `.proto` are refused before it is parsed.
const MAX_NESTING: usize = 100;

/// Local `.proto` files found beside the one named (or below its folder), checked for
/// nesting before the parser reads them and kept by import name; the well-known types after.
pub(super) struct Local {
    dir: std::path::PathBuf,
    google: protox::file::GoogleFileResolver,
    pub(super) files: std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>,
}

impl Local {
    pub(super) fn new(dir: &Path) -> Local {
        Local {
            dir: dir.to_path_buf(),
            google: protox::file::GoogleFileResolver::new(),
            files: Default::default(),
        }
    }
}

impl protox::file::FileResolver for Local {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        protox::file::IncludeFileResolver::new(self.dir.clone()).resolve_path(path)
    }

    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        let path = self.dir.join(name);
        if !path.is_file() {
            return self.google.open_file(name);
        }
        let text = std::fs::read_to_string(&path).map_err(protox::Error::new)?;
        if let Some(line) = too_deep(&text) {
            return Err(protox::Error::new(std::io::Error::other(format!(
                "{name}: braces nest more than {MAX_NESTING} levels deep at line {line}"
            ))));
        }
        let file = protox::file::File::open(name, &path)?;
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((name.to_string(), text));
        Ok(file)
    }
}

/// The line where braces first nest deeper than MAX_NESTING (comments and strings skipped).
fn too_deep(text: &str) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '/' if chars.peek() == Some(&'/') => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    line += usize::from(c == '\n');
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' | '\'' => {
                let mut escaped = false;
                for x in chars.by_ref() {
                    if x == c && !escaped || x == '\n' {
                        line += usize::from(x == '\n');
                        break;
                    }
                    escaped = x == '\\' && !escaped;
                }
            }
            '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(line);
                }
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}
