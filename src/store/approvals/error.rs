//! store::approvals::error: why an approval book could not answer — the approval is unknown,
//! it has already ended, or the store failed. The server maps it to its HTTP answer.

use crate::store::StoreError;

/// Why an approval could not be read or moved.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("no approval `{0}`")]
    Unknown(String),
    #[error("approval `{id}` is already {status}")]
    Closed { id: String, status: String },
    #[error("{0}")]
    Store(#[from] StoreError),
}
