//! server::mcp::call: one `tools/call` through exactly the pipeline of `/v1/design/call` and
//! `/v1/projects/call` — `Pipeline::prepare` (parse, observe, facts) then `Pipeline::handle`
//! (decide, decision log, metrics, executor or a pending approval) — with the outcome turned
//! into a tool result. An ask holds the call ([`super::hold`]); a 2026-07-28 client that takes
//! URL elicitation is first told where to approve (`input_required`, [`super::link`]) and its
//! retry is the call that is held. A call whose `_meta["claudecode/toolUseId"]` matches its
//! caller's hook attestation is decided with the attested session facts
//! ([`McpSession::attest`]).

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, RequestMetaObject};
use serde_json::Value;

use super::held::{HeldCalls, HeldLimit};
use super::hold::Hold;
use super::link::{call_digest, ApprovalLinks, LinkState};
use super::outcome;
use super::request::CallRequest;
use super::schema::{DESIGN, PROJECTS};
use super::session::McpSession;
use crate::server::approving::next_approval;
use crate::server::config::mcp::McpSettings;
use crate::server::gateway::{Arrival, FrontDoor, Handled, Pipeline};
use crate::server::metrics::LinkStep;
use crate::store::approvals::{ApprovalStatus, ApprovalView, ClientWait};
use crate::store::attestations::{AttestedCall, Found};

/// What a `tools/call` needs beside the service: the held-call quota and the approval links.
pub struct Front<'a> {
    pub state: &'a Pipeline,
    pub settings: &'a McpSettings,
    pub attestations: &'a crate::store::attestations::Attestations,
    pub held: &'a Arc<HeldCalls>,
    pub links: &'a ApprovalLinks,
}

