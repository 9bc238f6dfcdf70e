//! audit::query: reading a log as a person would — filters over decision records, the last N
//! matches, one decision with its linked records, and counts by operation and outcome. Pure:
//! it works on records already read and never touches files.

use std::collections::{BTreeMap, HashMap};

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::record::{DecisionRecord, OutcomeStatus, Record, Verdict};

/// Which decisions to keep; every field that is set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordFilter {
    pub session: Option<String>,
    pub project: Option<String>,
    pub decision: Option<Verdict>,
    /// A determining policy id.
    pub policy: Option<String>,
    pub since: Option<OffsetDateTime>,
    pub until: Option<OffsetDateTime>,
}

impl RecordFilter {
    /// True when `record` passes; a record whose time does not parse fails any time bound.
    pub fn matches(&self, record: &DecisionRecord) -> bool {
        let equals = |wanted: &Option<String>, value: Option<&str>| {
            wanted.as_deref().is_none_or(|wanted| Some(wanted) == value)
        };
        equals(&self.session, Some(&record.session))
            && equals(&self.project, record.project.as_deref())
            && self.decision.is_none_or(|wanted| wanted == record.decision)
            && self
                .policy
                .as_ref()
                .is_none_or(|wanted| record.policies.iter().any(|id| id == wanted))
            && self.within_time(&record.time)
    }

    fn within_time(&self, time: &str) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Ok(time) = OffsetDateTime::parse(time, &Rfc3339) else {
            return false;
        };
        self.since.is_none_or(|since| time >= since) && self.until.is_none_or(|until| time <= until)
    }
}

/// The last `count` decisions that pass `filter`, in log order.
pub fn tail<'a>(
    records: &'a [Record],
    filter: &RecordFilter,
    count: usize,
) -> Vec<&'a DecisionRecord> {
    let matching: Vec<&DecisionRecord> = decisions(records)
        .filter(|record| filter.matches(record))
        .collect();
    let skip = matching.len().saturating_sub(count);
    matching.into_iter().skip(skip).collect()
}

/// The decision `id` and the approval and outcome records linked to it, in log order.
pub fn show<'a>(records: &'a [Record], id: &str) -> Option<(&'a DecisionRecord, Vec<&'a Record>)> {
    let decision = decisions(records).find(|record| record.id == id)?;
    let linked = records
        .iter()
        .filter(|record| !matches!(record, Record::Decision(_)) && record.decision_id() == id)
        .collect();
    Some((decision, linked))
}

/// Counts for one tool and operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationCounts {
    pub allow: usize,
    pub ask: usize,
    pub deny: usize,
    /// Executions that ended `ok` / `error` (outcome records linked to a counted decision).
    pub ok: usize,
    pub error: usize,
}

/// Counts by (tool, operation) of the decisions passing `filter` and their outcomes.
pub fn stats(
    records: &[Record],
    filter: &RecordFilter,
) -> BTreeMap<(String, String), OperationCounts> {
    let mut counts: BTreeMap<(String, String), OperationCounts> = BTreeMap::new();
    let mut keys: HashMap<&str, (String, String)> = HashMap::new();
    for record in decisions(records).filter(|record| filter.matches(record)) {
        let key = (record.tool.clone(), record.operation.clone());
        let entry = counts.entry(key.clone()).or_default();
        match record.decision {
            Verdict::Allow => entry.allow += 1,
            Verdict::Ask => entry.ask += 1,
            Verdict::Deny => entry.deny += 1,
        }
        keys.insert(record.id.as_str(), key);
    }
    for record in records {
        let Record::Outcome(outcome) = record else {
            continue;
        };
        let Some(entry) = keys
            .get(outcome.decision_id.as_str())
            .and_then(|key| counts.get_mut(key))
        else {
            continue;
        };
        match outcome.status {
            OutcomeStatus::Ok => entry.ok += 1,
            OutcomeStatus::Error => entry.error += 1,
        }
    }
    counts
}

/// One human line: time, decision, front door, tool/operation, project, targets, policies,
/// the client's tool-use id when there is one, and the decision id. Control
/// characters (a hostile path may hold a newline) are escaped so one record is one line.
pub fn summary_line(record: &DecisionRecord) -> String {
    let targets = match record.targets.as_slice() {
        [] => "-".to_string(),
        [only] => only.clone(),
        [first, rest @ ..] => format!("{first} (+{})", rest.len()),
    };
    let policies = if record.policies.is_empty() {
        "-".to_string()
    } else {
        record.policies.join(",")
    };
    // The front door (`-`: an older record, or a decision taken again at approval) and the
    // client's id of the tool call, when it sent one.
    let door = record.front_door.map_or("-", |door| door.as_str());
    let tool_use = record
        .tool_use_id
        .as_ref()
        .map(|id| format!("tool_use {id}  "))
        .unwrap_or_default();
    let line = format!(
        "{}  {:<5}  {:<4}  {}/{}  {}  {}  {}  {tool_use}{}",
        record.time,
        record.decision.as_str(),
        door,
        record.tool,
        record.operation,
        record.project.as_deref().unwrap_or("-"),
        targets,
        policies,
        record.id
    );
    escape_controls(&line)
}

