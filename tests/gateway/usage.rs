//! Usage as facts, limits as policy (issue 36 §2), end to end over HTTP: each decided call of
//! a principal is counted, the counts are facts of its next decision
//! (`context.caller.usage…`), and an admin's rules set limits — a per-minute call cap, a
//! circuit breaker on identical calls, an upload budget, a stop after a refusal, a cap per
//! session — that deny with their own reason. Other principals are not affected, and the
//! decision record carries the counts it was decided on.

use serde_json::json;

use super::harness::{main_session, Gateway, Reply};

const BUSY: &str = "busy-agent-token-0123456789abcdef0123456789";
const QUIET: &str = "quiet-agent-token-0123456789abcdef0123456789";
const APPROVER: &str = "usage-approver-token-0123456789abcdef01234567";

async fn start(rule: &str, logs: &std::path::Path) -> (Gateway, tempfile::TempDir) {
    let managed = tempfile::tempdir().unwrap();
    std::fs::write(managed.path().join("limits.cedar"), rule).unwrap();
    let dir = managed.path().to_path_buf();
    let logs = logs.to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        raw.callers = Some(
            serde_json::from_value(json!([
                {"token": BUSY, "role": "agent", "principal": "busy"},
                {"token": QUIET, "role": "agent", "principal": "quiet"},
                {"token": APPROVER, "role": "approver", "principal": "approver"},
            ]))
            .unwrap(),
        );
        raw.policies = Some(vec![dir]);
        raw.log_dir = Some(logs);
    })
    .await;
    let consent = gateway
        .post("/v1/design/consent", Some(APPROVER), None)
        .await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    (gateway, managed)
}

