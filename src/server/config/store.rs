//! server::config::store: where shared state lives (`store`: `memory`, the default, or a
//! PostgreSQL URL that makes this process a replica of a fleet) and this replica's name
//! (`replica_id`, which also names its decision-log files). A URL is never repeated with its
//! password in an error.

use super::ConfigError;
use crate::audit::files::ReplicaId;

/// `store` and `replica_id`, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreSettings {
    /// The fleet's PostgreSQL URL; `None`: shared state lives in this process.
    pub url: Option<String>,
    /// This replica's id: its log files are `decisions-<replica>-…` and the store knows it by
    /// it. `None`: today's unnamed files and, in a fleet, a generated id.
    pub replica_id: Option<ReplicaId>,
}

impl StoreSettings {
    pub fn validate(store: Option<&str>, replica_id: Option<&str>) -> Result<Self, ConfigError> {
        let url = match store.map(str::trim) {
            None | Some("" | "memory") => None,
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Some(url.to_string())
            }
            Some(other) => {
                return Err(ConfigError::new(
                    "store",
                    format!(
                        "`{}` is not `memory` or a postgres:// URL",
                        crate::store::postgres::redacted(other)
                    ),
                ))
            }
        };
        let replica_id = replica_id
            .map(ReplicaId::parse)
            .transpose()
            .map_err(|error| {
                ConfigError::new(
                    "replica_id",
                    format!("`{}` is not valid: {}", error.given, error.reason),
                )
            })?;
        Ok(Self { url, replica_id })
    }
}
