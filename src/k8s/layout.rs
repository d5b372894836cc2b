//! Where the scenario's files land in the pods: every file (the scenario, its includes, its
//! payload data files) at its place relative to the deepest folder they share, so the include
//! lines and `file()` paths written in them resolve below the mount point as they did here.

use std::path::{Component, Path, PathBuf};

/// One file of the ConfigMap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Placed {
    /// The ConfigMap key: unique, of the characters keys take.
    pub key: String,
    /// Where it lands below the mount point, `/`-separated.
    pub path: String,
    pub content: Content,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Content {
    Text(String),
    /// Not UTF-8: a ConfigMap keeps it in `binaryData`.
    Binary(Vec<u8>),
}

impl Content {
    /// Bytes it takes in the ConfigMap object (base64 for binary data).
    pub(super) fn stored_len(&self) -> usize {
        match self {
            Content::Text(t) => t.len(),
            Content::Binary(b) => b.len().div_ceil(3) * 4,
        }
    }
}

/// The files placed: the scenario first. `cwd` makes relative paths absolute, so files named
/// relative to the scenario and files named absolute share one tree.
pub(super) fn place(files: Vec<(PathBuf, Content)>, cwd: &Path) -> Vec<Placed> {
    let absolute: Vec<PathBuf> = files.iter().map(|(p, _)| normalize(&cwd.join(p))).collect();
    let common = absolute
        .iter()
        .map(|p| p.parent().unwrap_or(Path::new("/")).to_path_buf())
        .reduce(|a, b| shared(&a, &b))
        .unwrap_or_default();
    let mut placed: Vec<Placed> = Vec::new();
    for ((_, content), abs) in files.into_iter().zip(absolute) {
        let rel = abs.strip_prefix(&common).unwrap_or(&abs);
        let path: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let path = path.join("/");
        // A file met twice (two runs reading one data file) is placed once.
        if placed.iter().any(|p| p.path == path) {
            continue;
        }
        let name = rel
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        placed.push(Placed {
            key: format!("{:02}-{}", placed.len(), key_chars(&name)),
            path,
            content,
        });
    }
    placed
}

/// `.` and `..` resolved by reading the path alone (the files need not exist here).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The deepest folder both are in.
fn shared(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

/// A ConfigMap key takes letters, digits, `-`, `_` and `.`.
fn key_chars(name: &str) -> String {
    let k: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if k.is_empty() {
        "file".into()
    } else {
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(path: &str) -> (PathBuf, Content) {
        (PathBuf::from(path), Content::Text(path.into()))
    }

    fn paths(placed: &[Placed]) -> Vec<(&str, &str)> {
        placed
            .iter()
            .map(|p| (p.key.as_str(), p.path.as_str()))
            .collect()
    }

    #[test]
    fn files_keep_their_places_relative_to_the_folder_they_share() {
        let placed = place(
            vec![
                text("scenarios/a.kbs"),
                text("scenarios/common/cluster.kbs"),
                text("scenarios/../data/orders 1.jsonl"),
            ],
            Path::new("/home/u/repo"),
        );
        assert_eq!(
            paths(&placed),
            [
                ("00-a.kbs", "scenarios/a.kbs"),
                ("01-cluster.kbs", "scenarios/common/cluster.kbs"),
                ("02-orders-1.jsonl", "data/orders 1.jsonl"),
            ]
        );
    }

    #[test]
    fn a_scenario_alone_lands_at_the_top_and_a_file_met_twice_once() {
        let placed = place(
            vec![text("/abs/s.kbs"), text("/abs/d.txt"), text("/abs/./d.txt")],
            Path::new("/elsewhere"),
        );
        assert_eq!(
            paths(&placed),
            [("00-s.kbs", "s.kbs"), ("01-d.txt", "d.txt")]
        );
    }

    #[test]
    fn binary_data_is_counted_as_its_base64() {
        assert_eq!(Content::Binary(vec![0; 3]).stored_len(), 4);
        assert_eq!(Content::Binary(vec![0; 4]).stored_len(), 8);
    }
}
