//! store::postgres::usage: the usage counts a fleet shares (issue 36 §2), as rows of
//! `usage_counts` (migration 7). Every [`EVERY`] a replica adds the deltas it counted to its
//! own rows (one statement; a slot whose bucket moved on starts again) and reads the rows the
//! others changed since its last look (by the store's clock, with an overlap, since a row is
//! absolute and reading it twice changes nothing). A round that fails gives its deltas back
//! and leaves the counts to go stale: after `STALE_AFTER` seconds they read unknown, and the
//! limits fail closed. Bounded: [`READ_LIMIT`] rows a round (the rest the next); rows untouched
//! for a day are deleted.

use std::sync::Arc;

use time::OffsetDateTime;

use super::fleet::Fleet;
use crate::state::usage::shared::{Row, EVERY};
use crate::state::usage::Usage;
use crate::store::StoreError;

/// Rows read a round at most.
pub const READ_LIMIT: i64 = 20_000;

/// How far back a round reads again (a transaction can commit a little after its clock).
const OVERLAP_MS: i64 = 2_000;

/// Starts the exchange of `usage` with the store, every [`EVERY`] until the fleet stops.
pub fn start(fleet: Arc<Fleet>, usage: Arc<Usage>, clock: Arc<dyn Fn() -> i64 + Send + Sync>) {
    tokio::spawn(async move {
        let stop = fleet.stopped();
        let mut since: Option<OffsetDateTime> = None;
        let mut overlap = true;
        let mut rounds: u64 = 0;
        let mut failing = false;
        loop {
            match round(&fleet, &usage, since, overlap).await {
                Ok((next, caught_up)) => {
                    if std::mem::take(&mut failing) {
                        tracing::info!("usage counts exchanged with the store again");
                    }
                    since = next.or(since);
                    // A full page goes on from its newest change, without reading back.
                    overlap = caught_up;
                    if caught_up {
                        if let Some(shared) = usage.fleet() {
                            shared.synced(clock());
                        }
                    }
                }
                // Said once when it starts failing, not every second.
                Err(error) if !failing => {
                    failing = true;
                    tracing::warn!(%error, "usage counts not exchanged with the store; limits on them fail closed after a few seconds");
                }
                Err(_) => {}
            }
            rounds += 1;
            if rounds % 60 == 0 {
                if let Err(error) = prune(&fleet).await {
                    tracing::warn!(%error, "old usage rows not deleted");
                }
            }
            tokio::select! {
                () = tokio::time::sleep(EVERY) => {}
                () = stop.cancelled() => break,
            }
        }
    });
}

/// One exchange: this replica's deltas out, the others' changed rows in. Returns the newest
/// change read and whether the read reached the end.
async fn round(
    fleet: &Fleet,
    usage: &Usage,
    since: Option<OffsetDateTime>,
    overlap: bool,
) -> Result<(Option<OffsetDateTime>, bool), StoreError> {
    let Some(shared) = usage.fleet() else {
        return Ok((since, true));
    };
    let deltas = shared.take();
    if let Err(error) = flush(fleet, &deltas).await {
        shared.give_back(deltas);
        return Err(error);
    }
    let (rows, newest, caught_up) = read(fleet, since, overlap).await?;
    let now = OffsetDateTime::now_utc().unix_timestamp();
    shared.apply(&rows, now);
    Ok((newest, caught_up))
}