impl Front<'_> {
    /// The call, in its span: `tools/call <tool>` under the `traceparent` of the request's
    /// `_meta` (else of its HTTP headers).
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        context: &CallRequest<'_>,
    ) -> CallToolResponse {
        let tool = match request.name.as_ref() {
            name @ (DESIGN | PROJECTS) => name,
            _ => "unknown",
        };
        let carrier = if context.meta.0.contains_key("traceparent") {
            crate::trace::Carrier::Meta(&context.meta.0)
        } else {
            crate::trace::Carrier::Headers(&context.parts.headers)
        };
        let trace = crate::trace::call(&format!("tools/call {tool}"), "mcp", tool, carrier);
        let span = trace.span();
        if !span.is_disabled() {
            span.record("mcp.method.name", "tools/call");
            if let Some(id) = context.parts.headers.get("mcp-session-id") {
                span.record("mcp.session.id", id.to_str().unwrap_or(""));
            }
        }
        trace.run(self.call_in_span(request, context)).await
    }

    async fn call_in_span(
        &self,
        request: CallToolRequestParams,
        context: &CallRequest<'_>,
    ) -> CallToolResponse {
        let public_url = self.settings.public_url.as_deref();
        let Some(mut session) = McpSession::of(context.parts, context.meta, public_url) else {
            // INVARIANT: the auth layer puts the caller on every `/mcp` request.
            return outcome::error("askgate: this request carries no authenticated caller").into();
        };
        let tool = request.name.to_string();
        if !matches!(tool.as_str(), DESIGN | PROJECTS) {
            return outcome::error(&format!(
                "invalid input `name`: unknown tool `{tool}`; use `{DESIGN}` or `{PROJECTS}`"
            ))
            .into();
        }
        let digest = call_digest(&tool, request.arguments.as_ref());
        if let Some(sealed) = &request.request_state {
            return self
                .retried(&session, sealed, &digest, context)
                .await
                .into();
        }
        let tool_use_id = tool_use_id(context.meta);
        let input = Value::Object(request.arguments.unwrap_or_default());
        let principal = &session.caller.principal;
        let found = self
            .attestation(principal, &tool, &input, tool_use_id.as_deref())
            .await;
        let found = match found {
            Ok(found) => found,
            // Fail closed: the call is not decided on facts askgate could not read.
            Err(error) => {
                return outcome::error(&format!(
                    "askgate refused this call: {}",
                    crate::server::error::ApiError::Store(error).public_message()
                ))
                .into()
            }
        };
        session.attest(found, self.settings.require_attestation);
        let arrival = Arrival {
            front_door: Some(FrontDoor::Mcp),
            tool_use_id,
            waits_for: Some(self.settings.approval_wait),
        };
        let prepared = self
            .state
            .prepare(
                session.key.clone(),
                session.facts.clone(),
                (&tool, input),
                arrival,
            )
            .await;
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(error) => return outcome::refused_input(&error).into(),
        };
        let decision_id = prepared.decision_id.clone();
        // A client that takes the approval's link gets `input_required` and comes back with a
        // retry: until then nobody waits, and an approved call waits for it (A16).
        let client = if offers_link(context) {
            ClientWait::NotYet
        } else {
            ClientWait::Waiting
        };
        match self
            .state
            .handle_for(&session.caller, prepared, client)
            .await
        {
            Err(error) => outcome::error(&format!(
                "askgate refused this call: {} (decision {decision_id})",
                error.public_message()
            ))
            .into(),
            Ok(Handled::Allowed { result, .. }) => outcome::upstream(result).into(),
            Ok(Handled::Denied { decision }) => outcome::denied(&decision_id, &decision).into(),
            Ok(Handled::Asked { approval, .. }) if approval.status != ApprovalStatus::Pending => {
                outcome::not_approved(&approval, &decision_id, None).into()
            }
            Ok(Handled::Asked { approval, .. }) => {
                if client == ClientWait::NotYet {
                    if let Some(offer) = self.offer_link(&session, &approval, &decision_id, &digest)
                    {
                        return offer;
                    }
                    // No link could be sealed: this request holds the call itself.
                    let now = self.state.inner().clock.now();
                    let _ = self
                        .state
                        .inner()
                        .approving
                        .approvals
                        .client_back(&approval.id, now)
                        .await;
                }
                self.hold(&session, &approval, &decision_id, context)
                    .await
                    .into()
            }
        }
    }

    /// The hook attestation `principal`'s hook filed for this very call (`tool_use_id`), taken
    /// once; `Missing` when the call names no tool-use id.
    async fn attestation(
        &self,
        principal: &str,
        tool: &str,
        input: &Value,
        tool_use_id: Option<&str>,
    ) -> Result<Found, crate::store::StoreError> {
        let Some(id) = tool_use_id else {
            return Ok(Found::Missing);
        };
        let call = AttestedCall {
            tool,
            input_digest: crate::call::digest::call_digest(tool, input),
            server_names: &self.settings.server_names,
        };
        let now = self.state.inner().clock.now();
        self.attestations.take(principal, id, &call, now).await
    }

    /// A 2026-07-28 client that declared URL elicitation is sent the approval's page and a
    /// sealed state to retry with (`None`: no state could be sealed).
    fn offer_link(
        &self,
        session: &McpSession,
        approval: &ApprovalView,
        decision_id: &str,
        digest: &[u8; 32],
    ) -> Option<CallToolResponse> {
        let now = self.state.inner().clock.now();
        let left = (approval.expires_at - now).max(time::Duration::ZERO);
        let state = LinkState {
            approval: approval.id.clone(),
            decision: decision_id.to_string(),
        };
        let url = approval_url(&session.base_url, &approval.id);
        let ttl = std::time::Duration::try_from(left).ok()?;
        let offer = self
            .links
            .offer(&state, &session.caller.principal, digest, &url, ttl)?;
        self.state.inner().metrics.approval_link(LinkStep::Offered);
        Some(CallToolResponse::InputRequired(offer))
    }

    /// The retry of a call that was sent its approval's link: the state is opened for this
    /// caller and this call, once, and the call is held on that approval.
    async fn retried(
        &self,
        session: &McpSession,
        sealed: &str,
        digest: &[u8; 32],
        context: &CallRequest<'_>,
    ) -> CallToolResult {
        let inner = self.state.inner();
        let now = inner.clock.now();
        // Remembered as redeemed for as long as any approval can stay pending (the store is
        // not read under the links' lock).
        let expiry = |_: &str| Some(now + inner.approving.ttl);
        let principal = &session.caller.principal;
        // Held (open) until this retry is answered, however it ends (P2).
        let redeemed = match self.links.redeem(sealed, principal, digest, now, expiry) {
            Ok(redeemed) => redeemed,
            Err(error) => {
                inner.metrics.approval_link(LinkStep::Refused);
                return outcome::error(&format!("askgate refused this retry: {error}"));
            }
        };
        let state = &redeemed.state;
        inner.metrics.approval_link(LinkStep::Redeemed);
        let owner = inner.approving.approvals.owner(&state.approval, now).await;
        let owned = owner.ok().flatten().as_deref() == Some(principal.as_str());
        if !owned {
            return unknown_to(&state.approval);
        }
        // The client is back: from now on a call waits for the result, and an approval
        // approved before it came starts its run (A16).
        let view = inner
            .approving
            .approvals
            .client_back(&state.approval, now)
            .await;
        let Ok(view) = view else {
            return unknown_to(&state.approval);
        };
        match view.status {
            // Approved and still running when the retry came: held until its result is there,
            // like a call held from the start (the run's deadline bounds the wait).
            ApprovalStatus::Pending | ApprovalStatus::Running => {
                self.hold(session, &view, &state.decision, context).await
            }
            // Approved as a consent card, and the call moved on to its next approval (A2).
            ApprovalStatus::Completed if next_approval(view.result.as_ref()).is_some() => {
                self.hold(session, &view, &state.decision, context).await
            }
            // Ended — or refused while the refusal is still being logged (its note is stored
            // once the record is synced): that refusal is waited for, so the note is shown.
            _ => {
                let clock = inner.clock.clone();
                let settle = inner.approving.approvals.limits().approve_wait;
                let view = inner
                    .approving
                    .approvals
                    .wait(&view.id, settle, move || clock.now())
                    .await
                    .unwrap_or(view);
                let url = approval_url(&session.base_url, &view.id);
                outcome::settled(&view, &state.decision, &url)
            }
        }
    }

    /// Holds the call until an approver decides, under the held-call quota.
    async fn hold(
        &self,
        session: &McpSession,
        approval: &ApprovalView,
        decision_id: &str,
        context: &CallRequest<'_>,
    ) -> CallToolResult {
        let _permit = match self.held.try_hold(&session.caller.principal) {
            Ok(permit) => permit,
            Err(limit) => return not_held(self.state, approval, decision_id, &limit).await,
        };
        Hold {
            state: self.state,
            settings: self.settings,
            approval,
            decision_id,
            notices: context.notices,
            progress: context.meta.get_progress_token(),
            cancelled: context.cancelled.clone(),
            base_url: session.base_url.clone(),
        }
        .result()
        .await
    }
}

