//! Owns reading a `project_write` `local_path` safely (client-facts §10.3, `BoS`): inside the
//! working directory lexically and by realpath, opened without following a final symlink,
//! re-verified through the descriptor, and read FROM THAT DESCRIPTOR; it must not talk to the
//! network.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use super::error::ProjectsError;
use super::test_seam::{self, LocalPathStage};
use crate::facts::observations::LocalFileStat;

/// open(2) flags of the target platform (their numbers differ between architectures).
pub(crate) const O_NOFOLLOW: i32 = libc::O_NOFOLLOW;
pub(crate) const O_NONBLOCK: i32 = libc::O_NONBLOCK;
/// Largest `local_path` file: 25 MiB.
pub(crate) const LOCAL_FILE_MAX_BYTES: u64 = 26_214_400;

/// The errno values named in the reference's error mapping, as the target platform numbers them.
const ERRNO_NAMES: &[(i32, &str)] = &[
    (libc::EPERM, "EPERM"),
    (libc::ENOENT, "ENOENT"),
    (libc::ENXIO, "ENXIO"),
    (libc::EACCES, "EACCES"),
    (libc::ENOTDIR, "ENOTDIR"),
    (libc::EISDIR, "EISDIR"),
    (libc::ENAMETOOLONG, "ENAMETOOLONG"),
    (libc::ELOOP, "ELOOP"),
    (libc::EOPNOTSUPP, "EOPNOTSUPP"),
];

/// The errno name of an I/O error, when it is one the reference maps.
pub(crate) fn error_code(error: &std::io::Error) -> Option<&'static str> {
    let number = error.raw_os_error()?;
    ERRNO_NAMES
        .iter()
        .find(|(errno, _)| *errno == number)
        .map(|(_, name)| *name)
}

/// A `local_path` that passed the location checks, before it is opened.
#[derive(Debug, Clone)]
pub(crate) struct CheckedLocation {
    /// As given, for messages.
    pub(crate) given: String,
    /// Absolute and lexically normalized: what gets opened (and reported back).
    pub(crate) lexical: PathBuf,
    /// The realpath seen by the check.
    pub(crate) real: PathBuf,
    /// The working directory's realpath.
    pub(crate) working_real: PathBuf,
}

/// A local file read for an upload.
#[derive(Debug, Clone)]
pub(crate) struct LocalText {
    pub(crate) absolute: PathBuf,
    pub(crate) content: String,
}

fn refusal(given: &str, text: &str, code: Option<&'static str>) -> ProjectsError {
    ProjectsError::LocalFile {
        message: format!("local_path `{given}` {text}"),
        code,
    }
}

/// Maps an I/O error to the reference's wording (`BoS`).
fn io_refusal(given: &str, error: &std::io::Error) -> ProjectsError {
    let code = error_code(error);
    let text = match code {
        Some("ENOENT" | "ENOTDIR" | "ENAMETOOLONG") => {
            return ProjectsError::LocalFile {
                message: format!("no file exists at local_path `{given}`"),
                code,
            };
        }
        Some("EACCES" | "EPERM") => "is not readable",
        Some("EISDIR" | "ENXIO" | "EOPNOTSUPP") => "must be a regular file",
        Some("ELOOP") => "was replaced during the upload",
        _ => return refusal(given, &format!("could not be read: {error}"), code),
    };
    refusal(given, text, code)
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

/// Steps 1–2: inside the working directory lexically, then by realpath.
pub(crate) fn check_location(
    working_dir: &Path,
    given: &str,
) -> Result<CheckedLocation, ProjectsError> {
    let working = std::path::absolute(working_dir).map_err(|error| io_refusal(given, &error))?;
    let working = normalize(&working);
    let lexical = normalize(&working.join(given));
    if !lexical.starts_with(&working) {
        return Err(refusal(given, "must be inside the working directory", None));
    }
    let working_real =
        std::fs::canonicalize(&working).map_err(|error| io_refusal(given, &error))?;
    let real = std::fs::canonicalize(&lexical).map_err(|error| io_refusal(given, &error))?;
    if !real.starts_with(&working_real) {
        return Err(refusal(
            given,
            "resolves outside the working directory",
            None,
        ));
    }
    Ok(CheckedLocation {
        given: given.to_owned(),
        lexical,
        real,
        working_real,
    })
}

/// Step 3: open read-only, refusing a final symlink and never blocking on a FIFO.
pub(crate) fn open_checked(location: &CheckedLocation) -> Result<File, ProjectsError> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NOFOLLOW | O_NONBLOCK)
        .open(&location.lexical)
        .map_err(|error| io_refusal(&location.given, &error))
}

