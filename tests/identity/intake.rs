//! The IdP's tokens as callers, end to end (issue 34 §1, §2, §3, §5): a service configured
//! with the real test provider as its issuer takes its JWT access tokens on the HTTP API and
//! `/mcp` through the one intake, names each caller `iss|sub`, maps roles from scopes and
//! groups, challenges `/mcp` as an OAuth protected resource (RFC 9728), and keeps a person
//! from approving what their own agent asked for, whichever token each side presents.

use serde_json::json;

use super::{agent_token, op_config, CALLBACK, OTHER_RESOURCE, RESOURCE};
use crate::gateway::harness::{main_session, Gateway, Reply, AGENT};
use crate::support::oidc::{CodeClient, Op};

/// A service whose only callers are `op`'s tokens (no `callers`: no demo tokens either).
async fn serving(op: &Op) -> Gateway {
    let identity = json!({"issuers": [{
        "issuer": op.issuer,
        "audience": RESOURCE,
        "agent_scopes": ["askgate:agent"],
        "approver_groups": ["askgate-approvers"],
    }]});
    Gateway::start_with(|raw| {
        raw.identity = Some(serde_json::from_value(identity).unwrap());
    })
    .await
}

async fn design(gateway: &Gateway, token: &str, session: &str) -> Reply {
    let body = json!({"session": main_session(session),
                      "input": {"operation": "read_file",
                                "arguments": {"project_id": "p1", "path": "index.html"}}});
    gateway
        .post("/v1/design/call", Some(token), Some(body))
        .await
}

