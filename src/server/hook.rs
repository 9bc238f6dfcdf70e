//! server::hook: `POST /v1/hooks/claude-code` — Claude Code's `PreToolUse` hook answered by the
//! managed policies. In hook mode the client holds consent, plans and grants and runs its own
//! safety checks, so askgate may only tighten: the call is decided on the hook-mode set
//! (`gates.cedar`, `targets.cedar`, `policies/hook/` and the managed directories; see
//! [`crate::authz::baseline::HOOK_SHARED_FILES`]) and Cedar's deny or ask is answered as the
//! hook's `deny` or `ask`; an allow is no opinion. Nothing is executed and nothing is sent
//! upstream. Every answer is a 2xx the client reads — an HTTP hook fails open on errors, so a
//! problem after authentication is answered as a deny that names it; so is an id in the input
//! that is too long or not printable ([`check_input`]), which is never logged. The hook of
//! askgate's own MCP tools (`mcp__<server>__ClaudeDesign|Projects`) decides nothing: its facts
//! are kept as the attestation of the `tools/call` that follows (`server::attest`).

pub mod wire;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use time::OffsetDateTime;

use super::body::RequestBody;
use super::caller::Caller;
use super::error::ApiError;
use super::gateway::{Arrival, FrontDoor, Pipeline, Prepared};
use super::intake::Agent;
use crate::authz::{CallFacts, Decision, Outcome};
use crate::call::{DesignCall, ProjectsCall};
use crate::facts::session::check_session_text;
use crate::facts::{self, AgentKind, DesignObservations, Environment, Mode, Session};
use crate::state::{DesignState, SessionKey};
use crate::store::approvals::ApprovedCall;
use crate::store::approvals::Intake;
use crate::store::attestations::{Attestation, Attestations};
use wire::{HookInput, HookOutput, PRE_TOOL_USE};

/// The header the hook command fills from the client's `CLAUDE_PROJECT_UUID` (the client's
/// environment, which the model does not control).
pub const ATTACHED_PROJECT_HEADER: &str = "askgate-claude-project";

/// What the attached Project is called in hook mode when the client did not say.
const UNKNOWN_PROJECT: &str = "unknown";

/// The longest `tool_use_id` accepted, in UTF-8 bytes, as over MCP (Claude Code's are
/// `toolu_` and 24 characters); the other ids are held to the HTTP API's 256.
const TOOL_USE_ID_BYTES: usize = 128;

/// `POST /v1/hooks/claude-code`, on the pipeline (the hook-mode set and the attestations are
/// the pipeline's: a reload rebuilds the one, the MCP front door takes the other).
/// The hook endpoint's state: the pipeline, and the attestations it files for the MCP front
/// door to take (the same books as `mcp::McpState::attestations`).
#[derive(Clone)]
pub struct HookState {
    pub pipeline: Pipeline,
    pub attestations: Attestations,
}

impl axum::extract::FromRef<HookState> for Pipeline {
    fn from_ref(state: &HookState) -> Pipeline {
        state.pipeline.clone()
    }
}

pub fn router(state: HookState) -> Router {
    Router::new()
        .route("/v1/hooks/claude-code", post(claude_code))
        .with_state(state)
}

pub async fn claude_code(
    Agent(caller): Agent,
    State(state): State<HookState>,
    headers: HeaderMap,
    RequestBody(body): RequestBody,
) -> Result<Response, ApiError> {
    let output = match super::wire::parse_body::<HookInput>(&body) {
        Ok(input) => {
            let project = attached_project(&headers);
            let tool = match input.tool_name.as_str() {
                tool @ ("ClaudeDesign" | "Projects") => tool,
                _ => "other",
            };
            let name = format!("execute_tool {tool}");
            let carrier = crate::trace::Carrier::Headers(&headers);
            crate::trace::call(&name, "hook", tool, carrier)
                .run(state.hook_answer(&caller, &input, project))
                .await
        }
        Err(error) => HookOutput::deny(&format!("askgate could not read the hook input: {error}")),
    };
    Ok(Json(output).into_response())
}

