//! store::postgres::attestations: hook attestations as rows of `attestations`, so the hook may
//! post to one replica and its MCP call reach another and still be decided on the attested facts
//! (issue 32 §3). Bounded like the in-memory book: an attestation lives `TTL` by the store's
//! clock, a principal keeps at most `MAX_PER_PRINCIPAL`, and past `MAX_TOTAL` the oldest
//! attestation of the principal holding the most goes. Taking is one `DELETE … RETURNING`, so an
//! attestation is taken once across the fleet.

use std::sync::Arc;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::fleet::Fleet;
use crate::store::attestations::{
    found, Attestation, AttestationBook, AttestedCall, Evicted, Found, MAX_PER_PRINCIPAL,
    MAX_TOTAL, TTL,
};
use crate::store::rows::{self, AttestationV1};
use crate::store::StoreError;

pub struct PgAttestations {
    fleet: Arc<Fleet>,
}

impl PgAttestations {
    pub fn new(fleet: Arc<Fleet>) -> Self {
        Self { fleet }
    }
}

fn ttl_ms() -> i64 {
    i64::try_from(TTL.whole_milliseconds()).unwrap_or(i64::MAX)
}

#[async_trait]
impl AttestationBook for PgAttestations {
    async fn attest(
        &self,
        principal: &str,
        tool_use_id: &str,
        attestation: Attestation,
    ) -> Result<Option<Evicted>, StoreError> {
        let fleet = &self.fleet;
        let body =
            rows::encode::<_, AttestationV1>(&attestation).map_err(|e| fleet.unavailable(e))?;
        let per_principal = i64::try_from(MAX_PER_PRINCIPAL).unwrap_or(i64::MAX);
        let total = i64::try_from(MAX_TOTAL).unwrap_or(i64::MAX);
        let mut client = fleet.client().await?;
        let transaction = fleet.timed(client.transaction()).await?;
        fleet
            .timed(transaction.execute(
                "DELETE FROM attestations \
                 WHERE received_at <= now() - $1::bigint * interval '1 millisecond'",
                &[&ttl_ms()],
            ))
            .await?;
        fleet
            .timed(transaction.execute(
                "INSERT INTO attestations (principal, tool_use_id, attestation, received_at) \
                 VALUES ($1, $2, $3, now()) \
                 ON CONFLICT (principal, tool_use_id) DO UPDATE \
                 SET attestation = EXCLUDED.attestation, received_at = EXCLUDED.received_at",
                &[&principal, &tool_use_id, &body],
            ))
            .await?;
        fleet
            .timed(transaction.execute(
                "DELETE FROM attestations WHERE (principal, tool_use_id) IN \
                 (SELECT principal, tool_use_id FROM attestations WHERE principal = $1 \
                  ORDER BY received_at DESC, tool_use_id OFFSET $2)",
                &[&principal, &per_principal],
            ))
            .await?;
        let evicted = fleet
            .timed(transaction.query_opt(
                "DELETE FROM attestations WHERE (SELECT count(*) FROM attestations) > $1 \
                 AND (principal, tool_use_id) = \
                 (SELECT principal, tool_use_id FROM attestations WHERE principal = \
                    (SELECT principal FROM attestations GROUP BY principal \
                     ORDER BY count(*) DESC, principal LIMIT 1) \
                  ORDER BY received_at, tool_use_id LIMIT 1) \
                 RETURNING principal",
                &[&total],
            ))
            .await?;
        fleet.timed(transaction.commit()).await?;
        Ok(evicted.map(|row| Evicted {
            principal: row.get(0),
        }))
    }

    async fn take(
        &self,
        principal: &str,
        tool_use_id: &str,
        call: &AttestedCall<'_>,
        _now: OffsetDateTime,
    ) -> Result<Found, StoreError> {
        let fleet = &self.fleet;
        let client = fleet.client().await?;
        let taken = fleet
            .timed(client.query_opt(
                "DELETE FROM attestations WHERE principal = $1 AND tool_use_id = $2 \
                 AND received_at > now() - $3::bigint * interval '1 millisecond' \
                 RETURNING attestation",
                &[&principal, &tool_use_id, &ttl_ms()],
            ))
            .await?;
        if let Some(row) = taken {
            let body: serde_json::Value = row.get(0);
            // A row this version cannot read attests nothing it can trust.
            return Ok(match rows::decode::<AttestationV1, Attestation>(body) {
                Ok(attestation) => found(attestation, call),
                Err(_) => Found::Mismatched,
            });
        }
        let foreign: bool = fleet
            .timed(client.query_one(
                "SELECT EXISTS (SELECT 1 FROM attestations WHERE tool_use_id = $1 \
                 AND principal <> $2 \
                 AND received_at > now() - $3::bigint * interval '1 millisecond')",
                &[&tool_use_id, &principal, &ttl_ms()],
            ))
            .await?
            .get(0);
        Ok(if foreign {
            Found::Foreign
        } else {
            Found::Missing
        })
    }
}