fn message(reply: &Reply) -> String {
    reply.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn approver_token(op: &Op) -> String {
    op.client_credentials("approver-bot", "approver-secret", RESOURCE, "askgate:read")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idp_agent_asks_and_an_idp_approver_answers_each_named_by_issuer_and_subject() {
    let op = Op::start(op_config()).await;
    let gateway = serving(&op).await;
    let agent = agent_token(&op).await;
    let approver = approver_token(&op).await;

    let asked = design(&gateway, &agent, "s-idp").await;
    let id = asked.approval_id();
    let view = gateway
        .get(&format!("/v1/approvals/{id}"), Some(&approver))
        .await;
    assert_eq!(view.status, 200, "{}", view.body);
    assert_eq!(
        view.body["requested_by"],
        format!("{}|agent", op.issuer),
        "{}",
        view.body
    );
    // Roles come from the mapping: the agent's token cannot list or answer approvals.
    let listed = gateway.get("/v1/approvals", Some(&agent)).await;
    assert_eq!(listed.status, 403, "{}", listed.body);
    let asking = design(&gateway, &approver, "s-approver").await;
    assert_eq!(asking.status, 403, "{}", asking.body);

    let listed = gateway.get("/v1/approvals", Some(&approver)).await;
    assert_eq!(
        listed.body["approvals"][0]["id"],
        id.as_str(),
        "{}",
        listed.body
    );
    let approved = gateway
        .post(
            &format!("/v1/approvals/{id}/approve"),
            Some(&approver),
            None,
        )
        .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(
        approved.body["approved_by"],
        format!("{}|approver-bot", op.issuer),
        "{}",
        approved.body
    );
    // The same token again is served from the verified-token cache: still the same caller.
    let again = design(&gateway, &agent, "s-idp").await;
    assert_eq!(again.status, 200, "{}", again.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_the_intake_refuses_say_why_and_the_demo_tokens_are_off() {
    let op = Op::start(op_config()).await;
    let gateway = serving(&op).await;

    let other = op
        .client_credentials("agent", "agent-secret", OTHER_RESOURCE, "other:all")
        .await;
    let refused = design(&gateway, &other, "s-other").await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(message(&refused).contains("aud"), "{}", refused.body);
    assert!(
        !refused.body.to_string().contains(&other),
        "the token is never echoed"
    );

    let garbage = design(&gateway, "not-a-jwt-and-not-a-configured-token", "s-x").await;
    assert_eq!(garbage.status, 401, "{}", garbage.body);

    let demo = design(&gateway, AGENT, "s-demo").await;
    assert_eq!(demo.status, 401, "{}", demo.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_challenges_with_its_protected_resource_metadata_and_serves_it() {
    let op = Op::start(op_config()).await;
    let gateway = serving(&op).await;
    let response = gateway
        .http
        .post(format!("{}/mcp", gateway.url))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        challenge.contains(
            r#"resource_metadata="https://askgate.test/.well-known/oauth-protected-resource/mcp""#
        ),
        "{challenge}"
    );
    assert!(
        challenge.contains(r#"scope="askgate:agent""#),
        "{challenge}"
    );

    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata = gateway.get(path, None).await;
        assert_eq!(metadata.status, 200, "{path}: {}", metadata.body);
        assert_eq!(metadata.body["resource"], RESOURCE);
        assert_eq!(metadata.body["authorization_servers"], json!([op.issuer]));
        assert_eq!(metadata.body["bearer_methods_supported"], json!(["header"]));
    }

    // With the IdP's token, /mcp serves the agent.
    let agent = agent_token(&op).await;
    let listed = gateway
        .http
        .post(format!("{}/mcp", gateway.url))
        .bearer_auth(&agent)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status().as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_issuers_there_is_no_protected_resource_metadata() {
    let gateway = Gateway::start().await;
    let metadata = gateway
        .get("/.well-known/oauth-protected-resource/mcp", None)
        .await;
    assert_eq!(metadata.status, 404, "{}", metadata.body);
}

/// §3/§4 with 35 §1: the delegate's token names alice as its subject (its `act` chain names
/// the agent acting for her): alice, signed in through the code flow, may not approve the
/// call her own agent asked for; the approver bot may.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn separation_of_duties_holds_for_the_person_behind_a_delegated_agent() {
    let op = Op::start(op_config()).await;
    let gateway = serving(&op).await;
    let delegated = op
        .client_credentials("delegate", "delegate-secret", RESOURCE, "askgate:agent")
        .await;
    let asked = design(&gateway, &delegated, "s-delegated").await;
    let id = asked.approval_id();
    let alice = op
        .sign_in(
            &CodeClient {
                client_id: "console",
                secret: "console-secret",
                redirect_uri: CALLBACK,
            },
            "alice",
            RESOURCE,
            "openid askgate:read",
        )
        .await;
    let own = gateway
        .post(
            &format!("/v1/approvals/{id}/approve"),
            Some(&alice.access_token),
            None,
        )
        .await;
    assert_eq!(own.status, 403, "{}", own.body);
    assert!(
        message(&own).contains("separation of duties"),
        "{}",
        own.body
    );
    let approver = approver_token(&op).await;
    let approved = gateway
        .post(
            &format!("/v1/approvals/{id}/approve"),
            Some(&approver),
            None,
        )
        .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(
        approved.body["approved_by"],
        format!("{}|approver-bot", op.issuer),
        "{}",
        approved.body
    );
}

/// A service trusting `op` (as [`serving`]) with the managed policy `policy` and its decision
/// log in `logs`; the managed directory lives as long as the guard.
async fn serving_with_policy(
    op: &Op,
    policy: &str,
    logs: &std::path::Path,
) -> (Gateway, tempfile::TempDir) {
    let managed = tempfile::tempdir().unwrap();
    std::fs::write(managed.path().join("org.cedar"), policy).unwrap();
    let identity = json!({"issuers": [{
        "issuer": op.issuer,
        "audience": RESOURCE,
        "agent_scopes": ["askgate:agent"],
        "approver_groups": ["askgate-approvers"],
    }]});
    let gateway = Gateway::start_with(|raw| {
        raw.identity = Some(serde_json::from_value(identity).unwrap());
        raw.policies = Some(vec![managed.path().to_path_buf()]);
        raw.log_dir = Some(logs.to_path_buf());
    })
    .await;
    (gateway, managed)
}

/// A write of one file to project p1 in session `session`.
fn write_to_p1(session: &str) -> serde_json::Value {
    json!({"session": main_session(session),
           "input": {"operation": "write_files",
                     "arguments": {"project_id": "p1",
                                   "files": [{"path": "brand.html", "data": "<p>b</p>"}]}}})
}

/// The delegate's write to p1 is denied, naming `rule`; the agent's is not denied at all.
async fn only_the_delegate_is_denied_by(op: &Op, gateway: &Gateway, rule: &str) {
    let delegated = op
        .client_credentials("delegate", "delegate-secret", RESOURCE, "askgate:agent")
        .await;
    let denied = gateway
        .post(
            "/v1/design/call",
            Some(&delegated),
            Some(write_to_p1("s-alice")),
        )
        .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert!(
        denied.policies().contains(&rule.to_string()),
        "{}",
        denied.body
    );
    let agent = agent_token(op).await;
    let asked = gateway
        .post(
            "/v1/design/call",
            Some(&agent),
            Some(write_to_p1("s-agent")),
        )
        .await;
    assert_ne!(asked.status, 403, "{}", asked.body);
    assert!(
        !asked.policies().contains(&rule.to_string()),
        "{}",
        asked.body
    );
}

/// Every decision record `logs` holds, as text.
fn logged(logs: &std::path::Path) -> String {
    std::fs::read_dir(logs)
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default())
        .collect()
}

/// §3: who the person is reaches the decision policies as facts (`context.caller.groups`,
/// `context.caller.email`): an admin's rule "only the design team writes to p1" lets the
/// agent whose token carries `groups: [design]` write and denies the delegate's token (no
/// groups), naming the rule; the decision record carries the groups it was decided on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admins_rule_on_the_persons_groups_decides_by_the_tokens_claims() {
    let op = Op::start(op_config()).await;
    let logs = tempfile::tempdir().unwrap();
    let (gateway, _managed) = serving_with_policy(
        &op,
        r#"@id("org.p1-writes-by-design")
@reason("only the design team writes to project p1")
forbid (principal, action in Action::"ClaudeDesign", resource)
when { !context.design.read_only && context.design.project_id == "p1"
       && !context.caller.groups.contains("design") };
"#,
        logs.path(),
    )
    .await;
    only_the_delegate_is_denied_by(&op, &gateway, "org.p1-writes-by-design").await;
    let logged = logged(logs.path());
    assert!(
        logged.contains(r#""groups":["design"]"#) && logged.contains("ci@acme.test"),
        "the record names the groups and email it was decided on"
    );
}

/// §3: the agent acting for the person and the client its token was issued to are facts too
/// (`context.caller.actor`, `actors`, `client`): an admin's rule "no writes by anything an
/// outside orchestrator drives" denies the delegate's write (its `act` chain names the
/// orchestrator of another issuer) and not the agent's; the decision record names the
/// client and every party of the chain, the one acting now first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i34_the_acting_agent_and_the_client_decide_and_are_logged() {
    let op = Op::start(op_config()).await;
    let logs = tempfile::tempdir().unwrap();
    let (gateway, _managed) = serving_with_policy(
        &op,
        r#"@id("org.no-orchestrated-writes")
@reason("an outside orchestrator may not drive writes")
forbid (principal, action in Action::"ClaudeDesign", resource)
when { !context.design.read_only
       && context.caller.actors.contains("https://other-idp.test|orchestrator") };
"#,
        logs.path(),
    )
    .await;
    only_the_delegate_is_denied_by(&op, &gateway, "org.no-orchestrated-writes").await;
    let logged = logged(logs.path());
    let chain = format!(
        r#""client":"delegate","actor":"{issuer}|agent-7","actors":["{issuer}|agent-7","https://other-idp.test|orchestrator"]"#,
        issuer = op.issuer
    );
    assert!(logged.contains(&chain), "{chain} in the log:\n{logged}");
    assert!(logged.contains(&format!(r#""principal":"{}|alice""#, op.issuer)));
}
