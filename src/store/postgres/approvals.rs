//! store::postgres::approvals: the approval books of a fleet, as rows of `approvals`. Every
//! change of status is one conditional `UPDATE` (so exactly one replica claims, refuses,
//! withdraws, expires or fails an approval; a vote is appended and, when it completes the
//! quorum, claims the approval in that same statement) that announces the id on the approvals channel in
//! the same statement; waiters wake on it and read the row (the row is the truth; they also
//! look every [`POLL`]). The caps are counted under a transaction-scoped advisory lock, so
//! replicas admitting at once cannot pass them together. A vote or a refusal commits only when
//! this replica can read the row it takes (a held call a newer version wrote stays pending).
//! It must not log, re-decide or run.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use time::OffsetDateTime;
use tokio_postgres::Row;

use super::fleet::Fleet;
use crate::store::approvals::{
    admitted, closed_status, is_approval_id, tally, ApprovalBook, ApprovalError, ApprovalLimits,
    ApprovalStatus, ApprovalView, Ballot, Claim, CreateError, Held, Now, Page, PendingCall, Sweep,
    ToLog, Voted, Withdrawal, OVERDUE_GRACE,
};
use crate::store::StoreError;

/// How often a waiter reads its row even without a wake-up (the fallback of `LISTEN`).
pub const POLL: Duration = Duration::from_millis(500);

/// The advisory lock key under which the caps are counted and a new approval is inserted.
const ADMIT_LOCK: i64 = 0x0061_736b_6761_7401;

/// The most account events kept (each is small); older ones go after an hour anyway.
const ACCOUNT_EVENTS_KEPT: i64 = 100_000;

/// The columns a view is read from.
const VIEW_COLUMNS: &str =
    "id, seq, decision_id, status, view, approved_by, result, expires_at, quorum, votes, escalated";

/// Whether one more approval completes the row's quorum (its approvals counted in `votes`).
const COMPLETES: &str = "quorum <= 1 + (SELECT count(*) FROM jsonb_array_elements(votes) AS v \
     WHERE v->>'vote' = 'approve')";

/// `WITH changed AS (<update … RETURNING id …>)` announced on the approvals channel.
fn announced(update: &str, returning: &str) -> String {
    format!(
        "WITH changed AS ({update} RETURNING {returning}) \
         SELECT changed.*, pg_notify('askgate_approvals', changed.id) FROM changed"
    )
}

/// Expires every pending approval that is due, queueing its record to be logged.
const EXPIRE_DUE: &str = "UPDATE approvals SET status = 'expired', open = false, call = NULL, \
     finished_at = $1, unlogged = 'expired' WHERE status = 'pending' AND expires_at <= $1";

pub struct PgApprovals {
    fleet: Arc<Fleet>,
    limits: ApprovalLimits,
}

impl PgApprovals {
    pub fn new(fleet: Arc<Fleet>, limits: ApprovalLimits) -> Self {
        Self { fleet, limits }
    }

    fn store(&self, error: StoreError) -> ApprovalError {
        ApprovalError::Store(error)
    }

    async fn row(&self, id: &str) -> Result<Option<Row>, StoreError> {
        let client = self.fleet.client().await?;
        let sql = format!("SELECT {VIEW_COLUMNS} FROM approvals WHERE id = $1");
        self.fleet.timed(client.query_opt(&sql, &[&id])).await
    }

    /// Why a conditional change found no pending approval `id`: unknown, or closed (409).
    async fn not_pending(&self, id: &str, now: OffsetDateTime) -> ApprovalError {
        match self.row(id).await {
            Ok(Some(row)) => match view_of(&row, now) {
                Ok(view) => ApprovalError::Closed {
                    id: id.to_string(),
                    status: closed_status(view.status, &view),
                },
                Err(error) => self.store(error),
            },
            Ok(None) => ApprovalError::unknown(id),
            Err(error) => self.store(error),
        }
    }

