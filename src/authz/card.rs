//! authz::card: the approval card shown for an ask. Each card states its scope truthfully:
//! consent (this account until revoked), grant (any ordinary file of this project until
//! revoked), plan (exactly these paths for up to 15 minutes), batch (this call only). The
//! policies choose the kind; a batch card says why nothing outlives the call where a reader
//! could expect otherwise (`card::kept`).

mod kept;

use serde::{Deserialize, Serialize};

use super::ApprovalKind;
use crate::authz::{CallFacts, CallSummary};
use crate::identity::ProjectIdentity;

/// The consent prompt of the reference client (client-facts §4).
pub const CONSENT_PROMPT: &str = "Connect to Claude Design? Claude can read and edit your Design projects from this tool. Change anytime at claude.ai/design/settings or with /design revoke.";
/// What approving a plan does (client-facts §3, F0f).
pub const PLAN_SCOPE_NOTE: &str = "Approving lets writes and deletes to exactly these paths run without another prompt for up to 15 minutes; anything else still asks.";
pub const PLAN_TTL_SECONDS: u32 = 900;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Approval {
    Consent {
        consent: String,
        tool: String,
        operation: String,
        message: String,
        scope: String,
        /// Other approval kinds the same approval also gives (e.g. an admin batch ask).
        also: Vec<ApprovalKind>,
    },
    Grant {
        project_id: String,
        name: String,
        sharing_scope: String,
        sharing_label: String,
        url: String,
        writes: Vec<String>,
        message: String,
        scope: String,
        also: Vec<ApprovalKind>,
    },
    Plan {
        project_id: String,
        writes: Vec<String>,
        deletes: Vec<String>,
        expires_in_seconds: u32,
        message: String,
        scope: String,
        also: Vec<ApprovalKind>,
    },
    Batch {
        tool: String,
        operation: String,
        project_id: Option<String>,
        targets: Vec<String>,
        /// A finalize_plan's requested writes and deletes (normalized), which it names instead
        /// of targets; absent for other operations.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        writes: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        deletes: Vec<String>,
        message: String,
        scope: String,
        also: Vec<ApprovalKind>,
    },
}

impl Approval {
    pub fn kind(&self) -> ApprovalKind {
        match self {
            Self::Consent { .. } => ApprovalKind::Consent,
            Self::Grant { .. } => ApprovalKind::Grant,
            Self::Plan { .. } => ApprovalKind::Plan,
            Self::Batch { .. } => ApprovalKind::Batch,
        }
    }

    /// The scope sentence: what approving allows, and for how long.
    pub fn scope(&self) -> &str {
        match self {
            Self::Consent { scope, .. }
            | Self::Grant { scope, .. }
            | Self::Plan { scope, .. }
            | Self::Batch { scope, .. } => scope,
        }
    }

    /// The other approval kinds this approval also gives.
    pub fn also(&self) -> &[ApprovalKind] {
        match self {
            Self::Consent { also, .. }
            | Self::Grant { also, .. }
            | Self::Plan { also, .. }
            | Self::Batch { also, .. } => also,
        }
    }

    /// What approving will do, in a sentence or two.
    pub fn message(&self) -> &str {
        match self {
            Self::Consent { message, .. }
            | Self::Grant { message, .. }
            | Self::Plan { message, .. }
            | Self::Batch { message, .. } => message,
        }
    }
}

/// The card for `kind`; `None` when the facts cannot support it truthfully (a grant card
/// without a verified identity), which the caller turns into a deny.
pub fn card(kind: ApprovalKind, also: Vec<ApprovalKind>, facts: &CallFacts) -> Option<Approval> {
    let summary = &facts.summary;
    Some(match kind {
        ApprovalKind::Consent => Approval::Consent {
            consent: "agent_design_projects".to_string(),
            tool: summary.tool.clone(),
            operation: summary.operation.clone(),
            message: consent_message(summary),
            scope: "connects Claude Design for this account until revoked (claude.ai/design/settings or /design revoke)".to_string(),
            also,
        },
        ApprovalKind::Grant => grant_card(facts.identity.as_ref()?, summary, also),
        ApprovalKind::Plan => Approval::Plan {
            project_id: summary.project_id.clone().unwrap_or_default(),
            writes: summary.plan_writes.clone(),
            deletes: summary.plan_deletes.clone(),
            expires_in_seconds: PLAN_TTL_SECONDS,
            message: format!("Design finalize_plan writes to claude.ai/design. {PLAN_SCOPE_NOTE}"),
            scope: "writes and deletes to exactly these paths in this project, for up to 15 minutes".to_string(),
            also,
        },
        ApprovalKind::Batch => batch_card(facts, also),
    })
}

/// This call only: where a reader could expect something to outlive the call (consent, a
/// plan), its message and scope say that nothing will, and why.
fn batch_card(facts: &CallFacts, also: Vec<ApprovalKind>) -> Approval {
    let summary = &facts.summary;
    let notes: Vec<kept::Note> = [kept::unconnected(facts), kept::no_plan(facts)]
        .into_iter()
        .flatten()
        .collect();
    let mut message = batch_message(summary);
    let mut scope = "this call only".to_string();
    if !notes.is_empty() {
        let clauses: Vec<&str> = notes.iter().map(|note| note.clause.as_str()).collect();
        message.push_str(&format!(
            " Approving runs this {} once and keeps nothing: {}.",
            summary.operation,
            clauses.join("; ")
        ));
        for note in &notes {
            scope.push_str(&format!("; {}", note.scope));
        }
    }
    Approval::Batch {
        tool: summary.tool.clone(),
        operation: summary.operation.clone(),
        project_id: summary.project_id.clone(),
        targets: summary.targets.to_vec(),
        writes: summary.plan_writes.clone(),
        deletes: summary.plan_deletes.clone(),
        message,
        scope,
        also,
    }
}

fn consent_message(summary: &CallSummary) -> String {
    let mut message = CONSENT_PROMPT.to_string();
    if summary.writes {
        message.push_str(&format!(
            " Design {} writes to claude.ai/design.",
            summary.operation
        ));
    }
    if summary.operation == "finalize_plan" {
        // The reference appends the plan note here, but approving consent does not approve
        // the plan's paths; say what happens instead, so the card's scope is true.
        message.push_str(" Approving connects Claude Design and runs this finalize_plan; its paths are not pre-approved: call finalize_plan again to approve them for up to 15 minutes.");
    }
    message
}

fn batch_message(summary: &CallSummary) -> String {
    if summary.tool == "Projects" {
        format!("Projects {} on the attached project.", summary.operation)
    } else if summary.writes {
        format!("Design {} writes to claude.ai/design.", summary.operation)
    } else {
        format!("Design {} reads claude.ai/design.", summary.operation)
    }
}

fn grant_card(
    identity: &ProjectIdentity,
    summary: &CallSummary,
    also: Vec<ApprovalKind>,
) -> Approval {
    let message = format!(
        "Approving writes the listed files now and lets Claude write to ANY file in the project \"{}\" ({}) — {} — without asking again, until revoked at claude.ai/design settings. Deletes and CLAUDE.md/.claude paths still ask every time.",
        identity.name, identity.sharing_label, identity.url
    );
    Approval::Grant {
        project_id: identity.project_id.clone(),
        name: identity.name.clone(),
        sharing_scope: identity.sharing_scope.clone(),
        sharing_label: identity.sharing_label.clone(),
        url: identity.url.clone(),
        writes: summary.targets.to_vec(),
        message,
        scope: "any ordinary file of this project, until revoked at claude.ai/design settings; deletes and CLAUDE.md/.claude paths still ask every time".to_string(),
        also,
    }
}
