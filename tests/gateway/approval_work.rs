//! The approved work end to end (issue 9 §1): it runs in a task of its own that ends every
//! approval `completed` or `failed` with an outcome record (F1), and it decides the call again
//! when approved, so a reload that added a deny or a consent revoke takes effect.

use std::path::Path;
use std::time::{Duration, Instant};

use askgate::audit::{read_log, ApprovalAction, LogLine, Record};
use serde_json::{json, Value};

use super::harness::{main_session, text_of, Gateway, Reply, APPROVER};

/// Every record of the log directory `logs`.
pub fn records(logs: &Path) -> Vec<Record> {
    read_log(&[logs.to_path_buf()])
        .expect("log readable")
        .filter_map(|line| match line {
            LogLine::Record(record) => Some(record),
            _ => None,
        })
        .collect()
}

/// The decisions an approval's records link, in log order: the ask's, then the re-decision.
pub fn linked_decisions(records: &[Record], approval: &str) -> Vec<(String, ApprovalAction)> {
    records
        .iter()
        .filter_map(|record| match record {
            Record::Approval(record) if record.approval_id == approval => {
                Some((record.decision_id.clone(), record.action))
            }
            _ => None,
        })
        .collect()
}

pub fn outcomes_of(records: &[Record], decision: &str) -> Vec<Option<String>> {
    records
        .iter()
        .filter_map(|record| match record {
            Record::Outcome(outcome) if outcome.decision_id == decision => {
                Some(outcome.error_kind.clone())
            }
            _ => None,
        })
        .collect()
}

/// Polls (as the approver) until the approval has ended; panics after `within`.
pub async fn ended(gateway: &Gateway, id: &str, within: Duration) -> Reply {
    let started = Instant::now();
    loop {
        let reply = gateway
            .get(&format!("/v1/approvals/{id}?wait=2s"), Some(APPROVER))
            .await;
        let status = reply.body["status"].as_str().unwrap_or("");
        if !matches!(status, "pending" | "running") {
            return reply;
        }
        assert!(started.elapsed() < within, "still {status}: {}", reply.body);
    }
}

fn delete(path: &str) -> Value {
    json!({"project_id": "p1", "paths": [path]})
}

/// A destructive call the sandbox carries out (a batch ask once consent is recorded).
fn sharing() -> Value {
    json!({"project_id": "p1", "scope": "org"})
}