    /// Takes pending approval `id` out of pending as refused, `ballot` (the refusal) kept.
    async fn refuse_pending(
        &self,
        id: &str,
        ballot: &Ballot,
        now: OffsetDateTime,
    ) -> Result<Claim, ApprovalError> {
        let sql = announced(
            "UPDATE approvals SET status = 'refused', approved_by = $2, claimed_by = $3, \
             started_at = $4, votes = votes || $5::jsonb \
             WHERE id = $1 AND status = 'pending' AND expires_at > $4",
            "id, decision_id, view, call",
        );
        let replica = self.fleet.replica();
        let votes = encoded(&self.fleet, &[ballot]).map_err(|e| self.store(e))?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
            [&id, &ballot.by, &replica, &now, &votes];
        let claim = self
            .taken(&sql, &params, |rows| {
                rows.first().map(|row| self.claim_of(id, row)).transpose()
            })
            .await?;
        match claim {
            Some(claim) => Ok(claim),
            None => Err(self.not_pending(id, now).await),
        }
    }

    /// Runs `sql` (a change announced on the channel) in a transaction that commits only when
    /// `read` accepts the rows it returned: a row this replica cannot read (a held call written
    /// by a newer version) is left exactly as it was — still pending, its votes unchanged, no
    /// wake-up sent — for a replica that can run it, and the caller gets the store error.
    async fn taken<T>(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        read: impl FnOnce(&[Row]) -> Result<T, ApprovalError>,
    ) -> Result<T, ApprovalError> {
        let mut client = self.fleet.client().await.map_err(|e| self.store(e))?;
        let transaction = self
            .fleet
            .timed(client.transaction())
            .await
            .map_err(|e| self.store(e))?;
        let rows = self
            .fleet
            .timed(transaction.query(sql, params))
            .await
            .map_err(|e| self.store(e))?;
        // On an error the transaction is dropped, which rolls it back.
        let read = read(&rows)?;
        self.fleet
            .timed(transaction.commit())
            .await
            .map_err(|e| self.store(e))?;
        Ok(read)
    }

    /// The claim a row taken out of pending returns (`view` and `call` columns).
    fn claim_of(&self, id: &str, row: &Row) -> Result<Claim, ApprovalError> {
        let view: ApprovalView =
            decoded(&self.fleet, row.get("view")).map_err(|e| self.store(e))?;
        let call: Option<Value> = row.get("call");
        let call: PendingCall =
            decoded(&self.fleet, call.unwrap_or(Value::Null)).map_err(|e| self.store(e))?;
        Ok(Claim {
            id: id.to_string(),
            decision_id: row.get("decision_id"),
            card: view.card,
            call,
            client: view.client,
            bound: view.bound,
        })
    }

    /// Why a vote was not counted: `by` already approved (409, with the tally), or the
    /// approval is unknown or no longer pending.
    async fn not_counted(&self, id: &str, by: &str, now: OffsetDateTime) -> ApprovalError {
        match self.row(id).await {
            Ok(Some(row)) => match view_of(&row, now) {
                Ok(view) if view.status == ApprovalStatus::Pending && view.has_approved(by) => {
                    ApprovalError::AlreadyApproved {
                        id: id.to_string(),
                        by: by.to_string(),
                        tally: tally(&view.votes, view.quorum),
                    }
                }
                Ok(_) => self.not_pending(id, now).await,
                Err(error) => self.store(error),
            },
            Ok(None) => ApprovalError::unknown(id),
            Err(error) => self.store(error),
        }
    }

    /// Runs `sql` (announcing each changed id) and returns the rows it changed.
    async fn changed(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let client = self.fleet.client().await?;
        self.fleet.timed(client.query(sql, params)).await
    }