/// Steps 4–6: the descriptor resolves inside, the path still resolves to the same file
/// (realpath, dev and ino), and it is a regular file within the size limit. Returns its size.
pub(crate) fn verify_open(location: &CheckedLocation, file: &File) -> Result<u64, ProjectsError> {
    let given = location.given.as_str();
    let descriptor = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    let opened = std::fs::read_link(&descriptor).map_err(|error| io_refusal(given, &error))?;
    if !opened.starts_with(&location.working_real) {
        return Err(refusal(
            given,
            "resolves outside the working directory",
            None,
        ));
    }
    let replaced = || refusal(given, "was replaced during the upload", None);
    let real_again = std::fs::canonicalize(&location.lexical).map_err(|_| replaced())?;
    if real_again != location.real {
        return Err(replaced());
    }
    let by_path = std::fs::metadata(&real_again).map_err(|_| replaced())?;
    let by_descriptor = file.metadata().map_err(|error| io_refusal(given, &error))?;
    if by_path.dev() != by_descriptor.dev() || by_path.ino() != by_descriptor.ino() {
        return Err(replaced());
    }
    if !by_descriptor.is_file() {
        return Err(refusal(given, "must be a regular file", None));
    }
    too_large(given, by_descriptor.len())?;
    Ok(by_descriptor.len())
}

fn too_large(given: &str, size: u64) -> Result<(), ProjectsError> {
    if size > LOCAL_FILE_MAX_BYTES {
        let text = format!("is {size} bytes, above the {LOCAL_FILE_MAX_BYTES}-byte limit");
        return Err(refusal(given, &text, None));
    }
    Ok(())
}

/// Step 7: reads UTF-8 text from the verified descriptor (never reopening the path), still
/// bounded in case the file grew after the check.
pub(crate) fn read_open(location: &CheckedLocation, file: File) -> Result<String, ProjectsError> {
    let given = location.given.as_str();
    let mut bytes = Vec::new();
    file.take(LOCAL_FILE_MAX_BYTES.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| io_refusal(given, &error))?;
    too_large(given, u64::try_from(bytes.len()).unwrap_or(u64::MAX))?;
    String::from_utf8(bytes).map_err(|_| refusal(given, "is not valid UTF-8 text", None))
}

/// What the decision sees of a `local_path` (blocking): the location checks of steps 1–2, then
/// the device, inode and size of the file it names. Nothing is read.
pub fn stat_local_file(working_dir: &Path, given: &str) -> Result<LocalFileStat, ProjectsError> {
    let location = check_location(working_dir, given)?;
    let metadata = std::fs::metadata(&location.real).map_err(|error| io_refusal(given, &error))?;
    if !metadata.is_file() {
        return Err(refusal(given, "must be a regular file", None));
    }
    Ok(LocalFileStat {
        device: metadata.dev(),
        inode: metadata.ino(),
        bytes: metadata.len(),
    })
}

/// The descriptor about to be read is the file the decision saw: same device, inode and size.
fn check_decided(
    location: &CheckedLocation,
    file: &File,
    decided: Option<LocalFileStat>,
) -> Result<(), ProjectsError> {
    let Some(decided) = decided else {
        return Ok(());
    };
    let given = location.given.as_str();
    let metadata = file.metadata().map_err(|error| io_refusal(given, &error))?;
    let now = (metadata.dev(), metadata.ino(), metadata.len());
    if now != (decided.device, decided.inode, decided.bytes) {
        return Err(refusal(given, "changed after the call was decided", None));
    }
    Ok(())
}

/// Every step in order; blocking, so the executor runs it off the async threads. With
/// `decided`, the verified descriptor must also be the file the decision saw.
pub(crate) fn read_local_file(
    working_dir: &Path,
    given: &str,
    decided: Option<LocalFileStat>,
) -> Result<LocalText, ProjectsError> {
    let location = check_location(working_dir, given)?;
    test_seam::reach(LocalPathStage::Checked, &location.lexical);
    let file = open_checked(&location)?;
    verify_open(&location, &file)?;
    check_decided(&location, &file, decided)?;
    test_seam::reach(LocalPathStage::Verified, &location.lexical);
    let content = read_open(&location, file)?;
    Ok(LocalText {
        absolute: location.lexical,
        content,
    })
}

#[cfg(test)]
#[path = "local_file_tests.rs"]
mod tests;