async fn logged_gateway(logs: &Path, adjust: Value) -> Gateway {
    let logs = logs.to_path_buf();
    Gateway::start_with(move |raw| {
        raw.log_dir = Some(logs);
        raw.approvals = Some(serde_json::from_value(adjust).expect("approval limits"));
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_approver_disconnect_does_not_wedge() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let gateway = logged_gateway(&logs, json!({})).await;
    gateway.record_consent().await;
    let asked = gateway
        .design(&main_session("s-f1"), "update_sharing", sharing())
        .await;
    let id = asked.approval_id();
    gateway
        .fault(json!({"fault": "delay", "ms": 4000, "tool": "update_sharing"}))
        .await;
    // The approver's client gives up after 1 s, while the upstream takes 4 s.
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let gave_up = impatient
        .post(format!("{}/v1/approvals/{id}/approve", gateway.url))
        .bearer_auth(APPROVER)
        .send()
        .await;
    assert!(gave_up.is_err(), "the client should have timed out");

    let done = ended(&gateway, &id, Duration::from_secs(15)).await;
    assert_eq!(done.body["status"], "completed", "{}", done.body);
    assert_eq!(done.body["result"]["isError"], false, "{}", done.body);
    assert_eq!(gateway.tool_calls("update_sharing").await, 1);
    let again = gateway.approve(&id).await;
    assert_eq!(again.status, 409, "{}", again.body);

    let records = records(&logs);
    let linked = linked_decisions(&records, &id);
    assert_eq!(
        linked.len(),
        2,
        "the ask's decision and the re-decision: {linked:?}"
    );
    assert!(linked
        .iter()
        .all(|(_, action)| *action == ApprovalAction::Approved));
    assert_eq!(
        outcomes_of(&records, &linked[1].0),
        [None],
        "one ok outcome"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_a_slow_approval_answers_running_with_where_to_poll() {
    let work = tempfile::tempdir().unwrap();
    let gateway = logged_gateway(
        &work.path().join("logs"),
        json!({"approve_wait_seconds": 1}),
    )
    .await;
    gateway.record_consent().await;
    let asked = gateway
        .design(&main_session("s-slow"), "update_sharing", sharing())
        .await;
    let id = asked.approval_id();
    gateway
        .fault(json!({"fault": "delay", "ms": 2500, "tool": "update_sharing"}))
        .await;
    let answer = gateway.approve(&id).await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert_eq!(answer.body["status"], "running");
    assert_eq!(answer.body["poll"], format!("/v1/approvals/{id}?wait=30s"));
    let done = ended(&gateway, &id, Duration::from_secs(15)).await;
    assert_eq!(done.body["status"], "completed", "{}", done.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_a_running_approval_past_its_deadline_fails_with_an_outcome() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let gateway = logged_gateway(&logs, json!({"run_deadline_seconds": 1})).await;
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("s-deadline"),
            "delete_files",
            delete("styles.css"),
        )
        .await;
    let id = asked.approval_id();
    gateway
        .fault(json!({"fault": "delay", "ms": 4000, "tool": "delete_files"}))
        .await;
    let started = Instant::now();
    let answer = gateway.approve(&id).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["status"], "failed", "{}", answer.body);
    assert_eq!(
        answer.body["result"]["error"], "deadline",
        "{}",
        answer.body
    );
    let records = records(&logs);
    let linked = linked_decisions(&records, &id);
    let last = &linked.last().expect("linked").0;
    assert_eq!(outcomes_of(&records, last), [Some("deadline".to_string())]);
}

/// An admin rule freezing project p1, dropped into a watched directory after the ask.
const FREEZE_P1: &str = r#"// Admin: project p1 is frozen.
@id("admin.freeze-p1")
@reason("project p1 is frozen")
forbid (principal, action, resource == DesignProject::"p1");
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redecision_a_reload_that_adds_a_deny_fails_the_approval_with_its_reason() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let managed = work.path().join("managed");
    std::fs::create_dir(&managed).unwrap();
    let (log_dir, policies) = (logs.clone(), managed.clone());
    let gateway = Gateway::start_with(move |raw| {
        raw.log_dir = Some(log_dir);
        raw.policies = Some(vec![policies]);
    })
    .await;
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("s-reload"),
            "delete_files",
            delete("styles.css"),
        )
        .await;
    let id = asked.approval_id();
    // Issue 35 §3: the approval is bound to the call's digest and the policy set that asked.
    let bound = asked.body["approval"]["bound"].clone();
    let (asked_under, call) = (bound["policies"].as_str(), bound["call"].as_str());
    let (Some(asked_under), Some(call)) = (asked_under, call) else {
        panic!("the approval is bound: {}", asked.body)
    };
    assert!(call.starts_with("sha256:") && call.len() == 71, "{call}");
    std::fs::write(managed.join("freeze.cedar"), FREEZE_P1).unwrap();
    let reloaded = gateway.post("/v1/admin/reload", Some(APPROVER), None).await;
    assert_eq!(reloaded.body["reloaded"], true, "{}", reloaded.body);

    let answer = gateway.approve(&id).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["status"], "failed", "{}", answer.body);
    let result = &answer.body["result"];
    assert_eq!(result["error"], "denied_at_approval", "{result}");
    let text = text_of(result);
    assert!(text.contains("project p1 is frozen"), "{result}");
    assert!(
        text.contains(&format!("the policies changed since it was asked (asked under {asked_under}, decided again under ")),
        "the refusal names the policy change: {text}"
    );
    assert_eq!(gateway.tool_calls("delete_files").await, 0, "nothing ran");
    assert_eq!(
        answer.body["bound"], bound,
        "the binding stays with the approval"
    );

    let records = records(&logs);
    let linked = linked_decisions(&records, &id);
    let redecided = &linked.last().expect("linked").0;
    let decision = records.iter().find_map(|record| match record {
        Record::Decision(decision) if &decision.id == redecided => Some(decision),
        _ => None,
    });
    let decision = decision.expect("the re-decision is logged");
    assert_eq!(decision.decision.as_str(), "deny");
    assert!(decision.policies.contains(&"admin.freeze-p1".to_string()));
    assert_eq!(
        outcomes_of(&records, redecided),
        [Some("denied_at_approval".to_string())]
    );
    assert_ne!(
        decision.snapshot, asked_under,
        "decided again under the new set"
    );
    // Every `approved` record names the approved call's digest.
    let digests: Vec<Option<&str>> = records
        .iter()
        .filter_map(|record| match record {
            Record::Approval(record) if record.approval_id == id => Some(record.call.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(digests, [Some(call), Some(call)], "{digests:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redecision_a_consent_revoke_fails_a_batch_approval() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("s-revoke"),
            "delete_files",
            delete("styles.css"),
        )
        .await;
    assert_eq!(asked.card_kind(), "batch", "{}", asked.body);
    let id = asked.approval_id();
    let revoked = gateway
        .post("/v1/design/revoke", Some(APPROVER), None)
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);

    let result = gateway.failed_result(&asked).await;
    assert_eq!(result["error"], "approval_mismatch", "{result}");
    let text = text_of(&result);
    assert!(
        text.contains("`consent`") && text.contains("`batch`"),
        "{text}"
    );
    let stats = gateway.stats().await;
    assert_eq!(stats["tools_call"].get("delete_files"), None, "{stats}");
    assert_eq!(stats["consent_posts"], 1, "only the first consent: {stats}");
    let view = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(view.body["status"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_a_call_that_fails_after_its_follow_up_fails_the_approval_and_keeps_the_consent() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let gateway = logged_gateway(&logs, json!({})).await;
    let session = main_session("s-followup");
    let read = json!({"project_id": "p1", "path": "index.html"});
    let asked = gateway.design(&session, "read_file", read.clone()).await;
    assert_eq!(asked.card_kind(), "consent", "{}", asked.body);
    gateway
        .fault(json!({"fault": "status", "status": 500, "tool": "read_file", "count": 1}))
        .await;
    let result = gateway.failed_result(&asked).await;
    assert_eq!(result["error"], "upstream", "{result}");
    let stats = gateway.stats().await;
    assert_eq!(stats["consent_posts"], 1, "the follow-up ran: {stats}");

    // Consent stays recorded: the agent's retry runs without another ask.
    let retried = gateway.design(&session, "read_file", read).await;
    assert_eq!(retried.status, 200, "{}", retried.body);
    assert_eq!(gateway.stats().await["consent_posts"], 1);
    let records = records(&logs);
    let linked = linked_decisions(&records, &asked.approval_id());
    let last = &linked.last().expect("linked").0;
    assert_eq!(outcomes_of(&records, last), [Some("upstream".to_string())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redecision_a_sharing_change_fails_a_grant_card_that_showed_the_old_sharing() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-sharing-redecide");
    let grant = gateway
        .design(
            &session,
            "write_files",
            super::harness::write_args("p1", &["g.html"]),
        )
        .await;
    assert_eq!(grant.card_kind(), "grant", "{}", grant.body);
    let shown = grant.body["approval"]["card"]["sharing_scope"].clone();
    assert_ne!(shown, "org", "{}", grant.body);

    let sharing = gateway.design(&session, "update_sharing", sharing()).await;
    let result = gateway.approved_result(&sharing).await;
    assert_eq!(result["isError"], false, "{result}");

    let result = gateway.failed_result(&grant).await;
    assert_eq!(result["error"], "approval_mismatch", "{result}");
    let stats = gateway.stats().await;
    assert_eq!(stats["grant_posts"], 0, "{stats}");
    assert_eq!(stats["tools_call"].get("write_files"), None, "{stats}");
}