fn escape_controls(text: &str) -> String {
    text.chars()
        .flat_map(|character| {
            let escaped: Vec<char> = if character.is_control() {
                character.escape_default().collect()
            } else {
                vec![character]
            };
            escaped
        })
        .collect()
}

fn decisions(records: &[Record]) -> impl Iterator<Item = &DecisionRecord> {
    records.iter().filter_map(|record| match record {
        Record::Decision(decision) => Some(decision.as_ref()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    fn decision(id: &str, time: &str, verdict: Verdict, policies: &[&str]) -> Record {
        let facts = serde_json::json!({
            "principal": {"type": "Agent", "id": "main"}, "action": "project_read",
            "resource": {"type": "AttachedProject", "id": "p"},
            "context": {"approvals": [], "now": 0,
                "session": {"agent": "main", "agent_id": "", "mode": "default", "interactive": true,
                    "permission_hook": false, "bypass_available": false},
                "environment": {"provider": "firstParty", "essential_traffic_only": false,
                    "design_sync": "unlisted", "projects_tool": "unlisted", "compliance_taints": [],
                    "feature_flags": []},
                "projects": {"method": "project_read", "attached": true, "credential": "scoped",
                    "path": "a\nb", "resolved_path": "", "target_kind": "doc", "source": "none",
                    "size_known": false, "content_bytes": 0, "estimated_tokens": 0,
                    "knowledge_known": false, "knowledge_size": 0, "max_knowledge_size": 0,
                    "query": "", "n": 5}},
            "targets": [], "identity": null,
            "summary": {"tool": "Projects", "operation": "project_read", "project_id": "p",
                "targets": ["a\nb"], "plan_writes": [], "plan_deletes": [], "writes": false}
        });
        let value = serde_json::json!({
            "v": 1, "kind": "decision", "id": id, "time": time, "account": "a", "session": "s1",
            "agent": "main", "tool": "Projects", "operation": "project_read", "project": "p",
            "targets": ["a\nb"], "snapshot": "sha256:0", "decision": verdict, "policies": policies,
            "errors": [], "approval": null, "reason": "r", "facts": facts, "shadow": null
        });
        Record::Decision(Box::new(serde_json::from_value(value).unwrap()))
    }

    fn outcome(decision_id: &str, status: &str) -> Record {
        let value = serde_json::json!({"v": 1, "kind": "outcome", "id": "o", "time": "t",
            "decision_id": decision_id, "status": status, "error_kind": null});
        Record::Outcome(serde_json::from_value(value).unwrap())
    }

    fn log() -> Vec<Record> {
        vec![
            decision(
                "d1",
                "2026-11-30T10:00:00.000Z",
                Verdict::Allow,
                &["projects.allowed"],
            ),
            outcome("d1", "ok"),
            decision(
                "d2",
                "2026-11-30T11:00:00.000Z",
                Verdict::Deny,
                &["gates.off"],
            ),
            decision("d3", "not a time", Verdict::Allow, &["projects.allowed"]),
            outcome("d3", "error"),
            outcome("unknown", "ok"),
        ]
    }

    #[test]
    fn time_bounds_are_inclusive_and_skip_unparsable_times() {
        let filter = RecordFilter {
            since: Some(datetime!(2026-11-30 10:00:00 UTC)),
            until: Some(datetime!(2026-11-30 11:00:00 UTC)),
            ..RecordFilter::default()
        };
        let records = log();
        let ids: Vec<&str> = tail(&records, &filter, 10)
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(ids, vec!["d1", "d2"]);
    }

    #[test]
    fn tail_keeps_the_last_matches_in_order() {
        let filter = RecordFilter {
            policy: Some("projects.allowed".to_string()),
            ..RecordFilter::default()
        };
        let records = log();
        let ids: Vec<&str> = tail(&records, &filter, 1)
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(ids, vec!["d3"]);
        assert!(tail(&log(), &filter, 0).is_empty());
        let none = RecordFilter {
            session: Some("other".to_string()),
            ..RecordFilter::default()
        };
        assert!(tail(&log(), &none, 10).is_empty());
    }

    #[test]
    fn show_links_outcomes_and_stats_count_them() {
        let records = log();
        let (found, linked) = show(&records, "d3").unwrap();
        assert_eq!((found.id.as_str(), linked.len()), ("d3", 1));
        assert!(show(&records, "o").is_none());
        let counts = stats(&records, &RecordFilter::default());
        let row = &counts[&("Projects".to_string(), "project_read".to_string())];
        assert_eq!(
            (row.allow, row.ask, row.deny, row.ok, row.error),
            (2, 0, 1, 1, 1)
        );
    }

    #[test]
    fn a_summary_line_is_one_line() {
        let Record::Decision(record) = &log()[0] else {
            panic!("a decision")
        };
        let line = summary_line(record);
        assert!(!line.contains('\n'));
        assert!(line.contains("a\\nb"), "{line}");
        assert!(line.ends_with("projects.allowed  d1"), "{line}");
    }
}