    async fn swept(&self, now: OffsetDateTime) -> Result<Sweep, StoreError> {
        let mut sweep = Sweep::default();
        self.changed(&announced(EXPIRE_DUE, "id"), &[&now]).await?;
        // Runs past the deadline and its grace, of this replica or of one whose lease lapsed
        // (it died mid-run): failed, never run again (the call may have reached the upstream).
        let late = self.limits.run_deadline + OVERDUE_GRACE;
        let late_ms = millis(late);
        let message = format!(
            "the approved work did not report back within {} s; the call may or may not have reached the upstream",
            late.as_secs()
        );
        let result = crate::executor::result::error_json("deadline", &message);
        let overdue = announced(
            "UPDATE approvals SET status = 'failed', open = false, call = NULL, result = $2, \
             finished_at = $1 WHERE status IN ('running', 'refused') AND open \
             AND started_at < $1::timestamptz - $3::bigint * interval '1 millisecond' \
             AND (claimed_by = $4 OR NOT EXISTS (SELECT 1 FROM replicas r \
                  WHERE r.id = approvals.claimed_by AND r.lease_until > now()))",
            "id, decision_id",
        );
        let replica = self.fleet.replica();
        for row in self
            .changed(&overdue, &[&now, &result, &late_ms, &replica])
            .await?
        {
            sweep.overdue.push((row.get("id"), row.get("decision_id")));
        }
        // Calls held open by a replica that went away: nobody would receive their result.
        let why = "the replica holding the call went away before anyone answered";
        let result = crate::executor::result::error_json("withdrawn", why);
        let orphaned = announced(
            "UPDATE approvals SET status = 'withdrawn', open = false, call = NULL, result = $2, \
             finished_at = $1, unlogged = $3 WHERE status = 'pending' AND held_by IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM replicas r \
                  WHERE r.id = approvals.held_by AND r.lease_until > now())",
            "id",
        );
        let unlogged = format!("withdrawn:{why}");
        self.changed(&orphaned, &[&now, &result, &unlogged]).await?;
        // Records still to be logged: exactly one sweeper takes each.
        let taken = self
            .changed(
                "UPDATE approvals SET unlogged = NULL FROM (SELECT id, unlogged FROM approvals \
                 WHERE unlogged IS NOT NULL FOR UPDATE SKIP LOCKED) AS taken \
                 WHERE approvals.id = taken.id \
                 RETURNING approvals.id, approvals.decision_id, taken.unlogged",
                &[],
            )
            .await?;
        for row in taken {
            let (id, decision_id): (String, String) = (row.get("id"), row.get("decision_id"));
            let unlogged: String = row.get("unlogged");
            match unlogged.split_once(':') {
                Some(("withdrawn", why)) => sweep.withdrawn.push(Withdrawal {
                    id,
                    decision_id,
                    why: why.to_string(),
                }),
                _ => sweep.expired.push((id, decision_id)),
            }
        }
        // Finished approvals past the retention, or beyond the count cap.
        let retention_ms = millis(self.limits.retention);
        let kept = i64::try_from(self.limits.max_pending).unwrap_or(i64::MAX);
        self.changed(
            "DELETE FROM approvals WHERE NOT open AND unlogged IS NULL AND \
             (finished_at < $1::timestamptz - $2::bigint * interval '1 millisecond' OR id IN \
              (SELECT id FROM approvals WHERE NOT open ORDER BY finished_at DESC OFFSET $3)) \
             RETURNING id",
            &[&now, &retention_ms, &kept],
        )
        .await?;
        // Account events every replica applied long ago (a replica away for longer clears
        // its view when it comes back), and beyond the count bound.
        self.changed(
            "DELETE FROM account_events WHERE seq IN (SELECT seq FROM account_events \
             WHERE at < now() - interval '1 hour' \
             UNION (SELECT seq FROM account_events ORDER BY seq DESC OFFSET $1)) RETURNING seq",
            &[&ACCOUNT_EVENTS_KEPT],
        )
        .await?;
        // Plans past their expiry.
        self.changed(
            "DELETE FROM plans WHERE expires_at <= now() RETURNING token",
            &[],
        )
        .await?;
        // Console sessions past their expiry.
        self.changed(
            "DELETE FROM console_sessions WHERE expires_at <= $1 RETURNING token",
            &[&now],
        )
        .await?;
        Ok(sweep)
    }

    async fn requeue(&self, rows: Vec<(String, String)>) {
        for (id, unlogged) in rows {
            let requeued = self
                .changed(
                    "UPDATE approvals SET unlogged = $2 WHERE id = $1 RETURNING id",
                    &[&id, &unlogged],
                )
                .await;
            if let Err(error) = requeued {
                tracing::error!(%error, approval = %id, "an unlogged record could not be queued again");
            }
        }
    }
}

