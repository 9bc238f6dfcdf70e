//! server::mcp::hold: an asked `tools/call` held open until an approver decides or the wait
//! ends. While it waits it reports progress (when the client gave a progress token) and, when
//! the client declared URL-mode elicitation, points the user at the approval. It never sends a
//! form-mode elicitation: the agent's own client can answer those (Claude Code's `Elicitation`
//! hook), so such an answer is not a human approval. The approval itself is only ever decided
//! through the approvals API. When the call stops waiting first (the wait ends, the client
//! cancels or goes away) its approval is withdrawn: nobody would receive the result. When
//! approving a consent card hands the call on to its next approval, the call waits on that.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::call::approval_url;
use super::outcome;
use super::request::Notices;
use crate::server::approving::{next_approval, WAIT_MARGIN};
use crate::server::error::ApiError;
use crate::server::gateway::Pipeline;
use crate::store::approvals::{ApprovalStatus, ApprovalView};
use rmcp::model::{CallToolResult, ContentBlock};

/// How long a call an approver already started may still take after the wait ends.
const RUNNING_GRACE: Duration = Duration::from_secs(60);

/// One held call.
pub struct Hold<'a> {
    pub state: &'a Pipeline,
    pub settings: &'a crate::server::config::mcp::McpSettings,
    pub approval: &'a ApprovalView,
    pub decision_id: &'a str,
    pub notices: Notices<'a>,
    pub progress: Option<ProgressToken>,
    pub cancelled: CancellationToken,
    /// Where the console is reached (`<base_url>/console/approvals/{id}` is an approval's page,
    /// named in progress and in the result).
    pub base_url: String,
}

/// Withdraws the approval the call waits on if the held call is dropped before it settles.
struct Unsettled {
    state: Pipeline,
    id: String,
    why: String,
    armed: bool,
}

impl Drop for Unsettled {
    fn drop(&mut self) {
        if self.armed {
            self.state.withdraw_later(&self.id, &self.why);
        }
    }
}