async fn read(gateway: &Gateway, token: &str, path: &str) -> Reply {
    let body = json!({"session": main_session("s-usage"),
                      "input": {"operation": "read_file",
                                "arguments": {"project_id": "p1", "path": path}}});
    gateway
        .post("/v1/design/call", Some(token), Some(body))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_minute_call_cap_written_as_policy_denies_the_fourth_call_of_one_principal() {
    let logs = tempfile::tempdir().unwrap();
    let (gateway, _managed) = start(
        r#"@id("org.three-calls-a-minute")
@reason("at most 3 calls a minute per agent: wait a minute")
forbid (principal, action in Action::"ClaudeDesign", resource) when { context.caller.usage.calls_minute >= 3 };
"#,
        logs.path(),
    )
    .await;
    for index in 0..3 {
        let reply = read(&gateway, BUSY, &format!("page-{index}.html")).await;
        assert_ne!(reply.status, 403, "call {index}: {}", reply.body);
    }
    let fourth = read(&gateway, BUSY, "page-3.html").await;
    assert_eq!(fourth.status, 403, "{}", fourth.body);
    assert_eq!(
        fourth.policies(),
        vec!["org.three-calls-a-minute".to_string()]
    );
    assert!(
        fourth.body["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("at most 3 calls a minute"),
        "{}",
        fourth.body
    );
    // Another principal has its own counts.
    let quiet = read(&gateway, QUIET, "page-0.html").await;
    assert_ne!(quiet.status, 403, "{}", quiet.body);
    // A minute later the window has slid past the first calls.
    gateway.clock.advance(time::Duration::seconds(61));
    let later = read(&gateway, BUSY, "page-4.html").await;
    assert_ne!(later.status, 403, "{}", later.body);

    let logged: String = std::fs::read_dir(logs.path())
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(
        logged.contains(r#""calls_minute":3"#),
        "the deny's record carries the counts it was decided on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_circuit_breaker_on_identical_calls_stops_a_loop_but_not_new_work() {
    let logs = tempfile::tempdir().unwrap();
    let (gateway, _managed) = start(
        r#"@id("org.identical-call-breaker")
@reason("the same call 3 times within a minute looks like a loop: stopped")
forbid (principal, action in Action::"ClaudeDesign", resource) when { context.caller.usage.identical_minute >= 3 };
"#,
        logs.path(),
    )
    .await;
    for _ in 0..3 {
        let reply = read(&gateway, BUSY, "loop.html").await;
        assert_ne!(reply.status, 403, "{}", reply.body);
    }
    let looped = read(&gateway, BUSY, "loop.html").await;
    assert_eq!(looped.status, 403, "{}", looped.body);
    assert_eq!(
        looped.policies(),
        vec!["org.identical-call-breaker".to_string()]
    );
    let other = read(&gateway, BUSY, "other.html").await;
    assert_ne!(other.status, 403, "{}", other.body);
}

/// The limit rules docs/admins.md shows, the fail-open one too, load with the shipped
/// policies under the schema (`context.caller.usage.known` included).
#[test]
fn the_documented_limit_rules_load_against_the_schema() {
    use askgate::authz::{baseline, PolicySnapshot, Source};
    for id in [
        "org.writes-per-hour",
        "org.subagent-deletes-per-day",
        "org.identical-call-breaker",
        "org.writes-per-hour-when-known",
    ] {
        let mut sources = baseline::policy_sources();
        sources.push(Source::new(
            "limits.cedar".to_string(),
            crate::support::documented_rule(id),
        ));
        let loaded = PolicySnapshot::load(&baseline::schema_source(), &sources);
        assert!(loaded.is_ok(), "{id}: {:?}", loaded.err());
    }
}

/// The person behind the agents (issue 36 §2): two agent tokens configured for the same
/// person count together under `person_calls_hour`, so a person's cap holds whichever agent
/// calls; an agent of another person is not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_a_persons_cap_counts_every_agent_acting_for_them() {
    const LAPTOP: &str = "laptop-agent-token-0123456789abcdef0123456789";
    const CI: &str = "ci-agent-token-0123456789abcdef0123456789abcd";
    const BOB: &str = "bob-agent-token-0123456789abcdef0123456789abc";
    let managed = tempfile::tempdir().unwrap();
    std::fs::write(
        managed.path().join("limits.cedar"),
        r#"@id("org.person-three-an-hour")
@reason("at most 3 calls an hour for one person, whichever agent makes them")
forbid (principal, action in Action::"ClaudeDesign", resource) when { context.caller.usage.person_calls_hour >= 3 };
"#,
    )
    .unwrap();
    let dir = managed.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        raw.callers = Some(
            serde_json::from_value(json!([
                {"token": LAPTOP, "role": "agent", "principal": "alice-laptop", "email": "alice@example.com"},
                {"token": CI, "role": "agent", "principal": "alice-ci", "email": "alice@example.com"},
                {"token": BOB, "role": "agent", "principal": "bob-laptop", "email": "bob@example.com"},
                {"token": APPROVER, "role": "approver", "principal": "approver"},
            ]))
            .unwrap(),
        );
        raw.policies = Some(vec![dir]);
    })
    .await;
    let consent = gateway
        .post("/v1/design/consent", Some(APPROVER), None)
        .await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    for (token, path) in [(LAPTOP, "a.html"), (LAPTOP, "b.html"), (CI, "c.html")] {
        let reply = read(&gateway, token, path).await;
        assert_ne!(reply.status, 403, "{path}: {}", reply.body);
    }
    let fourth = read(&gateway, CI, "d.html").await;
    assert_eq!(fourth.status, 403, "{}", fourth.body);
    assert_eq!(
        fourth.policies(),
        vec!["org.person-three-an-hour".to_string()]
    );
    let bob = read(&gateway, BOB, "a.html").await;
    assert_ne!(bob.status, 403, "{}", bob.body);
}

async fn write(gateway: &Gateway, token: &str, path: &str, bytes: usize) -> Reply {
    let body = json!({"session": main_session("s-usage"),
                      "input": {"operation": "write_files",
                                "arguments": {"project_id": "p1",
                                              "files": [{"path": path, "data": "x".repeat(bytes)}]}}});
    gateway
        .post("/v1/design/call", Some(token), Some(body))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_an_upload_budget_counts_the_bytes_of_every_write_decided_whatever_its_outcome() {
    let logs = tempfile::tempdir().unwrap();
    let (gateway, _managed) = start(
        r#"@id("org.upload-budget")
@reason("more than 100 bytes uploaded this hour: wait")
forbid (principal, action in Action::"ClaudeDesign", resource)
when { !context.design.read_only && context.caller.usage.uploaded_bytes_hour >= 100 };
"#,
        logs.path(),
    )
    .await;
    // Two writes of 60 bytes are decided (each asks for the project's grant); the third is
    // over the budget, whatever the first two came to.
    for index in 0..2 {
        let reply = write(&gateway, BUSY, &format!("w{index}.html"), 60).await;
        assert_ne!(reply.status, 403, "write {index}: {}", reply.body);
    }
    let third = write(&gateway, BUSY, "w2.html", 1).await;
    assert_eq!(third.status, 403, "{}", third.body);
    assert_eq!(third.policies(), vec!["org.upload-budget".to_string()]);
    // The budget holds writes only; another principal has its own.
    assert_ne!(read(&gateway, BUSY, "index.html").await.status, 403);
    assert_ne!(write(&gateway, QUIET, "q.html", 60).await.status, 403);
    let logged: String = std::fs::read_dir(logs.path())
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(
        logged.contains(r#""uploaded_bytes_hour":120"#),
        "the deny's record carries the bytes it was decided on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_after_a_refusal_a_rule_on_refusals_stops_the_agent_for_the_hour() {
    let logs = tempfile::tempdir().unwrap();
    let (gateway, _managed) = start(
        r#"@id("org.refused-once-an-hour")
@reason("this agent was refused within the hour: a human looks first")
forbid (principal, action in Action::"ClaudeDesign", resource) when { context.caller.usage.denies_hour >= 1 };
"#,
        logs.path(),
    )
    .await;
    assert_ne!(read(&gateway, BUSY, "index.html").await.status, 403);
    // A copy without a plan token is refused by the shipped policies.
    let body = json!({"session": main_session("s-usage"),
                      "input": {"operation": "copy_files", "arguments": {"project_id": "p1",
                                "files": [{"src": "index.html", "dest": "copy.html"}]}}});
    let refused = gateway
        .post("/v1/design/call", Some(BUSY), Some(body))
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        !refused
            .policies()
            .contains(&"org.refused-once-an-hour".to_string()),
        "{}",
        refused.body
    );
    let next = read(&gateway, BUSY, "index.html").await;
    assert_eq!(next.status, 403, "{}", next.body);
    assert_eq!(
        next.policies(),
        vec!["org.refused-once-an-hour".to_string()]
    );
    assert_ne!(read(&gateway, QUIET, "index.html").await.status, 403);
    gateway.clock.advance(time::Duration::seconds(3_601));
    // An hour later every refusal (the rule's own denies among them) has slid out.
    let later = read(&gateway, BUSY, "index.html").await;
    assert_ne!(later.status, 403, "{}", later.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_a_per_session_cap_stops_one_session_and_not_the_agents_next() {
    let logs = tempfile::tempdir().unwrap();
    let (gateway, _managed) = start(
        r#"@id("org.two-calls-a-session-hour")
@reason("at most 2 calls an hour in one session: start a new session")
forbid (principal, action in Action::"ClaudeDesign", resource) when { context.caller.usage.session_calls_hour >= 2 };
"#,
        logs.path(),
    )
    .await;
    let read_in = |session: &'static str, path: &'static str| {
        let body = json!({"session": main_session(session),
                          "input": {"operation": "read_file",
                                    "arguments": {"project_id": "p1", "path": path}}});
        let gateway = &gateway;
        async move {
            gateway
                .post("/v1/design/call", Some(BUSY), Some(body))
                .await
        }
    };
    for path in ["a.html", "b.html"] {
        let reply = read_in("s-first", path).await;
        assert_ne!(reply.status, 403, "{}", reply.body);
    }
    let third = read_in("s-first", "c.html").await;
    assert_eq!(third.status, 403, "{}", third.body);
    assert_eq!(
        third.policies(),
        vec!["org.two-calls-a-session-hour".to_string()]
    );
    // The same agent in a new session, and another agent in a session of the same id.
    assert_ne!(read_in("s-second", "a.html").await.status, 403);
    let body = json!({"session": main_session("s-first"),
                      "input": {"operation": "read_file",
                                "arguments": {"project_id": "p1", "path": "a.html"}}});
    let other = gateway
        .post("/v1/design/call", Some(QUIET), Some(body))
        .await;
    assert_ne!(other.status, 403, "{}", other.body);
}
