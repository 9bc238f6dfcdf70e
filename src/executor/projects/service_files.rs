//! Owns recognizing askgate's own files on its machine (N1): the configuration file and the
//! decision log, spill and policy directories, compared by device and inode after symlinks are
//! resolved, so that no name, symlink, hard link or bind mount reaches them through a
//! `local_path`. A directory of the service covers everything under it. It reads metadata
//! only, never contents, and decides nothing about a call.

use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Most directory entries looked at for one check; past it the check fails (closed).
const MAX_SCANNED_ENTRIES: usize = 100_000;

/// A file's identity on its machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
}

impl Identity {
    fn of(metadata: &Metadata) -> Self {
        Self {
            device: metadata.dev(),
            inode: metadata.ino(),
        }
    }
}

/// The service's paths as they are now: each resolved through its symlinks. A path that does
/// not exist (yet) owns nothing.
struct Resolved {
    files: Vec<Identity>,
    directories: Vec<(Identity, PathBuf)>,
}

fn resolve(service_paths: &[PathBuf]) -> Resolved {
    let mut resolved = Resolved {
        files: Vec::new(),
        directories: Vec::new(),
    };
    for path in service_paths {
        let Ok(metadata) = std::fs::metadata(path) else {
            continue;
        };
        if metadata.is_dir() {
            resolved
                .directories
                .push((Identity::of(&metadata), path.clone()));
        } else {
            resolved.files.push(Identity::of(&metadata));
        }
    }
    resolved
}

/// Whether the file at `real` (a realpath) with `metadata` (the file's own, through the path or
/// its open descriptor) is one of the service's: one of its files, inside one of its
/// directories, the target of a symlink directly in one of them (a ConfigMap's policy links),
/// or — when it has other hard links — linked from anywhere under one of them. An error means
/// the question could not be answered.
pub(crate) fn owned_by_service(
    service_paths: &[PathBuf],
    real: &Path,
    metadata: &Metadata,
) -> io::Result<bool> {
    let resolved = resolve(service_paths);
    let file = Identity::of(metadata);
    if resolved.files.contains(&file) {
        return Ok(true);
    }
    for ancestor in real.ancestors() {
        let Ok(directory) = std::fs::metadata(ancestor) else {
            continue;
        };
        let directory = Identity::of(&directory);
        if resolved
            .directories
            .iter()
            .any(|(owned, _)| *owned == directory)
        {
            return Ok(true);
        }
    }
    let deep = metadata.nlink() > 1;
    let mut budget = MAX_SCANNED_ENTRIES;
    for (owned, path) in &resolved.directories {
        // A hard link never crosses devices; a symlink may.
        let look_deep = deep && owned.device == file.device;
        if linked_from(path, file, look_deep, &mut budget)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether a symlink directly in `directory` leads to `file`, or (`deep`) any entry below it
/// is `file` itself. Symlinks are not followed into directories, so the walk ends.
fn linked_from(
    directory: &Path,
    file: Identity,
    deep: bool,
    budget: &mut usize,
) -> io::Result<bool> {
    for entry in std::fs::read_dir(directory)? {
        let entry = entry?;
        *budget = budget
            .checked_sub(1)
            .ok_or_else(|| io::Error::other("too many entries in askgate's directories"))?;
        let kind = entry.file_type()?;
        let path = entry.path();
        let found = if kind.is_symlink() {
            std::fs::metadata(&path).is_ok_and(|target| Identity::of(&target) == file)
        } else if !deep {
            false
        } else if kind.is_dir() {
            linked_from(&path, file, deep, budget)?
        } else {
            Identity::of(&entry.metadata()?) == file
        };
        if found {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn owned(service: &[PathBuf], path: &Path) -> bool {
        let real = std::fs::canonicalize(path).unwrap();
        let metadata = std::fs::metadata(&real).unwrap();
        owned_by_service(service, &real, &metadata).unwrap()
    }

    /// `config.json`, `logs/decisions.jsonl`, `policies/..v1/managed.cedar` with the
    /// ConfigMap link `policies/managed.cedar`, and an ordinary `docs/a.md`.
    fn layout(root: &Path) -> Vec<PathBuf> {
        for dir in ["logs", "policies/..v1", "docs"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("config.json"), "{}").unwrap();
        std::fs::write(root.join("logs/decisions.jsonl"), "").unwrap();
        std::fs::write(root.join("policies/..v1/managed.cedar"), "").unwrap();
        symlink("..v1/managed.cedar", root.join("policies/managed.cedar")).unwrap();
        std::fs::write(root.join("docs/a.md"), "").unwrap();
        vec![
            root.join("config.json"),
            root.join("logs"),
            root.join("policies"),
            root.join("spill-not-created-yet"),
        ]
    }

    #[test]
    fn files_directories_and_everything_under_them_are_owned() {
        let dir = tempfile::tempdir().unwrap();
        let service = layout(dir.path());
        assert!(owned(&service, &dir.path().join("config.json")));
        assert!(owned(&service, &dir.path().join("logs/decisions.jsonl")));
        assert!(owned(
            &service,
            &dir.path().join("policies/..v1/managed.cedar")
        ));
        assert!(!owned(&service, &dir.path().join("docs/a.md")));
    }

    #[test]
    fn hard_links_and_symlink_targets_are_recognized() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let service = layout(root);
        std::fs::hard_link(root.join("config.json"), root.join("docs/config-copy")).unwrap();
        std::fs::hard_link(root.join("logs/decisions.jsonl"), root.join("docs/log")).unwrap();
        assert!(owned(&service, &root.join("docs/config-copy")));
        assert!(
            owned(&service, &root.join("docs/log")),
            "linked from the log dir"
        );
        // A policy kept outside the policy directory, linked into it.
        std::fs::write(root.join("docs/elsewhere.cedar"), "").unwrap();
        symlink(
            root.join("docs/elsewhere.cedar"),
            root.join("policies/linked.cedar"),
        )
        .unwrap();
        assert!(owned(&service, &root.join("docs/elsewhere.cedar")));
        // An ordinary file with another hard link of its own is not the service's.
        std::fs::hard_link(root.join("docs/a.md"), root.join("docs/b.md")).unwrap();
        assert!(!owned(&service, &root.join("docs/a.md")));
    }

    #[test]
    fn a_service_directory_configured_through_a_symlink_is_the_directory_it_names() {
        let dir = tempfile::tempdir().unwrap();
        layout(dir.path());
        symlink(dir.path().join("logs"), dir.path().join("logs-link")).unwrap();
        let through_link = vec![dir.path().join("logs-link")];
        assert!(owned(
            &through_link,
            &dir.path().join("logs/decisions.jsonl")
        ));
        assert!(!owned(&through_link, &dir.path().join("docs/a.md")));
    }
}