/// A 2026-07-28 request whose client declared URL elicitation: its ask answers
/// `input_required` with the approval's link, and its retry is the call that is held.
fn offers_link(context: &CallRequest<'_>) -> bool {
    let stateless = context.meta.protocol_version().is_some();
    let takes_urls = context
        .meta
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.url.is_some());
    stateless && takes_urls
}

fn unknown_to(approval: &str) -> CallToolResult {
    outcome::error(&format!(
        "askgate refused this retry: approval `{approval}` is not known for this caller"
    ))
}

/// The approval's page in the console, as the approver reaches it.
pub fn approval_url(base_url: &str, id: &str) -> String {
    format!("{base_url}/console/approvals/{id}")
}

/// Past `mcp.max_held` (or the caller's `mcp.max_held_per_caller`) the call is answered at
/// once, so its approval is withdrawn: nobody would receive the result of approving it.
async fn not_held(
    state: &Pipeline,
    approval: &ApprovalView,
    decision_id: &str,
    limit: &HeldLimit,
) -> CallToolResult {
    let why = format!(
        "withdrawn by askgate: {limit}, so the call from `{}` was not held and nobody would \
         receive its result",
        approval.requested_by
    );
    let status = match state.withdraw(&approval.id, &why).await {
        Ok(view) => view.status,
        Err(_) => {
            let now = state.inner().clock.now();
            let view = state
                .inner()
                .approving
                .approvals
                .view(&approval.id, now)
                .await;
            view.map_or(approval.status, |view| view.status)
        }
    };
    outcome::error(&format!(
        "askgate holds too many calls for approval to hold this one: approval `{}` is {} \
         (decision {decision_id})",
        approval.id,
        status.as_str()
    ))
}

/// The `_meta` key Claude Code puts its id for the tool call under.
const TOOL_USE_ID: &str = "claudecode/toolUseId";

/// The longest tool-use id logged, in bytes (Claude Code's are `toolu_` and 24 characters).
const TOOL_USE_ID_BYTES: usize = 128;

/// The client's id for this call: logged with the decision, and the key of the hook's
/// attestation of it (`server::attest`), which only the same principal's hook can have filed.
/// One that is not a short printable string is not logged and matches no attestation.
fn tool_use_id(meta: &RequestMetaObject) -> Option<String> {
    meta.get(TOOL_USE_ID)
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty() && id.len() <= TOOL_USE_ID_BYTES)
        .filter(|id| !id.chars().any(char::is_control))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(value: Value) -> RequestMetaObject {
        let mut meta = RequestMetaObject::new();
        meta.insert(TOOL_USE_ID.to_string(), value);
        meta
    }

    #[test]
    fn the_tool_use_id_is_taken_only_as_a_short_printable_string() {
        let id = tool_use_id(&meta(Value::from("toolu_01ABC")));
        assert_eq!(id.as_deref(), Some("toolu_01ABC"));
        assert_eq!(tool_use_id(&RequestMetaObject::new()), None);
        assert_eq!(tool_use_id(&meta(Value::from(7))), None);
        assert_eq!(tool_use_id(&meta(Value::from("a\nb"))), None);
        assert_eq!(tool_use_id(&meta(Value::from("x".repeat(129)))), None);
    }
}
