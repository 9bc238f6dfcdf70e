//! Owns where a `project_write` `local_path` may be read (N1): only under
//! `projects.local_path_root`, inside it lexically and by realpath (client-facts §10.3 steps
//! 1–2), and never one of askgate's own files; and what the decision sees of it (its place and
//! stat). It reads metadata only, never contents, and decides nothing: the policies refuse
//! every place but `under_root`.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::error::ProjectsError;
use super::local_file::{io_refusal, refusal};
use super::service_files::owned_by_service;
use crate::facts::observations::{LocalFileStat, LocalPathPlace};

/// The configuration key named in refusals.
const ROOT_KEY: &str = "projects.local_path_root";

/// Where a `local_path` may be read from.
#[derive(Debug, Clone, Default)]
pub struct LocalPathRules {
    /// `projects.local_path_root`; `None` refuses every `local_path`.
    pub root: Option<PathBuf>,
    /// askgate's own files and directories, never read even under the root.
    pub service_paths: Vec<PathBuf>,
}

/// A `local_path` that passed the location checks, before it is opened.
#[derive(Debug, Clone)]
pub(crate) struct CheckedLocation {
    /// As given, for messages.
    pub(crate) given: String,
    /// Absolute and lexically normalized: what gets opened.
    pub(crate) lexical: PathBuf,
    /// The same path relative to the root: what the result reports.
    pub(crate) relative: PathBuf,
    /// The realpath seen by the check.
    pub(crate) real: PathBuf,
    /// The root's realpath.
    pub(crate) root_real: PathBuf,
}

/// Why a `local_path` is not somewhere it may be read.
#[derive(Debug)]
pub(crate) enum Misplaced {
    RootUnset,
    /// The root itself cannot be resolved (removed since startup, unreadable).
    RootUnresolved(std::io::Error),
    Outside,
    ResolvesOutside,
    /// Lexically under the root, but the path does not resolve.
    Unresolved(std::io::Error),
    ServiceFile,
    /// Whether it is one of askgate's files could not be established.
    ServiceUnchecked(std::io::Error),
}

impl Misplaced {
    /// The place the decision sees.
    pub(crate) fn place(&self) -> LocalPathPlace {
        match self {
            Self::RootUnset => LocalPathPlace::RootUnset,
            Self::Outside | Self::ResolvesOutside => LocalPathPlace::OutsideRoot,
            Self::ServiceFile => LocalPathPlace::ServiceFile,
            Self::RootUnresolved(_) | Self::Unresolved(_) | Self::ServiceUnchecked(_) => {
                LocalPathPlace::Unresolved
            }
        }
    }

    /// The executor's refusal; never an absolute path of askgate's.
    pub(crate) fn refusal(&self, given: &str) -> ProjectsError {
        let text = match self {
            Self::RootUnset => format!(
                "is not read: askgate reads a local_path only under `{ROOT_KEY}`, which is not set"
            ),
            Self::RootUnresolved(error) => {
                format!("is not read: `{ROOT_KEY}` cannot be resolved ({error})")
            }
            Self::Outside => format!("must be inside `{ROOT_KEY}`"),
            Self::ResolvesOutside => format!("resolves outside `{ROOT_KEY}`"),
            Self::Unresolved(error) => return io_refusal(given, error),
            Self::ServiceFile => "is one of askgate's own files, which are never read".to_owned(),
            Self::ServiceUnchecked(error) => {
                format!("could not be checked against askgate's own files: {error}")
            }
        };
        refusal(given, &text, None)
    }
}

/// `.` and `..` resolved without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// Steps 1–2: a root is configured, and the path is inside it lexically, then by realpath.
pub(crate) fn check_location(
    rules: &LocalPathRules,
    given: &str,
) -> Result<CheckedLocation, Misplaced> {
    let root = rules.root.as_deref().ok_or(Misplaced::RootUnset)?;
    let root = normalize(&std::path::absolute(root).map_err(Misplaced::RootUnresolved)?);
    let lexical = normalize(&root.join(given));
    let relative = lexical
        .strip_prefix(&root)
        .map_err(|_| Misplaced::Outside)?
        .to_path_buf();
    let root_real = std::fs::canonicalize(&root).map_err(Misplaced::RootUnresolved)?;
    let real = std::fs::canonicalize(&lexical).map_err(Misplaced::Unresolved)?;
    if !real.starts_with(&root_real) {
        return Err(Misplaced::ResolvesOutside);
    }
    Ok(CheckedLocation {
        given: given.to_owned(),
        lexical,
        relative,
        real,
        root_real,
    })
}

/// Never one of askgate's own files, whatever name, link or mount leads to it.
pub(crate) fn check_not_service(
    rules: &LocalPathRules,
    location: &CheckedLocation,
    metadata: &std::fs::Metadata,
) -> Result<(), Misplaced> {
    match owned_by_service(&rules.service_paths, &location.real, metadata) {
        Ok(false) => Ok(()),
        Ok(true) => Err(Misplaced::ServiceFile),
        Err(error) => Err(Misplaced::ServiceUnchecked(error)),
    }
}

/// What the decision sees of a `local_path` (blocking): where it lies (steps 1–2 and askgate's
/// own files) and, for a regular file under the root, its device, inode and size. Nothing is
/// read.
pub fn observe_local_path(
    rules: &LocalPathRules,
    given: &str,
) -> (LocalPathPlace, Option<LocalFileStat>) {
    let located = check_location(rules, given).and_then(|location| {
        let metadata = std::fs::metadata(&location.real).map_err(Misplaced::Unresolved)?;
        check_not_service(rules, &location, &metadata)?;
        Ok(metadata)
    });
    match located {
        Ok(metadata) => (
            LocalPathPlace::UnderRoot,
            metadata.is_file().then(|| LocalFileStat {
                device: metadata.dev(),
                inode: metadata.ino(),
                bytes: metadata.len(),
            }),
        ),
        Err(misplaced) => (misplaced.place(), None),
    }
}
