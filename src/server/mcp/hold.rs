//! server::mcp::hold: an asked `tools/call` held open until an approver decides or the wait
//! ends. While it waits it reports progress (when the client gave a progress token) and, when
//! the client declared URL-mode elicitation, points the user at the approval. It never sends a
//! form-mode elicitation: the agent's own client can answer those (Claude Code's `Elicitation`
//! hook), so such an answer is not a human approval. The approval itself is only ever decided
//! through the approvals API. When the call stops waiting first (the wait ends, the client
//! cancels or goes away) its approval is withdrawn: nobody would receive the result.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio_util::sync::CancellationToken;

use super::outcome;
use super::request::Notices;
use crate::server::gateway::Pipeline;
use crate::store::approvals::{ApprovalStatus, ApprovalView};
use rmcp::model::CallToolResult;

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
    /// The approval's page in the console, named in progress and in the result.
    pub url: String,
}

/// Withdraws the approval if the held call is dropped before it settles.
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
        let view = tokio::select! {
            view = self.wait() => view,
            never = elicitation => never,
        };
        let view = match view {
            Ok(view) => self.settle(view).await,
            Err(error) => Err(error),
        };
        unsettled.armed = false;
        match view {
            Ok(view) => outcome::settled(&view, self.decision_id, &self.url),
            Err(error) => outcome::error(&format!("askgate lost the approval: {error}")),
        }
    }

    /// Waits in slices so progress can be reported between them; gives up at the deadline
    /// (plus a grace for a call already running) or when the client cancels.
    async fn wait(&self) -> Result<ApprovalView, crate::server::error::ApiError> {
        let deadline = tokio::time::Instant::now() + self.settings.approval_wait;
        let mut reported = 0u32;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let slice = left.min(self.settings.progress_every);
            let view = self.wait_slice(slice).await?;
            match view.status {
                ApprovalStatus::Pending | ApprovalStatus::Running if !left.is_zero() => {}
                ApprovalStatus::Running => return self.wait_slice(RUNNING_GRACE).await,
                // Refused, its record still being logged: the note comes with the end.
                ApprovalStatus::Refused if view.result.is_none() => {
                    return self.wait_slice(RUNNING_GRACE).await
                }
                _ => return Ok(view),
            }
            if self.cancelled.is_cancelled() {
                return Ok(view);
            }
            reported += 1;
            self.report(reported).await;
        }
    }

    /// A call that stopped waiting while its approval is still pending withdraws it; when an
    /// approver got there first, their answer is followed as a running call is.
    async fn settle(
        &self,
        view: ApprovalView,
    ) -> Result<ApprovalView, crate::server::error::ApiError> {
        if view.status != ApprovalStatus::Pending {
            return Ok(view);
        }
        let why = self.why_withdrawn(self.cancelled.is_cancelled());
        match self.state.withdraw(&self.approval.id, &why).await {
            Err(crate::server::error::ApiError::ApprovalClosed { .. }) => {
                self.wait_slice(RUNNING_GRACE).await
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

    async fn wait_slice(
        &self,
        slice: Duration,
    ) -> Result<ApprovalView, crate::server::error::ApiError> {
        let inner = self.state.inner();
        let clock = inner.clock.clone();
        tokio::select! {
            view = inner.approvals.wait(&self.approval.id, slice, move || clock.now()) => Ok(view?),
            () = self.cancelled.cancelled() => Ok(inner.approvals.view(&self.approval.id, inner.clock.now()).await?),
        }
    }

    async fn report(&self, reported: u32) {
        let Some(token) = self.progress.clone() else {
            return;
        };
        let progress =
            ProgressNotificationParam::new(token, f64::from(reported)).with_message(format!(
                "waiting for an approver to decide approval `{}` at {}",
                self.approval.id, self.url
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
        let Ok(url) = url::Url::parse(&self.url) else {
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