fn attached_project(headers: &HeaderMap) -> Option<String> {
    headers
        .get(ATTACHED_PROJECT_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(str::to_string)
}

impl HookState {
    async fn hook_answer(
        &self,
        caller: &Caller,
        input: &HookInput,
        project: Option<String>,
    ) -> HookOutput {
        if let Err(problem) = check_input(input) {
            return HookOutput::deny(&format!("askgate could not read the hook input: {problem}"));
        }
        if input.hook_event_name != PRE_TOOL_USE {
            return HookOutput::deny(&format!(
                "askgate answers `{PRE_TOOL_USE}` hooks only, not `{}`",
                input.hook_event_name
            ));
        }
        let pipeline = &self.pipeline;
        let now = pipeline.inner().clock.now();
        if is_askgate_mcp_tool(&input.tool_name) {
            return self.attest(&caller.principal, input, now).await;
        }
        if !matches!(input.tool_name.as_str(), "ClaudeDesign" | "Projects") {
            return HookOutput::no_opinion();
        }
        let environment = hook_environment(&pipeline.inner().environment, project);
        // Hook mode decides on its own set, of the generation in force (`server::policies`).
        let snapshot = pipeline.inner().policies.current().hook.clone();
        let (mut intake, mut facts) = match intake(input, caller, &environment, now) {
            Ok(gathered) => gathered,
            Err(problem) => return HookOutput::deny(&format!("askgate: {problem}")),
        };
        // The caller's recent usage and rate, as on every door (the hook counts no call).
        pipeline.with_usage(&mut intake, &mut facts);
        let arrival = Arrival {
            tool_use_id: Some(input.tool_use_id.clone()),
            ..Arrival::at(FrontDoor::Hook)
        };
        // The hook answers on hook mode alone: no shadow comparison.
        let prepared = Prepared::new(intake, arrival, (facts, None), snapshot, None);
        let decision = pipeline.decide(&prepared);
        let logged = pipeline
            .inner()
            .journal
            .hook_decided(&prepared, &decision, &input.tool_use_id, now)
            .await;
        if let Err(error) = logged {
            return HookOutput::deny(&format!("askgate: {}", error.public_message()));
        }
        answer(&prepared.decision_id, &decision)
    }

    /// The hook of one of askgate's own MCP tools: its facts are kept as the attestation of
    /// the `tools/call` that follows (`server::attest`), and the hook has no opinion — the MCP
    /// call is decided, with these facts, when it arrives.
    async fn attest(&self, principal: &str, input: &HookInput, now: OffsetDateTime) -> HookOutput {
        let session = match session(input) {
            Ok(session) => session,
            Err(problem) => return HookOutput::deny(&format!("askgate: {problem}")),
        };
        let Some((server, tool)) = askgate_mcp_tool(&input.tool_name) else {
            return HookOutput::no_opinion();
        };
        let attestation = Attestation {
            session_id: input.session_id.clone(),
            mode: session.mode,
            agent_id: session.agent_id,
            server: server.to_string(),
            tool: tool.to_string(),
            input_digest: crate::call::digest::call_digest(tool, &input.tool_input),
            received_at: now,
        };
        let kept = self
            .attestations
            .attest(principal, &input.tool_use_id, attestation)
            .await;
        match kept {
            Ok(None) => {}
            Ok(Some(evicted)) => tracing::warn!(
                evicted_principal = %evicted.principal,
                max = crate::store::attestations::MAX_TOTAL,
                "the hook attestation store is full: the oldest attestation of the principal holding the most was dropped (its call goes unattested)"
            ),
            // The MCP call then goes unattested (and meets `require_attestation`); the hook
            // has no opinion either way, so the client's own checks still run.
            Err(error) => tracing::warn!(%error, "a hook attestation was not kept"),
        }
        HookOutput::no_opinion()
    }
}

/// `mcp__<server>__ClaudeDesign` or `mcp__<server>__Projects`: askgate's MCP tools as the
/// client names them, split into the server name and the tool. Any server name is filed; the
/// `tools/call` takes the attestation only when it is one of `mcp.server_names`.
fn askgate_mcp_tool(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.rsplit_once("__")?;
    (!server.is_empty() && matches!(tool, "ClaudeDesign" | "Projects")).then_some((server, tool))
}

fn is_askgate_mcp_tool(name: &str) -> bool {
    askgate_mcp_tool(name).is_some()
}

/// The deployment's managed settings, with the client's attached Project (the client offers
/// `Projects` only when one is attached).
fn hook_environment(environment: &Environment, project: Option<String>) -> Environment {
    let mut hook = environment.clone();
    hook.attached_project = Some(project.unwrap_or_else(|| UNKNOWN_PROJECT.to_string()));
    hook
}

/// The hook input's texts that are echoed or logged — the ids, the event and the mode — are
/// bounded and printable like the HTTP API's (`session.id`, `session.agent_id`): a problem
/// names the field, never the value, so nothing raw and unbounded reaches a reason or the log.
fn check_input(input: &HookInput) -> Result<(), String> {
    let texts = [
        ("hook_event_name", Some(&input.hook_event_name), true),
        ("session_id", Some(&input.session_id), true),
        ("agent_id", input.agent_id.as_ref(), false),
        ("permission_mode", input.permission_mode.as_ref(), true),
        ("tool_use_id", Some(&input.tool_use_id), true),
    ];
    for (field, value, required) in texts {
        if let Some(value) = value {
            check_session_text(field, value, required).map_err(|error| error.to_string())?;
        }
    }
    let bytes = input.tool_use_id.len();
    if bytes > TOOL_USE_ID_BYTES {
        return Err(format!(
            "`tool_use_id` is {bytes} bytes long: at most {TOOL_USE_ID_BYTES} bytes"
        ));
    }
    Ok(())
}

/// The session facts a hook input carries. A prompt is the client's to show, so askgate's
/// ask is always answered as `ask` (`interactive`); the adapter is a `PreToolUse` hook, not a
/// permission-request hook.
fn session(input: &HookInput) -> Result<Session, String> {
    let mode = match input.permission_mode.as_deref() {
        None => Mode::Default,
        Some(mode) => serde_json::from_value(serde_json::Value::String(mode.to_string()))
            .map_err(|_| format!("unknown `permission_mode` `{mode}`"))?,
    };
    let agent_id = input.agent_id.clone().filter(|id| !id.is_empty());
    Ok(Session {
        agent: if agent_id.is_some() {
            AgentKind::Subagent
        } else {
            AgentKind::Main
        },
        agent_id,
        mode,
        interactive: true,
        permission_hook: false,
        bypass_available: false,
        ..Session::default()
    })
}

/// The hook's call with the facts askgate knows in hook mode: no session stores (the
/// client's) and no upstream observations.
fn intake(
    input: &HookInput,
    caller: &Caller,
    environment: &Environment,
    now: OffsetDateTime,
) -> Result<(Intake, CallFacts), String> {
    let session = caller.stating(session(input)?);
    let key = SessionKey::new(caller.principal.clone(), input.session_id.clone());
    let (call, facts) = if input.tool_name == "ClaudeDesign" {
        let call = DesignCall::parse(input.tool_input.clone(), None).map_err(|e| e.to_string())?;
        let state = DesignState::default();
        let observed = DesignObservations::default();
        let facts = facts::design::gather(
            &call,
            &session,
            environment,
            state.stores(&key),
            &observed,
            now,
        );
        (ApprovedCall::Design(call), facts)
    } else {
        let call = ProjectsCall::parse(&input.tool_input).map_err(|e| e.to_string())?;
        let facts = facts::projects::gather(&call, &session, environment, None, now);
        (ApprovedCall::Projects(call), facts)
    };
    let intake = Intake {
        session_key: key,
        session,
        call,
    };
    Ok((intake, facts))
}

/// Cedar's answer as the hook's: deny and ask tighten; allow is no opinion.
fn answer(decision_id: &str, decision: &Decision) -> HookOutput {
    let reason = format!(
        "askgate: {} [{}] (decision {decision_id})",
        decision.reason,
        decision.policies.join(", ")
    );
    match decision.decision {
        Outcome::Allow => HookOutput::no_opinion(),
        Outcome::Ask => HookOutput::ask(&reason),
        Outcome::Deny => HookOutput::deny(&reason),
    }
}
