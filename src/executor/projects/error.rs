//! Owns [`ProjectsError`], every way an allowed Projects call can fail, and the redaction of
//! bearer tokens from its text (through `executor::redact`); it must not decide anything or talk to the network.
//!
//! Sentences quoted by client-facts §10 keep the reference's wording and casing; our own
//! messages are lower-case.

use crate::executor::redact::redact_all;

/// A failed Projects call.
#[derive(Debug, thiserror::Error)]
pub enum ProjectsError {
    /// The configuration names no project.
    #[error("No project attached to this session; configure a project uuid")]
    NoProject,
    /// A validated call that lacks what its method needs (a caller bug, never upstream).
    #[error("`{method}` is missing `{field}`")]
    IncompleteCall {
        method: &'static str,
        field: &'static str,
    },
    /// The session route was chosen but there is no session token.
    #[error("the session route needs a session token and none is available")]
    NoSessionToken,
    /// The upstream answered with a non-success status (`ProjectsApiError`); `detail` is empty
    /// or `: <first 200 characters of the body or its error string>`.
    #[error("Projects API: {action} failed (HTTP {status}){detail}")]
    Api {
        action: &'static str,
        status: u16,
        detail: String,
    },
    /// The request never got an HTTP answer (connection, timeout, oversized body).
    #[error("Projects API: {action} failed: {message}")]
    Transport {
        action: &'static str,
        message: String,
    },
    /// The one token refresh after a 401 failed.
    #[error("Projects API: {action} failed: the token refresh after HTTP 401 failed: {message}")]
    Refresh {
        action: &'static str,
        message: String,
    },
    /// A success answer whose body is not what the route returns.
    #[error("Projects API: {action} returned an unreadable body: {message}")]
    InvalidResponse {
        action: &'static str,
        message: String,
    },
    /// No doc or upload has this name; `message` is the reference's full sentence.
    #[error("{message}")]
    NotFound { path: String, message: String },
    /// `project_delete` on an upload.
    #[error(
        "\"{path}\" is a file upload; project_delete only removes text docs, not uploaded files"
    )]
    UploadNotDeletable { path: String },
    /// A raw upload above the 20 MiB in-session download limit.
    #[error("\"{path}\" is {size} bytes, above the 20971520-byte limit for in-session downloads.")]
    DownloadTooLarge { path: String, size: u64 },
    /// Two raw downloads in a row decoded to a size other than `file_size_bytes`.
    #[error(
        "downloaded bytes do not match the reported file size of \"{path}\" \
         ({received} bytes received, {reported} reported)"
    )]
    SizeMismatch {
        path: String,
        received: u64,
        reported: u64,
    },
    /// The raw download named another file, or something that is not a uuid.
    #[error("the download of \"{path}\" returned file `{received}`, not `{requested}`")]
    UuidMismatch {
        path: String,
        requested: String,
        received: String,
    },
    /// A `local_path` check failed; `code` keeps the file-system error code when there is one.
    #[error("{message}")]
    LocalFile {
        message: String,
        code: Option<&'static str>,
    },
    /// Saving a spilled doc or a raw download failed.
    #[error("could not save `{file}`: {message}")]
    Save {
        file: String,
        message: String,
        code: Option<&'static str>,
    },
}

impl ProjectsError {
    /// The HTTP status of an upstream error answer, if this is one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ProjectsError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The same error with every occurrence of each secret replaced by [`crate::executor::redact::REDACTED`].
    pub fn redacted(self, secrets: &[String]) -> ProjectsError {
        let scrub = |text: String| redact_all(&text, secrets);
        match self {
            ProjectsError::Api {
                action,
                status,
                detail,
            } => ProjectsError::Api {
                action,
                status,
                detail: scrub(detail),
            },
            ProjectsError::Transport { action, message } => ProjectsError::Transport {
                action,
                message: scrub(message),
            },
            ProjectsError::Refresh { action, message } => ProjectsError::Refresh {
                action,
                message: scrub(message),
            },
            ProjectsError::InvalidResponse { action, message } => ProjectsError::InvalidResponse {
                action,
                message: scrub(message),
            },
            ProjectsError::NotFound { path, message } => ProjectsError::NotFound {
                path: scrub(path),
                message: scrub(message),
            },
            ProjectsError::UploadNotDeletable { path } => {
                ProjectsError::UploadNotDeletable { path: scrub(path) }
            }
            ProjectsError::DownloadTooLarge { path, size } => ProjectsError::DownloadTooLarge {
                path: scrub(path),
                size,
            },
            ProjectsError::SizeMismatch {
                path,
                received,
                reported,
            } => ProjectsError::SizeMismatch {
                path: scrub(path),
                received,
                reported,
            },
            ProjectsError::UuidMismatch {
                path,
                requested,
                received,
            } => ProjectsError::UuidMismatch {
                path: scrub(path),
                requested: scrub(requested),
                received: scrub(received),
            },
            ProjectsError::LocalFile { message, code } => ProjectsError::LocalFile {
                message: scrub(message),
                code,
            },
            ProjectsError::Save {
                file,
                message,
                code,
            } => ProjectsError::Save {
                file: scrub(file),
                message: scrub(message),
                code,
            },
            other @ (ProjectsError::NoProject
            | ProjectsError::IncompleteCall { .. }
            | ProjectsError::NoSessionToken) => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_replaces_every_occurrence_and_ignores_empty_secrets() {
        let secrets = vec![String::new(), "tok-1".to_owned(), "tok-2".to_owned()];
        assert_eq!(
            redact_all("a tok-1 b tok-1 c tok-2", &secrets),
            "a [redacted-oauth-token] b [redacted-oauth-token] c [redacted-oauth-token]"
        );
        assert_eq!(redact_all("", &secrets), "");
    }

    #[test]
    fn api_error_text_matches_the_reference_shape() {
        let error = ProjectsError::Api {
            action: "detail",
            status: 500,
            detail: ": boom secret".to_owned(),
        }
        .redacted(&["secret".to_owned()]);
        assert_eq!(
            error.to_string(),
            "Projects API: detail failed (HTTP 500): boom [redacted-oauth-token]"
        );
        assert_eq!(error.status(), Some(500));
    }

    #[test]
    fn paths_and_local_file_messages_are_redacted_too() {
        let secrets = ["s3cr3t".to_owned()];
        let error = ProjectsError::UploadNotDeletable {
            path: "s3cr3t.md".to_owned(),
        }
        .redacted(&secrets);
        assert!(!error.to_string().contains("s3cr3t"));
        let error = ProjectsError::LocalFile {
            message: "no file exists at local_path `s3cr3t`".to_owned(),
            code: Some("ENOENT"),
        }
        .redacted(&secrets);
        assert!(matches!(
            error,
            ProjectsError::LocalFile {
                code: Some("ENOENT"),
                ..
            }
        ));
        assert!(!error.to_string().contains("s3cr3t"));
    }
}