impl Hold<'_> {
    pub async fn result(self) -> CallToolResult {
        let mut unsettled = Unsettled {
            state: self.state.clone(),
            id: self.approval.id.clone(),
            why: self.why_withdrawn(true),
            armed: true,
        };
        // The elicitation runs in this task, beside the wait, so rmcp sends it on this call's
        // own response stream; it is dropped when the wait ends.
        let elicitation = async {
            self.point_at_approval().await;
            std::future::pending().await
        };
        let followed = tokio::select! {
            followed = self.follow(&mut unsettled) => followed,
            never = elicitation => never,
        };
        unsettled.armed = false;
        match followed {
            Ok((view, before)) => {
                let url = approval_url(&self.base_url, &view.id);
                let mut out = outcome::settled(&view, self.decision_id, &url);
                if let Some(first) = before {
                    out.content.push(ContentBlock::text(format!(
                        "askgate: before it, `{}` approved approval `{}`, which connected \
                         Claude Design for this account",
                        first.approved_by.as_deref().unwrap_or("an approver"),
                        first.id
                    )));
                }
                out
            }
            Err(error) => outcome::error(&format!(
                "askgate lost the approval: {}",
                error.public_message()
            )),
        }
    }

    /// Waits on the approval, and on the approval its call moves to when approving a consent
    /// card hands it on (A2); returns the last one settled, and the consent approval before it.
    async fn follow(
        &self,
        unsettled: &mut Unsettled,
    ) -> Result<(ApprovalView, Option<ApprovalView>), ApiError> {
        let mut current = self.approval.clone();
        let mut before = None;
        loop {
            let span = crate::trace::wait_span(&current.id);
            let view = self.wait(&current).instrument(span.clone()).await?;
            span.record("askgate.approval.status", view.status.as_str());
            let view = self.settle(&current, view).await?;
            let next = (view.status == ApprovalStatus::Completed)
                .then(|| next_approval(view.result.as_ref()))
                .flatten();
            let Some(next) = next else {
                return Ok((view, before));
            };
            let now = self.state.inner().clock.now();
            current = self
                .state
                .inner()
                .approving
                .approvals
                .view(next, now)
                .await?;
            unsettled.id = current.id.clone();
            before = Some(view);
        }
    }

    /// When the wait on `approval` ends: `mcp.approval_wait_seconds` from now, and before the
    /// approval would expire (A12: a wait that ends withdraws it, so its status says the call
    /// stopped waiting, not that nobody answered in time).
    fn deadline(&self, approval: &ApprovalView) -> tokio::time::Instant {
        let now = self.state.inner().clock.now();
        let life = Duration::try_from(approval.expires_at - now)
            .unwrap_or_default()
            .saturating_sub(WAIT_MARGIN);
        tokio::time::Instant::now() + self.settings.approval_wait.min(life)
    }

    /// Waits in slices so progress can be reported between them; gives up at the deadline
    /// (plus a grace for a call already running) or when the client cancels.
    async fn wait(&self, approval: &ApprovalView) -> Result<ApprovalView, ApiError> {
        let deadline = self.deadline(approval);
        let id = &approval.id;
        let mut reported = 0u32;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let slice = left.min(self.settings.progress_every);
            let view = self.wait_slice(id, slice).await?;
            match view.status {
                ApprovalStatus::Pending | ApprovalStatus::Running if !left.is_zero() => {}
                ApprovalStatus::Running => return self.wait_slice(id, RUNNING_GRACE).await,
                // Refused, its record still being logged: the note comes with the end.
                ApprovalStatus::Refused if view.result.is_none() => {
                    return self.wait_slice(id, RUNNING_GRACE).await
                }
                _ => return Ok(view),
            }
            if self.cancelled.is_cancelled() {
                return Ok(view);
            }
            reported += 1;
            self.report(approval, reported).await;
        }
    }

    /// A call that stopped waiting while its approval is still pending withdraws it; when an
    /// approver got there first, their answer is followed as a running call is.
    async fn settle(
        &self,
        approval: &ApprovalView,
        view: ApprovalView,
    ) -> Result<ApprovalView, ApiError> {
        if view.status != ApprovalStatus::Pending {
            return Ok(view);
        }
        let why = self.why_withdrawn(self.cancelled.is_cancelled());
        match self.state.withdraw(&approval.id, &why).await {
            Err(ApiError::ApprovalClosed { .. }) => {
                self.wait_slice(&approval.id, RUNNING_GRACE).await
            }
            answer => answer,
        }
    }

    /// What withdrew the approval, for its record and for an approver who opens it later.
    fn why_withdrawn(&self, cancelled: bool) -> String {
        let who = &self.approval.requested_by;
        let how = if cancelled {
            "its MCP client cancelled the call or went away".to_string()
        } else {
            let wait = self.settings.approval_wait.as_secs();
            format!("it waited {wait} s (`mcp.approval_wait_seconds`) and gave up")
        };
        format!(
            "withdrawn by askgate: the MCP call from `{who}` stopped waiting before an approver \
             answered ({how}), so nobody would receive its result"
        )
    }

    async fn wait_slice(&self, id: &str, slice: Duration) -> Result<ApprovalView, ApiError> {
        let inner = self.state.inner();
        let clock = inner.clock.clone();
        tokio::select! {
            view = inner.approving.approvals.wait(id, slice, move || clock.now()) => Ok(view?),
            () = self.cancelled.cancelled() => Ok(inner.approving.approvals.view(id, inner.clock.now()).await?),
        }
    }

    async fn report(&self, approval: &ApprovalView, reported: u32) {
        let Some(token) = self.progress.clone() else {
            return;
        };
        let progress =
            ProgressNotificationParam::new(token, f64::from(reported)).with_message(format!(
                "waiting for an approver to decide approval `{}` at {}",
                approval.id,
                approval_url(&self.base_url, &approval.id)
            ));
        self.notices.progress(progress).await;
    }

    /// A URL elicitation pointing at the approval, when the client declared URL mode in a
    /// session. Its answer is not an approval: whatever the client says, the call waits for
    /// the approvals API. A stateless 2026-07-28 call is sent nothing (servers send no
    /// requests there; it was offered the link as `input_required` instead).
    async fn point_at_approval(&self) {
        let Some(peer) = self.notices.url_elicitation() else {
            return;
        };
        let id = &self.approval.id;
        let Ok(url) = url::Url::parse(&approval_url(&self.base_url, id)) else {
            return;
        };
        let message = format!(
            "askgate is holding this call until an approver decides approval `{id}`; \
             the approval is at the link."
        );
        let wait = self.settings.approval_wait;
        let answer = peer
            .elicit_url_with_timeout(message, url, id.clone(), Some(wait))
            .await;
        tracing::debug!(?answer, "approval link elicitation answered");
    }
}
