//! sources::listing: what a policy directory holds — every entry whose name ends in
//! `.cedar`, looked at through symlinks (a Kubernetes ConfigMap volume is all symlinks into a
//! `..data` directory that is swapped atomically). An entry that is not a readable policy file
//! (a directory, a dangling or looping symlink, an unreadable file) is kept as a problem so the
//! loader reports it and the watcher notices it, never skipped silently. It reads metadata only,
//! never file contents.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One `*.cedar` entry of a policy directory, as seen through any symlinks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PolicyEntry {
    /// A regular file (or a symlink to one): what the watcher compares, including the inode so
    /// a swapped symlink target is a change even with the same size and time.
    File {
        path: PathBuf,
        len: u64,
        modified: Option<SystemTime>,
        device: u64,
        inode: u64,
    },
    /// Why the entry is not a policy file, worded for the operator.
    Problem { path: PathBuf, message: String },
}

impl PolicyEntry {
    pub fn path(&self) -> &Path {
        match self {
            Self::File { path, .. } | Self::Problem { path, .. } => path,
        }
    }
}

/// The `*.cedar` entries directly in `dir`, sorted by path.
pub fn policy_entries(dir: &Path) -> std::io::Result<Vec<PolicyEntry>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|extension| extension == "cedar")
        {
            entries.push(look_at(path));
        }
    }
    entries.sort();
    Ok(entries)
}

/// The entry at `path`, following symlinks (`stat`, not `lstat`).
fn look_at(path: PathBuf) -> PolicyEntry {
    let problem = |message: &str| PolicyEntry::Problem {
        path: path.clone(),
        message: message.to_string(),
    };
    match std::fs::metadata(&path) {
        Ok(metadata) if metadata.is_file() => PolicyEntry::File {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            device: metadata.dev(),
            inode: metadata.ino(),
            path,
        },
        Ok(metadata) if metadata.is_dir() => problem("is a directory, not a policy file"),
        Ok(_) => problem("is not a regular file"),
        Err(error) => match error.raw_os_error() {
            Some(libc::ELOOP) => problem("is a symlink loop"),
            Some(libc::ENOENT) if is_symlink(&path) => {
                problem("is a symlink whose target does not exist")
            }
            _ => problem(&format!("cannot be read: {error}")),
        },
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn problems(dir: &Path) -> Vec<(String, String)> {
        policy_entries(dir)
            .unwrap()
            .into_iter()
            .filter_map(|entry| match entry {
                PolicyEntry::Problem { path, message } => Some((
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    message,
                )),
                PolicyEntry::File { .. } => None,
            })
            .collect()
    }

    #[test]
    fn c14_directories_dangling_and_looping_symlinks_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("good.cedar"), "").unwrap();
        std::fs::write(root.join("notes.txt"), "").unwrap();
        std::fs::create_dir(root.join("folder.cedar")).unwrap();
        symlink(root.join("missing"), root.join("dangling.cedar")).unwrap();
        symlink(root.join("loop-b.cedar"), root.join("loop-a.cedar")).unwrap();
        symlink(root.join("loop-a.cedar"), root.join("loop-b.cedar")).unwrap();
        let found = problems(root);
        let expected = [
            ("dangling.cedar", "is a symlink whose target does not exist"),
            ("folder.cedar", "is a directory, not a policy file"),
            ("loop-a.cedar", "is a symlink loop"),
            ("loop-b.cedar", "is a symlink loop"),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(name, message)| (name.to_string(), message.to_string()))
            .collect();
        assert_eq!(found, expected);
        assert_eq!(
            policy_entries(root).unwrap().len(),
            5,
            "notes.txt is not listed"
        );
    }

    #[test]
    fn a_symlinked_file_is_seen_through_its_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("..v1")).unwrap();
        std::fs::write(root.join("..v1/x.cedar"), "abc").unwrap();
        symlink("..v1", root.join("..data")).unwrap();
        symlink("..data/x.cedar", root.join("x.cedar")).unwrap();
        let entries = policy_entries(root).unwrap();
        assert!(
            matches!(&entries[..], [PolicyEntry::File { len: 3, .. }]),
            "{entries:?}"
        );
    }
}
