//! audit::record::render: a decision rendered as its record — who and when ([`DecisionOrigin`],
//! times as RFC 3339 with milliseconds), the outcome's wire twin, and the facts as logged (see
//! `facts`). It takes time and ids as arguments: it must not read a clock or make ids.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::{
    DecisionKind, DecisionRecord, FactsError, FactsV1, FrontDoorV1, PolicySetV1, ShadowRecord,
    Verdict, Version,
};
use crate::authz::CallFacts;
use crate::authz::{Decision, Outcome};

/// What replaces a non-empty Projects search query in logged facts (queries are free text).
pub const REDACTED: &str = "[redacted]";

impl From<Outcome> for Verdict {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Allow => Self::Allow,
            Outcome::Ask => Self::Ask,
            Outcome::Deny => Self::Deny,
        }
    }
}

impl ShadowRecord {
    pub fn from_decision(decision: &Decision) -> Self {
        Self {
            snapshot: decision.snapshot.clone(),
            decision: decision.decision.into(),
            policies: decision.policies.clone(),
        }
    }
}

/// Who and when, supplied by the service (the record never reads a clock or makes ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionOrigin {
    pub id: String,
    pub time: OffsetDateTime,
    pub account: String,
    pub session: String,
    /// The client's id for the tool call (hook decisions).
    pub tool_use_id: Option<String>,
}

impl DecisionRecord {
    /// The record of `decision` taken on `facts`; free text is redacted (see [`FactsV1::of`]).
    pub fn new(
        origin: DecisionOrigin,
        facts: &CallFacts,
        decision: &Decision,
    ) -> Result<Self, FactsError> {
        let summary = &facts.summary;
        Ok(Self {
            v: Version::CURRENT,
            kind: DecisionKind,
            id: origin.id,
            time: format_time(origin.time),
            account: origin.account,
            session: origin.session,
            tool_use_id: origin.tool_use_id,
            agent: facts.principal.id.clone(),
            tool: summary.tool.clone(),
            operation: summary.operation.clone(),
            project: summary.project_id.clone(),
            targets: summary.targets.to_vec(),
            snapshot: decision.snapshot.clone(),
            decision: decision.decision.into(),
            policies: decision.policies.clone(),
            errors: decision.errors.clone(),
            approval: decision.approval.as_ref().map(|card| card.kind().into()),
            reason: decision.reason.clone(),
            facts: FactsV1::of(facts)?,
            shadow: None,
            policy_set: PolicySetV1::Live,
            front_door: None,
        })
    }

    /// The record of a decision taken on `set`, for a call that came through `door`.
    pub fn decided_on(mut self, set: PolicySetV1, door: Option<FrontDoorV1>) -> Self {
        self.policy_set = set;
        self.front_door = door;
        self
    }

    pub fn with_shadow(mut self, shadow: &Decision) -> Self {
        self.shadow = Some(ShadowRecord::from_decision(shadow));
        self
    }
}

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-30T10:00:00.123Z`.
pub fn format_time(time: OffsetDateTime) -> String {
    let utc = time.to_offset(time::UtcOffset::UTC);
    let millis = utc.millisecond();
    let whole = utc.replace_nanosecond(0).unwrap_or(utc);
    match whole.format(&Rfc3339) {
        Ok(text) => match text.strip_suffix('Z') {
            Some(stem) => format!("{stem}.{millis:03}Z"),
            None => text,
        },
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    #[test]
    fn time_has_milliseconds_in_utc() {
        let time = datetime!(2026-11-30 11:00:00.1239 +01:00);
        assert_eq!(format_time(time), "2026-11-30T10:00:00.123Z");
        assert_eq!(
            format_time(datetime!(2026-11-30 10:00:00 UTC)),
            "2026-11-30T10:00:00.000Z"
        );
    }
}
