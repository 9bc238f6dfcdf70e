//! sandbox::tests: real HTTP on loopback for the transport, auth, token, consent, grants,
//! faults, concurrency and the state file.
use serde_json::json;

use super::testing::{start, start_with, TOKEN};
use super::SandboxConfig;

#[tokio::test]
async fn initialize_issues_a_session_and_counts() {
    let sandbox = start().await;
    let first = sandbox.initialize().await;
    let second = sandbox.initialize().await;
    assert_ne!(first, second);
    assert_eq!(sandbox.sandbox.stats()["initialize"], 2);
    let (status, body) = sandbox.rpc(&first, "tools/list", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["tools"].as_array().unwrap().len(), 20);
    let (_, stats) = sandbox.get("/_sandbox/stats").await;
    assert_eq!(stats["tools_list"], 1);
    assert_eq!(stats["requests"], 3);
}

#[tokio::test]
async fn sessions_are_required_and_unknown_ones_are_404() {
    let sandbox = start().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let request = sandbox
        .client
        .post(format!("{}/v1/design/mcp", sandbox.base))
        .bearer_auth(TOKEN)
        .json(&body);
    assert_eq!(sandbox.send(request).await.0, 400);
    let (status, body) = sandbox
        .rpc("no-such-session", "tools/list", json!({}))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("session_not_found"))
    );
    let session = sandbox.initialize().await;
    let (status, body) = sandbox.rpc(&session, "bogus/method", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(body["error"]["code"], -32601);
}

#[tokio::test]
async fn auth_rejects_missing_and_wrong_tokens() {
    let sandbox = start().await;
    let request = sandbox
        .client
        .get(format!("{}/v1/design/consent", sandbox.base));
    let (status, body, _) = sandbox.send(request).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_token"))
    );
    let request = sandbox
        .client
        .get(format!("{}/v1/design/consent", sandbox.base))
        .bearer_auth("nope");
    assert_eq!(sandbox.send(request).await.0, 401);
    let request = sandbox
        .client
        .get(format!("{}/v1/design/consent", sandbox.base))
        .bearer_auth("sandbox-session-token");
    assert_eq!(
        sandbox.send(request).await.0,
        401,
        "the session token is only for the session route"
    );
}

#[tokio::test]
async fn token_refresh_invalidates_the_old_token_and_widens_scopes() {
    let config = SandboxConfig {
        scopes: vec!["user:design:read".into()],
        ..SandboxConfig::default()
    };
    let sandbox = start_with(config).await;
    let url = format!("{}/v1/oauth/token", sandbox.base);
    let bad = json!({"grant_type": "refresh_token", "refresh_token": "unknown"});
    let (status, body, _) = sandbox.send(sandbox.client.post(&url).json(&bad)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let good = json!({"grant_type": "refresh_token", "refresh_token": "sandbox-refresh-token", "scope": "user:projects:read user:projects:write"});
    let (status, body, _) = sandbox.send(sandbox.client.post(&url).json(&good)).await;
    assert_eq!(status, 200);
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(
        body["scope"],
        "user:design:read user:projects:read user:projects:write"
    );
    let new_token = body["access_token"].as_str().unwrap();
    assert_eq!(sandbox.get("/v1/design/consent").await.0, 401);
    let request = sandbox
        .client
        .get(format!("{}/v1/design/consent", sandbox.base))
        .bearer_auth(new_token);
    assert_eq!(sandbox.send(request).await.0, 200);
    assert_eq!(sandbox.sandbox.stats()["token_refreshes"], 2);
}

#[tokio::test]
async fn consent_get_post_delete() {
    let sandbox = start().await;
    assert_eq!(
        sandbox.get("/v1/design/consent").await.1,
        json!({"agent_design_projects": false})
    );
    let request = sandbox
        .client
        .delete(format!("{}/v1/design/consent", sandbox.base))
        .bearer_auth(TOKEN);
    assert_eq!(sandbox.send(request).await.0, 404);
    assert_eq!(
        sandbox
            .post("/v1/design/consent", json!({"consent": "other"}))
            .await
            .0,
        400
    );
    sandbox.consent().await;
    assert_eq!(
        sandbox.get("/v1/design/consent").await.1["agent_design_projects"],
        true
    );
    let request = sandbox
        .client
        .delete(format!("{}/v1/design/consent", sandbox.base))
        .bearer_auth(TOKEN)
        .json(&json!({"consent": "agent_design_projects"}));
    assert_eq!(sandbox.send(request).await.0, 200);
    assert_eq!(
        sandbox.get("/v1/design/consent").await.1["agent_design_projects"],
        false
    );
    assert_eq!(sandbox.sandbox.stats()["consent_posts"], 2);
}

#[tokio::test]
async fn grants_post_and_list_with_404_for_shared_and_unknown() {
    let sandbox = start().await;
    assert_eq!(
        sandbox.get("/v1/design/grants").await.1,
        json!({"grants": []})
    );
    let (status, body) = sandbox
        .post("/v1/design/grants", json!({"project_id": "shared-1"}))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("not_grantable"))
    );
    assert_eq!(
        sandbox
            .post("/v1/design/grants", json!({"project_id": "nope"}))
            .await
            .0,
        404
    );
    let (status, body) = sandbox
        .post("/v1/design/grants", json!({"project_id": "p1"}))
        .await;
    assert_eq!(status, 200);
    let created_at = body["created_at"].as_str().unwrap().to_owned();
    assert!(time::OffsetDateTime::parse(
        &created_at,
        &time::format_description::well_known::Rfc3339
    )
    .is_ok());
    let (_, list) = sandbox.get("/v1/design/grants").await;
    assert_eq!(
        list["grants"],
        json!([{"project_id": "p1", "created_at": created_at}])
    );
    assert_eq!(sandbox.sandbox.stats()["grant_posts"], 3);
}

