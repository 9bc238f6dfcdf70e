//! audit::record: the versioned wire types of the decision log (one JSON object per line) and
//! their conversion from a decision. Wire types only: it must not decide, read files or clocks.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::authz::context::SurfaceContext;
use crate::authz::{ApprovalKind, Decision, Outcome};
use crate::facts::CallFacts;

/// The record format version written by this build; readers report any other as foreign.
pub const FORMAT_VERSION: u64 = 1;

/// What replaces a non-empty Projects search query in logged facts (queries are free text).
pub const REDACTED: &str = "[redacted]";

/// The `"v"` field: serializes as [`FORMAT_VERSION`] and accepts nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(FORMAT_VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match u64::deserialize(deserializer)? {
            FORMAT_VERSION => Ok(Version),
            other => Err(serde::de::Error::custom(format!(
                "foreign record version `{other}`"
            ))),
        }
    }
}

/// A `"kind"` marker type that (de)serializes as exactly one string.
macro_rules! kind_marker {
    ($name:ident, $text:literal) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name;

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($text)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                if text == $text {
                    Ok($name)
                } else {
                    Err(serde::de::Error::custom(format!(
                        "expected kind `{}`, found `{text}`",
                        $text
                    )))
                }
            }
        }
    };
}

kind_marker!(DecisionKind, "decision");
kind_marker!(ApprovalRecordKind, "approval");
kind_marker!(OutcomeKind, "outcome");

/// The logged tri-state outcome (the wire twin of `authz::Outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    pub const ALL: [Verdict; 3] = [Verdict::Allow, Verdict::Ask, Verdict::Deny];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl From<Outcome> for Verdict {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Allow => Self::Allow,
            Outcome::Ask => Self::Ask,
            Outcome::Deny => Self::Deny,
        }
    }
}

/// What the shadow policy set would have decided (logged only, never enforced).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShadowRecord {
    pub snapshot: String,
    pub decision: Verdict,
    pub policies: Vec<String>,
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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionRecord {
    pub v: Version,
    pub kind: DecisionKind,
    pub id: String,
    pub time: String,
    pub account: String,
    pub session: String,
    /// `main`, `subagent` or the agent id: the Cedar principal's id.
    pub agent: String,
    pub tool: String,
    pub operation: String,
    pub project: Option<String>,
    /// Normalized target paths (paths are logged; bodies never are).
    pub targets: Vec<String>,
    pub snapshot: String,
    pub decision: Verdict,
    pub policies: Vec<String>,
    pub errors: Vec<String>,
    pub approval: Option<ApprovalKind>,
    pub reason: String,
    /// Everything replay needs; the Cedar requests are re-derived from it.
    pub facts: CallFacts,
    pub shadow: Option<ShadowRecord>,
}

impl DecisionRecord {
    /// The record of `decision` taken on `facts`; the facts are redacted (see [`redact`]).
    pub fn new(origin: DecisionOrigin, facts: &CallFacts, decision: &Decision) -> Self {
        let summary = &facts.summary;
        Self {
            v: Version,
            kind: DecisionKind,
            id: origin.id,
            time: format_time(origin.time),
            account: origin.account,
            session: origin.session,
            agent: facts.principal.id.clone(),
            tool: summary.tool.clone(),
            operation: summary.operation.clone(),
            project: summary.project_id.clone(),
            targets: summary.targets.clone(),
            snapshot: decision.snapshot.clone(),
            decision: decision.decision.into(),
            policies: decision.policies.clone(),
            errors: decision.errors.clone(),
            approval: decision.approval.as_ref().map(|card| card.kind()),
            reason: decision.reason.clone(),
            facts: redact(facts.clone()),
            shadow: None,
        }
    }

    pub fn with_shadow(mut self, shadow: &Decision) -> Self {
        self.shadow = Some(ShadowRecord::from_decision(shadow));
        self
    }
}

/// A human's answer to an ask, linked to its decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRecord {
    pub v: Version,
    pub kind: ApprovalRecordKind,
    pub id: String,
    pub time: String,
    pub decision_id: String,
    pub approval_id: String,
    pub action: ApprovalAction,
    pub by: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAction {
    Approved,
    Refused,
    Expired,
}

/// How the executed call ended upstream, linked to its decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeRecord {
    pub v: Version,
    pub kind: OutcomeKind,
    pub id: String,
    pub time: String,
    pub decision_id: String,
    pub status: OutcomeStatus,
    pub error_kind: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    Ok,
    Error,
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Record {
    Decision(Box<DecisionRecord>),
    Approval(ApprovalRecord),
    Outcome(OutcomeRecord),
}

impl Record {
    pub fn id(&self) -> &str {
        match self {
            Self::Decision(record) => &record.id,
            Self::Approval(record) => &record.id,
            Self::Outcome(record) => &record.id,
        }
    }

    /// The decision this record belongs to (its own id for a decision).
    pub fn decision_id(&self) -> &str {
        match self {
            Self::Decision(record) => &record.id,
            Self::Approval(record) => &record.decision_id,
            Self::Outcome(record) => &record.decision_id,
        }
    }

    /// The record as one JSON line, newline included.
    pub fn to_line(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut line = serde_json::to_vec(self)?;
        line.push(b'\n');
        Ok(line)
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

/// The facts as logged: a Projects search query is free text the agent wrote, so a non-empty
/// one is replaced by [`REDACTED`]. Paths, project ids and every other fact are kept as they
/// were decided on (no argument body or token ever reaches the facts).
pub fn redact(mut facts: CallFacts) -> CallFacts {
    if let SurfaceContext::Projects(projects) = &mut facts.context.surface {
        if !projects.query.is_empty() {
            projects.query = REDACTED.to_string();
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]

    use time::macros::datetime;

    use super::*;

    fn outcome_line(version: &str, kind: &str) -> String {
        format!(
            r#"{{"v":{version},"kind":"{kind}","id":"o","time":"t","decision_id":"d","status":"ok","error_kind":null}}"#
        )
    }

    #[test]
    fn time_has_milliseconds_in_utc() {
        let time = datetime!(2026-11-30 11:00:00.1239 +01:00);
        assert_eq!(format_time(time), "2026-11-30T10:00:00.123Z");
        assert_eq!(
            format_time(datetime!(2026-11-30 10:00:00 UTC)),
            "2026-11-30T10:00:00.000Z"
        );
    }

    #[test]
    fn version_and_kind_are_checked_on_decode() {
        let good: OutcomeRecord = serde_json::from_str(&outcome_line("1", "outcome")).unwrap();
        assert_eq!(good.status, OutcomeStatus::Ok);
        for (version, kind) in [
            ("2", "outcome"),
            ("0", "outcome"),
            ("\"1\"", "outcome"),
            ("1", "approval"),
        ] {
            assert!(serde_json::from_str::<OutcomeRecord>(&outcome_line(version, kind)).is_err());
        }
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let line = outcome_line("1", "outcome").replace("\"id\":", "\"extra\":1,\"id\":");
        assert!(serde_json::from_str::<OutcomeRecord>(&line).is_err());
    }

    #[test]
    fn records_serialize_with_version_and_kind_first() {
        let record = Record::Outcome(serde_json::from_str(&outcome_line("1", "outcome")).unwrap());
        let line = record.to_line().unwrap();
        assert!(line.starts_with(br#"{"v":1,"kind":"outcome","id":"o""#));
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(record.decision_id(), "d");
    }
}
