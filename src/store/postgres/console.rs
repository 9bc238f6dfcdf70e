//! store::postgres::console: console sessions as rows of `console_sessions`, so an approver
//! signed in through one replica is signed in on every replica. Bounded like the in-memory
//! book: past `MAX_SESSIONS` the oldest sessions are signed out; expired ones are dropped when
//! met and by the approvals sweep. A row holds the SHA-256 of the cookie token, never the
//! token: reading the table signs nobody in.

use std::sync::Arc;

use async_trait::async_trait;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use super::fleet::Fleet;
use crate::store::console::{ConsoleBook, ConsoleSession, MAX_SESSIONS};
use crate::store::StoreError;

pub struct PgConsole {
    fleet: Arc<Fleet>,
}

impl PgConsole {
    pub fn new(fleet: Arc<Fleet>) -> Self {
        Self { fleet }
    }
}

#[async_trait]
impl ConsoleBook for PgConsole {
    async fn signed_in(
        &self,
        token: &str,
        session: &ConsoleSession,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let fleet = &self.fleet;
        let kept = i64::try_from(MAX_SESSIONS.saturating_sub(1)).unwrap_or(i64::MAX);
        let mut client = fleet.client().await?;
        let transaction = fleet.timed(client.transaction()).await?;
        fleet
            .timed(transaction.execute(
                "DELETE FROM console_sessions WHERE expires_at <= $1 OR token IN \
                 (SELECT token FROM console_sessions ORDER BY created_at DESC OFFSET $2)",
                &[&now, &kept],
            ))
            .await?;
        fleet
            .timed(transaction.execute(
                "INSERT INTO console_sessions \
                 (token, principal, csrf, created_at, expires_at, groups, email) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &hashed(token),
                    &session.principal,
                    &session.csrf,
                    &now,
                    &session.expires_at,
                    &serde_json::json!(session.groups),
                    &session.email,
                ],
            ))
            .await?;
        fleet.timed(transaction.commit()).await
    }

    async fn current(
        &self,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<Option<ConsoleSession>, StoreError> {
        let client = self.fleet.client().await?;
        let row = self
            .fleet
            .timed(client.query_opt(
                "SELECT principal, csrf, expires_at, groups, email FROM console_sessions \
                 WHERE token = $1 AND expires_at > $2",
                &[&hashed(token), &now],
            ))
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let groups: serde_json::Value = row.get(3);
        let groups = serde_json::from_value(groups).map_err(|why| StoreError::Refused {
            store: self.fleet.store.clone(),
            cause: format!("a console session's groups do not read back ({why})"),
        })?;
        Ok(Some(ConsoleSession {
            principal: row.get(0),
            groups,
            email: row.get(4),
            csrf: row.get(1),
            expires_at: row.get(2),
        }))
    }

    async fn signed_out(&self, token: &str) -> Result<(), StoreError> {
        let client = self.fleet.client().await?;
        self.fleet
            .timed(client.execute(
                "DELETE FROM console_sessions WHERE token = $1",
                &[&hashed(token)],
            ))
            .await
            .map(|_| ())
    }
}

/// The token as the table keys it.
fn hashed(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
