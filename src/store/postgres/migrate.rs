//! store::postgres::migrate: the fleet's schema — embedded, versioned SQL files applied in
//! order at start, one replica at a time (a transaction-scoped advisory lock), each version
//! recorded in `askgate_schema`. A store whose schema is newer than this binary knows is
//! refused: an old replica must not write rows it does not understand.

use super::fleet::Fleet;
use super::OpenError;

/// The migrations, in order; the version of each is its position plus one.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_fleet.sql"),
    include_str!("migrations/0002_account_events.sql"),
    include_str!("migrations/0003_plans.sql"),
    include_str!("migrations/0004_trust.sql"),
    include_str!("migrations/0005_quorum.sql"),
    include_str!("migrations/0006_console_person.sql"),
    include_str!("migrations/0007_usage.sql"),
    include_str!("migrations/0008_usage_refusals_bytes.sql"),
];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i32 = 8;

/// The advisory lock key under which migrations run ("askgate" in ASCII).
const MIGRATION_LOCK: i64 = 0x0061_736b_6761_7465;

/// Applies what is missing and returns the version the store is at.
pub async fn migrated(fleet: &Fleet) -> Result<i32, OpenError> {
    let mut client = fleet.client().await?;
    let transaction = fleet.timed(client.transaction()).await?;
    fleet
        .timed(transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]))
        .await?;
    fleet
        .timed(transaction.batch_execute(
            "CREATE TABLE IF NOT EXISTS askgate_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
        ))
        .await?;
    let found: i32 = fleet
        .timed(transaction.query_one("SELECT coalesce(max(version), 0) FROM askgate_schema", &[]))
        .await?
        .get(0);
    if found > SCHEMA_VERSION {
        return Err(OpenError::NewerSchema {
            store: fleet.store.clone(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        if version <= found {
            continue;
        }
        fleet.timed(transaction.batch_execute(sql)).await?;
        fleet
            .timed(transaction.execute(
                "INSERT INTO askgate_schema (version) VALUES ($1)",
                &[&version],
            ))
            .await?;
        tracing::info!(version, store = %fleet.store, "applied a schema migration");
    }
    fleet.timed(transaction.commit()).await?;
    Ok(SCHEMA_VERSION)
}