#[async_trait]
impl ApprovalBook for PgApprovals {
    fn limits(&self) -> &ApprovalLimits {
        &self.limits
    }

    async fn create(
        &self,
        view: ApprovalView,
        call: PendingCall,
        decision_id: &str,
        held_open: bool,
        now: OffsetDateTime,
    ) -> Result<ApprovalView, CreateError> {
        let fleet = &self.fleet;
        let bytes = call.intake.call.held_bytes();
        let view_json = encoded(fleet, &view)?;
        let call_json = encoded(fleet, &call)?;
        let mut client = fleet.client().await?;
        let transaction = fleet.timed(client.transaction()).await?;
        fleet
            .timed(transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&ADMIT_LOCK]))
            .await?;
        fleet
            .timed(transaction.execute(EXPIRE_DUE, &[&now]))
            .await?;
        let counted = fleet
            .timed(transaction.query_one(
                "SELECT count(*), coalesce(sum(bytes), 0)::bigint, \
                 count(*) FILTER (WHERE requested_by = $1), \
                 coalesce(sum(bytes) FILTER (WHERE requested_by = $1), 0)::bigint \
                 FROM approvals WHERE open",
                &[&view.requested_by],
            ))
            .await?;
        let held = |count: usize, bytes: usize| Held {
            count: usize::try_from(counted.get::<_, i64>(count)).unwrap_or(usize::MAX),
            bytes: u64::try_from(counted.get::<_, i64>(bytes)).unwrap_or(u64::MAX),
        };
        admitted(
            &self.limits,
            &view.requested_by,
            held(0, 1),
            held(2, 3),
            bytes,
        )?;
        let held_by = held_open.then(|| fleet.replica().to_string());
        let stored_bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        fleet
            .timed(transaction.execute(
                "INSERT INTO approvals (id, decision_id, requested_by, status, view, call, bytes, \
                 expires_at, held_by, open, quorum) \
                 VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8, true, $9)",
                &[
                    &view.id,
                    &decision_id,
                    &view.requested_by,
                    &view_json,
                    &call_json,
                    &stored_bytes,
                    &view.expires_at,
                    &held_by,
                    &i16::from(view.quorum),
                ],
            ))
            .await?;
        fleet.timed(transaction.commit()).await?;
        Ok(view)
    }

    async fn view(&self, id: &str, now: OffsetDateTime) -> Result<ApprovalView, ApprovalError> {
        if !is_approval_id(id) {
            return Err(ApprovalError::unknown(id));
        }
        match self.row(id).await.map_err(|e| self.store(e))? {
            Some(row) => view_of(&row, now).map_err(|e| self.store(e)),
            None => Err(ApprovalError::unknown(id)),
        }
    }

    async fn owner(&self, id: &str, _now: OffsetDateTime) -> Result<Option<String>, ApprovalError> {
        if !is_approval_id(id) {
            return Err(ApprovalError::unknown(id));
        }
        let client = self.fleet.client().await.map_err(|e| self.store(e))?;
        let row = self
            .fleet
            .timed(client.query_opt("SELECT requested_by FROM approvals WHERE id = $1", &[&id]))
            .await
            .map_err(|e| self.store(e))?;
        Ok(row.map(|row| row.get(0)))
    }

    async fn page(
        &self,
        now: OffsetDateTime,
        cursor: Option<u64>,
        limit: usize,
    ) -> Result<Page, ApprovalError> {
        let client = self.fleet.client().await.map_err(|e| self.store(e))?;
        let after = cursor.map_or(0, |seq| i64::try_from(seq).unwrap_or(i64::MAX));
        let take = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
        let sql = format!(
            "SELECT {VIEW_COLUMNS} FROM approvals WHERE status = 'pending' AND expires_at > $1 \
             AND seq > $2 ORDER BY seq LIMIT $3"
        );
        let rows = self
            .fleet
            .timed(client.query(&sql, &[&now, &after, &take]))
            .await
            .map_err(|e| self.store(e))?;
        let more = rows.len() > limit;
        let mut approvals = Vec::with_capacity(limit);
        let mut last = None;
        for row in rows.iter().take(limit) {
            approvals.push(view_of(row, now).map_err(|e| self.store(e))?);
            last = Some(row.get::<_, i64>("seq"));
        }
        Ok(Page {
            approvals,
            next_cursor: last.filter(|_| more).map(|seq| seq.to_string()),
        })
    }

    async fn decided(
        &self,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<ApprovalView>, ApprovalError> {
        let client = self.fleet.client().await.map_err(|e| self.store(e))?;
        let take = i64::try_from(limit).unwrap_or(i64::MAX);
        let sql = format!(
            "SELECT {VIEW_COLUMNS} FROM approvals WHERE NOT open ORDER BY finished_at DESC LIMIT $1"
        );
        let rows = self
            .fleet
            .timed(client.query(&sql, &[&take]))
            .await
            .map_err(|e| self.store(e))?;
        rows.iter()
            .map(|row| view_of(row, now).map_err(|e| self.store(e)))
            .collect()
    }

    async fn pending_count(&self, now: OffsetDateTime) -> Result<usize, ApprovalError> {
        let client = self.fleet.client().await.map_err(|e| self.store(e))?;
        let row = self
            .fleet
            .timed(client.query_one(
                "SELECT count(*) FROM approvals WHERE status = 'pending' AND expires_at > $1",
                &[&now],
            ))
            .await
            .map_err(|e| self.store(e))?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(usize::MAX))
    }

    async fn vote(
        &self,
        id: &str,
        ballot: Ballot,
        now: OffsetDateTime,
    ) -> Result<Voted, ApprovalError> {
        if !is_approval_id(id) {
            return Err(ApprovalError::unknown(id));
        }
        // One statement counts the vote and, when it completes the quorum, claims the row:
        // racing voters serialize on the row's lock, and each re-reads the votes the one
        // before it committed, so exactly one of them sees the quorum complete.
        let sql = announced(
            &format!(
                "UPDATE approvals SET votes = votes || $2::jsonb, \
                 status = CASE WHEN {COMPLETES} THEN 'running' ELSE 'pending' END, \
                 approved_by = CASE WHEN {COMPLETES} THEN $3 END, \
                 claimed_by = CASE WHEN {COMPLETES} THEN $4 END, \
                 started_at = CASE WHEN {COMPLETES} THEN $5::timestamptz END \
                 WHERE id = $1 AND status = 'pending' AND expires_at > $5 \
                 AND NOT votes @> jsonb_build_array(jsonb_build_object('by', $3::text, 'vote', 'approve'))"
            ),
            "id, decision_id, status, view, CASE WHEN status = 'running' THEN call END AS call, \
             approved_by, result, expires_at, seq, quorum, votes, escalated",
        );
        let votes = encoded(&self.fleet, &[&ballot]).map_err(|e| self.store(e))?;
        let replica = self.fleet.replica();
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
            [&id, &votes, &ballot.by, &replica, &now];
        let voted = self
            .taken(&sql, &params, |rows| {
                let Some(row) = rows.first() else {
                    return Ok(None);
                };
                let status: String = row.get("status");
                if status == ApprovalStatus::Running.as_str() {
                    return Ok(Some(Voted::Claimed(Box::new(self.claim_of(id, row)?))));
                }
                let view = view_of(row, now).map_err(|e| self.store(e))?;
                Ok(Some(Voted::Counted {
                    view: Box::new(view),
                    decision_id: row.get("decision_id"),
                }))
            })
            .await?;
        match voted {
            Some(voted) => Ok(voted),
            None => Err(self.not_counted(id, &ballot.by, now).await),
        }
    }

    async fn retract(&self, id: &str, by: &str, _now: OffsetDateTime) -> bool {
        let sql = announced(
            "UPDATE approvals SET votes = (SELECT coalesce(jsonb_agg(v ORDER BY n), '[]'::jsonb) \
             FROM jsonb_array_elements(votes) WITH ORDINALITY AS e(v, n) \
             WHERE NOT (v->>'by' = $2 AND v->>'vote' = 'approve')) \
             WHERE id = $1 AND status = 'pending' \
             AND votes @> jsonb_build_array(jsonb_build_object('by', $2::text, 'vote', 'approve'))",
            "id",
        );
        match self.changed(&sql, &[&id, &by]).await {
            Ok(rows) => !rows.is_empty(),
            Err(error) => {
                tracing::error!(%error, approval = %id, "an unlogged vote could not be taken back");
                false
            }
        }
    }

    async fn claim_refusal(
        &self,
        id: &str,
        ballot: Ballot,
        now: OffsetDateTime,
    ) -> Result<Claim, ApprovalError> {
        if !is_approval_id(id) {
            return Err(ApprovalError::unknown(id));
        }
        self.refuse_pending(id, &ballot, now).await
    }

    async fn withdraw(
        &self,
        id: &str,
        why: &str,
        now: OffsetDateTime,
    ) -> Result<Withdrawal, ApprovalError> {
        if !is_approval_id(id) {
            return Err(ApprovalError::unknown(id));
        }
        let result = crate::executor::result::error_json("withdrawn", why);
        let sql = announced(
            "UPDATE approvals SET status = 'withdrawn', open = false, call = NULL, result = $2, \
             finished_at = $3 WHERE id = $1 AND status = 'pending' AND expires_at > $3",
            "id, decision_id",
        );
        let rows = self
            .changed(&sql, &[&id, &result, &now])
            .await
            .map_err(|e| self.store(e))?;
        match rows.first() {
            Some(row) => Ok(Withdrawal {
                id: id.to_string(),
                decision_id: row.get("decision_id"),
                why: why.to_string(),
            }),
            None => Err(self.not_pending(id, now).await),
        }
    }

    async fn requeue_withdrawals(&self, withdrawals: Vec<Withdrawal>, _now: OffsetDateTime) {
        let rows = withdrawals
            .into_iter()
            .map(|w| (w.id, format!("withdrawn:{}", w.why)))
            .collect();
        self.requeue(rows).await;
    }

    async fn escalate(&self, asked_by: OffsetDateTime, now: OffsetDateTime) -> Vec<ApprovalView> {
        // One conditional UPDATE: whichever replica's sweeper marks a row escalated sends it.
        let sql = format!(
            "UPDATE approvals SET escalated = true WHERE status = 'pending' AND NOT escalated \
             AND expires_at > $2 AND (view->>'created_at')::timestamptz <= $1 \
             RETURNING {VIEW_COLUMNS}"
        );
        let rows = match self.changed(&sql, &[&asked_by, &now]).await {
            Ok(rows) => rows,
            Err(error) => {
                tracing::warn!(%error, "the approvals to escalate could not be read");
                return Vec::new();
            }
        };
        rows.iter()
            .filter_map(|row| match view_of(row, now) {
                Ok(view) => Some(view),
                Err(error) => {
                    tracing::error!(%error, "an escalated approval does not read back");
                    None
                }
            })
            .collect()
    }

    async fn client_back(
        &self,
        id: &str,
        now: OffsetDateTime,
    ) -> Result<ApprovalView, ApprovalError> {
        let sql = announced(
            "UPDATE approvals SET view = jsonb_set(view, '{client}', '\"waiting\"'), \
             started_at = CASE WHEN status = 'running' AND open THEN $2 ELSE started_at END \
             WHERE id = $1 AND view->>'client' = 'not_yet'",
            "id",
        );
        self.changed(&sql, &[&id, &now])
            .await
            .map_err(|e| self.store(e))?;
        ApprovalBook::view(self, id, now).await
    }

    async fn release(&self, claim: Claim, _now: OffsetDateTime) {
        let call = match serde_json::to_value(&claim.call) {
            Ok(call) => call,
            Err(error) => {
                tracing::error!(%error, approval = %claim.id, "a released call could not be kept");
                return;
            }
        };
        let sql = announced(
            "UPDATE approvals SET status = 'pending', approved_by = NULL, claimed_by = NULL, \
             started_at = NULL, call = $2, votes = CASE WHEN votes->-1->>'by' = approved_by \
             THEN votes - -1 ELSE votes END WHERE id = $1 AND open",
            "id",
        );
        if let Err(error) = self.changed(&sql, &[&claim.id, &call]).await {
            tracing::error!(%error, approval = %claim.id, "a claimed approval could not be released");
        }
    }

    async fn finish(
        &self,
        id: &str,
        status: ApprovalStatus,
        result: Option<Value>,
        now: OffsetDateTime,
    ) -> bool {
        let sql = announced(
            "UPDATE approvals SET status = $2, open = false, call = NULL, result = $3, \
             finished_at = $4 WHERE id = $1 AND open AND status <> 'pending'",
            "id",
        );
        match self
            .changed(&sql, &[&id, &status.as_str(), &result, &now])
            .await
        {
            Ok(rows) => !rows.is_empty(),
            Err(error) => {
                // The run's lease lapses and a sweeper ends it as failed (deadline).
                tracing::error!(%error, approval = %id, "a finished approval could not be recorded");
                false
            }
        }
    }

    async fn wait(
        &self,
        id: &str,
        timeout: Duration,
        now: Now<'_>,
    ) -> Result<ApprovalView, ApprovalError> {
        if !is_approval_id(id) {
            return Err(ApprovalError::unknown(id));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let watch = self.fleet.watch(id);
        loop {
            // Armed before the row is read, so that a change in between still wakes us.
            let notified = watch.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let view = self.view(id, now()).await?;
            if !view.status.is_open() || tokio::time::Instant::now() >= deadline {
                return Ok(view);
            }
            let look = (tokio::time::Instant::now() + POLL).min(deadline);
            let _ = tokio::time::timeout_at(look, notified).await;
        }
    }

    async fn sweep(&self, now: OffsetDateTime) -> Sweep {
        match self.swept(now).await {
            Ok(sweep) => sweep,
            Err(error) => {
                tracing::warn!(%error, "the approvals sweep did not run");
                Sweep::default()
            }
        }
    }

    async fn requeue_expiries(&self, expiries: Vec<ToLog>, _now: OffsetDateTime) {
        let rows = expiries
            .into_iter()
            .map(|(id, _)| (id, "expired".to_string()))
            .collect();
        self.requeue(rows).await;
    }
}