async fn flush(fleet: &Fleet, deltas: &[Row]) -> Result<(), StoreError> {
    if deltas.is_empty() {
        return Ok(());
    }
    let principals: Vec<&str> = deltas.iter().map(|row| row.principal.as_str()).collect();
    let widths: Vec<i32> = deltas
        .iter()
        .map(|row| i32::try_from(row.width).unwrap_or(1))
        .collect();
    let slots: Vec<i32> = deltas.iter().map(Row::slot).collect();
    let buckets: Vec<i64> = deltas.iter().map(|row| row.bucket).collect();
    let count = |kind: usize| -> Vec<i32> {
        deltas
            .iter()
            .map(|row| {
                i32::try_from(row.counts.get(kind).copied().unwrap_or(0)).unwrap_or(i32::MAX)
            })
            .collect()
    };
    // Shapes travel as text (`1,2,3`): unnest cannot take an array of arrays.
    let shapes: Vec<String> = deltas
        .iter()
        .map(|row| {
            row.shapes
                .iter()
                .map(|shape| (*shape as i64).to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let client = fleet.client().await?;
    fleet
        .timed(client.execute(
            "INSERT INTO usage_counts AS c \
               (replica, principal, width, slot, bucket, calls, writes, deletes, asks, denies, \
                uploaded, shapes, updated_at) \
             SELECT $1, d.principal, d.width, d.slot, d.bucket, d.calls, d.writes, d.deletes, d.asks, \
                    d.denies, d.uploaded, \
                    coalesce(string_to_array(nullif(d.shapes, ''), ',')::bigint[], '{}'), \
                    clock_timestamp() \
             FROM unnest($2::text[], $3::int[], $4::int[], $5::bigint[], $6::int[], $7::int[], \
                         $8::int[], $9::int[], $10::int[], $11::int[], $12::text[]) \
               AS d(principal, width, slot, bucket, calls, writes, deletes, asks, denies, uploaded, \
                    shapes) \
             ON CONFLICT (replica, principal, width, slot) DO UPDATE SET \
               calls = CASE WHEN c.bucket = EXCLUDED.bucket THEN c.calls + EXCLUDED.calls ELSE EXCLUDED.calls END, \
               writes = CASE WHEN c.bucket = EXCLUDED.bucket THEN c.writes + EXCLUDED.writes ELSE EXCLUDED.writes END, \
               deletes = CASE WHEN c.bucket = EXCLUDED.bucket THEN c.deletes + EXCLUDED.deletes ELSE EXCLUDED.deletes END, \
               asks = CASE WHEN c.bucket = EXCLUDED.bucket THEN c.asks + EXCLUDED.asks ELSE EXCLUDED.asks END, \
               denies = CASE WHEN c.bucket = EXCLUDED.bucket THEN c.denies + EXCLUDED.denies ELSE EXCLUDED.denies END, \
               uploaded = CASE WHEN c.bucket = EXCLUDED.bucket \
                 THEN least(c.uploaded::bigint + EXCLUDED.uploaded, 2147483647)::integer \
                 ELSE EXCLUDED.uploaded END, \
               shapes = CASE WHEN c.bucket = EXCLUDED.bucket \
                 THEN (c.shapes || EXCLUDED.shapes)[1:64] ELSE EXCLUDED.shapes END, \
               bucket = GREATEST(c.bucket, EXCLUDED.bucket), \
               updated_at = EXCLUDED.updated_at",
            &[
                &fleet.replica(),
                &principals,
                &widths,
                &slots,
                &buckets,
                &count(0),
                &count(1),
                &count(2),
                &count(3),
                &count(4),
                &count(5),
                &shapes,
            ],
        ))
        .await?;
    Ok(())
}

/// The others' rows changed since `since` (less the overlap, if `overlap`), oldest change
/// first.
async fn read(
    fleet: &Fleet,
    since: Option<OffsetDateTime>,
    overlap: bool,
) -> Result<(Vec<Row>, Option<OffsetDateTime>, bool), StoreError> {
    let since = since.unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let overlap_ms = if overlap { OVERLAP_MS } else { 0 };
    let client = fleet.client().await?;
    let found = fleet
        .timed(client.query(
            "SELECT replica, principal, width, bucket, calls, writes, deletes, asks, denies, uploaded, \
                    shapes, updated_at \
             FROM usage_counts \
             WHERE replica <> $1 AND updated_at > $2::timestamptz - $3::bigint * interval '1 millisecond' \
             ORDER BY updated_at LIMIT $4",
            &[&fleet.replica(), &since, &overlap_ms, &READ_LIMIT],
        ))
        .await?;
    let caught_up = i64::try_from(found.len()).unwrap_or(i64::MAX) < READ_LIMIT;
    let mut newest = None;
    let mut rows = Vec::with_capacity(found.len());
    for row in found {
        let count = |name: &str| u32::try_from(row.get::<_, i32>(name)).unwrap_or(0);
        let shapes: Vec<i64> = row.get("shapes");
        newest = Some(row.get::<_, OffsetDateTime>("updated_at"));
        rows.push(Row {
            replica: row.get("replica"),
            principal: row.get("principal"),
            width: i64::from(row.get::<_, i32>("width")),
            bucket: row.get("bucket"),
            counts: [
                count("calls"),
                count("writes"),
                count("deletes"),
                count("asks"),
                count("denies"),
                count("uploaded"),
            ],
            shapes: shapes.into_iter().map(|shape| shape as u64).collect(),
        });
    }
    Ok((rows, newest, caught_up))
}

async fn prune(fleet: &Fleet) -> Result<(), StoreError> {
    let client = fleet.client().await?;
    fleet
        .timed(client.execute(
            "DELETE FROM usage_counts WHERE updated_at < now() - interval '1 day'",
            &[],
        ))
        .await?;
    Ok(())
}