#[tokio::test]
async fn faults_session_token_status_delay_and_tool_filter() {
    let sandbox = start().await;
    let session = sandbox.initialize().await;
    sandbox.fault(json!({"fault": "session_expired"})).await;
    assert_eq!(sandbox.rpc(&session, "tools/list", json!({})).await.0, 404);
    assert_eq!(
        sandbox.rpc(&session, "tools/list", json!({})).await.0,
        404,
        "the session is gone"
    );
    let session = sandbox.initialize().await;
    sandbox
        .fault(json!({"fault": "token_expired", "count": 2, "tool": "list_projects"}))
        .await;
    assert_eq!(
        sandbox.rpc(&session, "tools/list", json!({})).await.0,
        200,
        "other calls pass"
    );
    assert_eq!(
        sandbox.call(&session, "list_projects", json!({})).await.0,
        401
    );
    assert_eq!(
        sandbox.call(&session, "list_projects", json!({})).await.0,
        401
    );
    assert_eq!(
        sandbox.call(&session, "list_projects", json!({})).await.0,
        403,
        "needs consent now"
    );
    sandbox
        .fault(json!({"fault": "status", "status": 503, "path_prefix": "/v1/design/grants"}))
        .await;
    assert_eq!(
        sandbox.get("/v1/design/consent").await.0,
        200,
        "prefix filter"
    );
    assert_eq!(sandbox.get("/v1/design/grants").await.0, 503);
    sandbox.fault(json!({"fault": "delay", "ms": 150})).await;
    let started = std::time::Instant::now();
    assert_eq!(sandbox.get("/v1/design/grants").await.0, 200);
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    assert_eq!(
        sandbox
            .post("/_sandbox/faults", json!({"fault": "melt"}))
            .await
            .0,
        400
    );
    sandbox.fault(json!({"fault": "status", "count": 5})).await;
    let request = sandbox
        .client
        .delete(format!("{}/_sandbox/faults", sandbox.base));
    assert_eq!(sandbox.send(request).await.0, 200);
    assert_eq!(sandbox.get("/v1/design/grants").await.0, 200, "cleared");
}

#[tokio::test]
async fn faults_sse_oversized_and_drop() {
    let sandbox = start().await;
    let session = sandbox.initialize().await;
    sandbox.fault(json!({"fault": "sse"})).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let request = || {
        sandbox
            .client
            .post(format!("{}/v1/design/mcp", sandbox.base))
            .bearer_auth(TOKEN)
            .header("mcp-session-id", &session)
            .json(&body)
    };
    let (status, _, headers) = sandbox.send(request()).await;
    assert_eq!(status, 200);
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    sandbox
        .fault(json!({"fault": "oversized", "bytes": 2_080_001}))
        .await;
    let response = request().send().await.unwrap();
    let bytes = response.bytes().await.unwrap();
    assert_eq!(bytes.len(), 2_080_001);
    assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
    sandbox.fault(json!({"fault": "drop"})).await;
    assert!(request().send().await.is_err(), "no response at all");
    assert_eq!(
        sandbox.send(request()).await.0,
        200,
        "the next connection works"
    );
}

#[tokio::test]
async fn fifty_concurrent_initializes_are_all_answered() {
    let sandbox = std::sync::Arc::new(start().await);
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let sandbox = sandbox.clone();
            tokio::spawn(async move { sandbox.initialize().await })
        })
        .collect();
    let mut sessions = std::collections::BTreeSet::new();
    for task in tasks {
        sessions.insert(task.await.unwrap());
    }
    assert_eq!(sessions.len(), 50);
    assert_eq!(sandbox.sandbox.stats()["initialize"], 50);
}

#[tokio::test]
async fn state_file_round_trip_and_reset() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("sandbox.json");
    let config = SandboxConfig {
        state_file: Some(path.clone()),
        ..SandboxConfig::default()
    };
    let sandbox = start_with(config.clone()).await;
    sandbox.consent().await;
    sandbox
        .post("/v1/design/grants", json!({"project_id": "p2"}))
        .await;
    let again = start_with(config).await;
    assert_eq!(
        again.get("/v1/design/consent").await.1["agent_design_projects"],
        true
    );
    assert_eq!(
        again.get("/v1/design/grants").await.1["grants"][0]["project_id"],
        "p2"
    );
    assert_eq!(again.post("/_sandbox/reset", json!({})).await.0, 200);
    assert_eq!(
        again.get("/v1/design/consent").await.1["agent_design_projects"],
        false
    );
    assert_eq!(again.sandbox.stats()["requests"], 1);
}