/// The view in a row: the stored view with its current status, approver and result; a
/// pending approval past its expiry shows as expired (the sweeper records it).
fn view_of(row: &Row, now: OffsetDateTime) -> Result<ApprovalView, StoreError> {
    let stored: Value = row.get("view");
    let mut view: ApprovalView = serde_json::from_value(stored).map_err(bad_row)?;
    let status: String = row.get("status");
    view.status = serde_json::from_value(Value::String(status)).map_err(bad_row)?;
    if view.status == ApprovalStatus::Pending && now >= view.expires_at {
        view.status = ApprovalStatus::Expired;
    }
    view.approved_by = row.get("approved_by");
    view.result = row.get("result");
    view.quorum = u8::try_from(row.get::<_, i16>("quorum")).map_err(|_| bad_quorum())?;
    view.votes = serde_json::from_value(row.get("votes")).map_err(bad_row)?;
    view.escalated = row.get("escalated");
    Ok(view)
}

fn bad_row(error: serde_json::Error) -> StoreError {
    StoreError::Refused {
        store: "PostgreSQL".to_string(),
        cause: format!("a stored approval does not read back ({error})"),
    }
}

fn bad_quorum() -> StoreError {
    StoreError::Refused {
        store: "PostgreSQL".to_string(),
        cause: "a stored approval's quorum is out of range".to_string(),
    }
}

fn encoded<T: serde::Serialize>(fleet: &Fleet, value: &T) -> Result<Value, StoreError> {
    serde_json::to_value(value).map_err(|error| StoreError::Refused {
        store: fleet.store.clone(),
        cause: format!("the approval could not be stored ({error})"),
    })
}

fn decoded<T: serde::de::DeserializeOwned>(fleet: &Fleet, value: Value) -> Result<T, StoreError> {
    serde_json::from_value(value).map_err(|error| StoreError::Refused {
        store: fleet.store.clone(),
        cause: format!("a stored approval does not read back ({error})"),
    })
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
