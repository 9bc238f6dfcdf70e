//! Owns reading a `project_write` `local_path` safely (client-facts §10.3, `BoS`): once
//! `local_place` has placed it under the root, it is opened without following a final symlink,
//! re-verified through the descriptor (still under the root, none of askgate's files, the file
//! the decision saw), and read FROM THAT DESCRIPTOR. It must not talk to the network, and its
//! messages name the path as the agent gave it, never one of askgate's absolute paths.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

use super::error::ProjectsError;
use super::local_place::{
    check_location, check_not_service, CheckedLocation, LocalPathRules, Misplaced,
};
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

/// A local file read for an upload.
#[derive(Debug, Clone)]
pub(crate) struct LocalText {
    /// Relative to the root.
    pub(crate) relative: PathBuf,
    pub(crate) content: String,
}

pub(crate) fn refusal(given: &str, text: &str, code: Option<&'static str>) -> ProjectsError {
    ProjectsError::LocalFile {
        message: format!("local_path `{given}` {text}"),
        code,
    }
}

/// Maps an I/O error to the reference's wording (`BoS`).
pub(crate) fn io_refusal(given: &str, error: &std::io::Error) -> ProjectsError {
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

/// Step 3: open read-only, refusing a final symlink and never blocking on a FIFO.
pub(crate) fn open_checked(location: &CheckedLocation) -> Result<File, ProjectsError> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NOFOLLOW | O_NONBLOCK)
        .open(&location.lexical)
        .map_err(|error| io_refusal(&location.given, &error))
}

/// Steps 4–6: the descriptor resolves inside, the path still resolves to the same file
/// (realpath, dev and ino), and it is a regular file within the size limit. Returns the
/// descriptor's metadata.
pub(crate) fn verify_open(
    location: &CheckedLocation,
    file: &File,
) -> Result<std::fs::Metadata, ProjectsError> {
    let given = location.given.as_str();
    let descriptor = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    let opened = std::fs::read_link(&descriptor).map_err(|error| io_refusal(given, &error))?;
    if !opened.starts_with(&location.root_real) {
        return Err(Misplaced::ResolvesOutside.refusal(given));
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
    Ok(by_descriptor)
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

/// The descriptor about to be read is the file the decision saw: same device, inode and size.
/// A decision that saw no file lets none be read.
fn check_decided(
    location: &CheckedLocation,
    metadata: &std::fs::Metadata,
    decided: Option<LocalFileStat>,
) -> Result<(), ProjectsError> {
    let now = (metadata.dev(), metadata.ino(), metadata.len());
    match decided {
        Some(decided) if now == (decided.device, decided.inode, decided.bytes) => Ok(()),
        _ => Err(refusal(
            &location.given,
            "changed after the call was decided",
            None,
        )),
    }
}

/// Every step in order; blocking, so the executor runs it off the async threads. The verified
/// descriptor must be one of no service file, and the file the decision saw (`decided`).
pub(crate) fn read_local_file(
    rules: &LocalPathRules,
    given: &str,
    decided: Option<LocalFileStat>,
) -> Result<LocalText, ProjectsError> {
    let location = check_location(rules, given).map_err(|misplaced| misplaced.refusal(given))?;
    test_seam::reach(LocalPathStage::Checked, &location.lexical);
    let file = open_checked(&location)?;
    let metadata = verify_open(&location, &file)?;
    check_not_service(rules, &location, &metadata).map_err(|misplaced| misplaced.refusal(given))?;
    check_decided(&location, &metadata, decided)?;
    test_seam::reach(LocalPathStage::Verified, &location.lexical);
    let content = read_open(&location, file)?;
    Ok(LocalText {
        relative: location.relative,
        content,
    })
}

#[cfg(test)]
#[path = "local_file_tests.rs"]
mod tests;
