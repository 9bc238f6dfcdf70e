//! Owns saving downloaded bytes in the spill directory (mode 0600, never through a symlink) and
//! the reference's file names for them; it must not fetch anything.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::error::ProjectsError;
use super::local_file::{error_code, O_NOFOLLOW};

/// How many characters of a sanitized upload name are kept (the last ones).
const NAME_KEEP_CHARS: usize = 64;

fn is_safe(character: char) -> bool {
    character.is_ascii_alphanumeric() || matches!(character, '.' | '_' | '-')
}

/// `project-doc-<uuid sanitized>.txt`.
pub(crate) fn doc_file_name(uuid: &str) -> String {
    let safe: String = uuid
        .chars()
        .map(|character| if is_safe(character) { character } else { '_' })
        .collect();
    format!("project-doc-{safe}.txt")
}

/// `project-file-<uuid>-<name>`: the name keeps `[A-Za-z0-9._-]`, its last 64 characters, no
/// leading dots, and is "file" when nothing is left.
pub(crate) fn upload_file_name(uuid: &str, name: &str) -> String {
    let safe: Vec<char> = name
        .chars()
        .map(|character| if is_safe(character) { character } else { '_' })
        .collect();
    let tail: String = safe
        .iter()
        .skip(safe.len().saturating_sub(NAME_KEEP_CHARS))
        .collect();
    let trimmed = tail.trim_start_matches('.');
    let name = if trimmed.is_empty() { "file" } else { trimmed };
    format!("project-file-{uuid}-{name}")
}

/// Whether `text` is a hyphenated uuid (8-4-4-4-12 hex digits).
pub(crate) fn looks_like_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    let lengths: Vec<usize> = groups.iter().map(|group| group.len()).collect();
    lengths == [8, 4, 4, 4, 12]
        && groups
            .iter()
            .all(|group| group.chars().all(|character| character.is_ascii_hexdigit()))
}

/// Writes `bytes` to `directory/file_name` with mode 0600 and returns the path. The directory
/// is created (0700) if missing; an existing symlink at the name is refused, not followed.
pub(crate) async fn save(
    directory: &Path,
    file_name: String,
    bytes: Vec<u8>,
) -> Result<PathBuf, ProjectsError> {
    let directory = directory.to_path_buf();
    let shown = file_name.clone();
    tokio::task::spawn_blocking(move || write_private(&directory, &file_name, &bytes))
        .await
        .map_err(|error| ProjectsError::Save {
            file: shown,
            message: error.to_string(),
            code: None,
        })?
}

fn write_private(
    directory: &Path,
    file_name: &str,
    bytes: &[u8],
) -> Result<PathBuf, ProjectsError> {
    let path = directory.join(file_name);
    let fail = |error: std::io::Error| ProjectsError::Save {
        file: path.display().to_string(),
        message: error.to_string(),
        code: error_code(&error),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(directory)
        .map_err(fail)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(O_NOFOLLOW)
        .open(&path)
        .map_err(fail)?;
    // `mode` only applies on creation; an older file keeps its mode unless we set it.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(fail)?;
    file.write_all(bytes).map_err(fail)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_names_are_sanitized_trimmed_and_defaulted() {
        let uuid = "33333333-3333-4333-8333-333333333302";
        assert_eq!(
            upload_file_name(uuid, "logo.png"),
            format!("project-file-{uuid}-logo.png")
        );
        assert_eq!(
            upload_file_name(uuid, "../a b/ü.txt"),
            format!("project-file-{uuid}-_a_b__.txt"),
            "leading dots go after sanitizing"
        );
        assert_eq!(
            upload_file_name(uuid, "..."),
            format!("project-file-{uuid}-file")
        );
        assert_eq!(
            upload_file_name(uuid, ""),
            format!("project-file-{uuid}-file")
        );
        let long = format!("{}{}", "a".repeat(10), "b".repeat(64));
        assert_eq!(
            upload_file_name(uuid, &long),
            format!("project-file-{uuid}-{}", "b".repeat(64))
        );
    }

    #[test]
    fn doc_names_replace_unsafe_characters() {
        assert_eq!(doc_file_name("a/b c"), "project-doc-a_b_c.txt");
    }

    #[test]
    fn uuid_shape_is_checked() {
        assert!(looks_like_uuid("11111111-1111-4111-8111-111111111111"));
        assert!(looks_like_uuid("ABCDEF01-1111-4111-8111-111111111111"));
        assert!(!looks_like_uuid("11111111111141118111111111111111"));
        assert!(!looks_like_uuid("11111111-1111-4111-8111-11111111111g"));
        assert!(!looks_like_uuid("../../etc/passwd"));
    }

    #[tokio::test]
    async fn saved_files_are_private_and_symlinks_are_refused() {
        let directory = tempfile::tempdir().unwrap();
        let spill = directory.path().join("spill");
        let path = save(&spill, "a.txt".to_owned(), b"hi".to_vec())
            .await
            .unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"hi");
        let target = directory.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, spill.join("b.txt")).unwrap();
        let error = save(&spill, "b.txt".to_owned(), b"x".to_vec())
            .await
            .unwrap_err();
        assert!(matches!(
            error,
            ProjectsError::Save {
                code: Some("ELOOP"),
                ..
            }
        ));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
