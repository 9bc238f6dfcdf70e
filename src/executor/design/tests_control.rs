//! Tests of 403 signals, result mapping, redaction, consent, grants and identity over loopback.
use super::fake::{Fake, Fault, ACCESS};
use super::tests::client;
use super::*;
use std::sync::atomic::Ordering;

#[tokio::test]
async fn needs_consent_is_parsed() {
    let fake = Fake::start().await;
    let error = client(&fake)
        .call_tool(
            "needs_consent",
            &json!({"consent": "agent_design_projects"}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        error,
        DesignError::NeedsConsent {
            consent: "agent_design_projects".into()
        }
    );
}

#[tokio::test]
async fn needs_project_grant_is_parsed_at_the_longest_id() {
    let fake = Fake::start().await;
    let id = format!("a.b_c-{}", "9".repeat(72));
    let error = client(&fake)
        .call_tool("needs_grant", &json!({"project_id": id}))
        .await
        .unwrap_err();
    assert_eq!(error, DesignError::NeedsProjectGrant { project_id: id });
}

#[tokio::test]
async fn a_malformed_grant_signal_is_a_plain_403() {
    let fake = Fake::start().await;
    let design = client(&fake);
    for bad in [
        json!("9".repeat(79)),
        json!(""),
        json!("p/1"),
        json!("p 1"),
        json!(7),
        json!("é"),
    ] {
        let error = design
            .call_tool("needs_grant", &json!({"project_id": bad}))
            .await
            .unwrap_err();
        assert!(
            matches!(error, DesignError::Http { status: 403, .. }),
            "{bad}: {error:?}"
        );
    }
    let error = design
        .call_tool("needs_consent", &json!({"consent": "Bad Bit!"}))
        .await
        .unwrap_err();
    assert!(
        matches!(error, DesignError::Http { status: 403, .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn other_statuses_quote_a_cut_body() {
    let fake = Fake::start().await;
    let design = client(&fake);
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::Status(502, json!({"error": "é".repeat(300)})));
    let error = design
        .call_tool("write_files", &json!({}))
        .await
        .unwrap_err();
    let DesignError::Http {
        operation,
        status,
        body,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!((operation.as_str(), *status), ("write_files", 502));
    assert_eq!(body.chars().count(), 200);
    assert!(error
        .to_string()
        .starts_with("Claude Design write_files failed: HTTP 502 {\"error\":\"é"));
}

#[tokio::test]
async fn a_json_rpc_error_is_an_error_result_with_its_data() {
    let fake = Fake::start().await;
    let result = client(&fake)
        .call_tool("rpc_error", &json!({}))
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(
        result.content,
        vec![json!({"type": "text", "text": "bad arguments — {\"field\":\"path\"}"})]
    );
}

#[tokio::test]
async fn a_large_preview_is_replaced_and_a_small_one_kept() {
    let fake = Fake::start().await;
    let design = client(&fake);
    let large = design
        .call_tool("render_preview", &json!({"size": 200_000}))
        .await
        .unwrap();
    let notice = "[render_preview image omitted — 195KB exceeds 127KB cap]";
    assert_eq!(large.content[0], json!({"type": "text", "text": notice}));
    assert_eq!(large.notices, vec![notice.to_owned()]);
    let small = design
        .call_tool("render_preview", &json!({"size": 130_000}))
        .await
        .unwrap();
    assert_eq!(small.content[0]["type"], "image");
    let notice = "[ClaudeDesign result truncated — 1 block(s) (0k chars) omitted; aggregate over 127k-char cap]";
    assert_eq!(small.content[1], json!({"type": "text", "text": notice}));
}

#[tokio::test]
async fn the_token_is_redacted_in_every_error_kind() {
    let fake = Fake::start().await;
    let design = client(&fake);
    let leaked = design.call_tool("leak", &json!({})).await.unwrap_err();
    let grant = design
        .call_tool("needs_grant", &json!({"project_id": ACCESS}))
        .await
        .unwrap_err();
    fake.fault(Fault::TokenExpired);
    fake.fault(Fault::TokenExpired);
    let auth = design.call_tool("echo", &json!({})).await.unwrap_err();
    let unreachable = DesignClient::new(
        reqwest::Client::new(),
        DesignConfig::new(format!("http://127.0.0.1:9/{ACCESS}")),
        Arc::new(Credentials::new(
            reqwest::Client::new(),
            String::new(),
            ACCESS.into(),
            None,
        )),
    );
    let transport = unreachable.call_tool("echo", &json!({})).await.unwrap_err();
    assert!(
        matches!(transport, DesignError::Transport(_)),
        "{transport:?}"
    );
    for error in [leaked, grant, auth, transport] {
        let text = format!("{error} {error:?}");
        assert!(
            !text.contains(ACCESS) && !text.contains("sk-ant-oat01-refreshed"),
            "{text}"
        );
    }
    let leaked = design.call_tool("leak", &json!({})).await.unwrap_err();
    assert!(
        leaked
            .to_string()
            .contains("bad Bearer [redacted-oauth-token]"),
        "{leaked}"
    );
}

#[tokio::test]
async fn discovery_returns_the_tools_array() {
    let fake = Fake::start().await;
    let tools = client(&fake).discover().await.unwrap();
    assert_eq!(tools, json!({"tools": [{"name": "get_project"}]}));
    let fake = Fake::start().await;
    let design = client(&fake);
    design.discover().await.unwrap();
    fake.fault(Fault::Status(500, json!({})));
    assert_eq!(
        design.discover().await.unwrap_err(),
        DesignError::Discovery(500)
    );
    fake.fault(Fault::Status(200, json!({"result": {"tools": "no"}})));
    assert_eq!(
        design.discover().await.unwrap_err().to_string(),
        "Claude Design discovery failed: HTTP 200"
    );
}

#[tokio::test]
async fn consent_reads_records_and_revokes() {
    let fake = Fake::start().await;
    let design = client(&fake);
    assert_eq!(design.consent().await, None, "a 500 reads as unknown");
    *fake.state.consent.lock().unwrap() = Some(false);
    assert_eq!(design.consent().await, Some(false));
    design.record_consent().await.unwrap();
    assert_eq!(design.consent().await, Some(true));
    assert_eq!(Fake::count(&fake.state.consent_posts), 1);
    design.revoke_consent().await.unwrap();
    assert_eq!(design.consent().await, Some(false));
    design.revoke_consent().await.unwrap();
}

#[tokio::test]
async fn concurrent_grant_probes_share_one_request() {
    let fake = Fake::start().await;
    fake.state.grants_delay_ms.store(100, Ordering::SeqCst);
    *fake.state.grants_answer.lock().unwrap() = (
        200,
        json!({"grants": [{"project_id": "p1"}, {"project_id": 3}]}).to_string(),
    );
    let design = client(&fake);
    let probes = (0..20).map(|_| {
        let design = design.clone();
        tokio::spawn(async move { design.grants().await })
    });
    let expected = GrantProbe::Available(["p1".to_owned()].into());
    for probe in futures_util::future::join_all(probes).await {
        assert_eq!(probe.unwrap(), expected);
    }
    assert_eq!(Fake::count(&fake.state.grant_gets), 1);
    // No caching beyond the flight: the next probe asks again.
    assert_eq!(design.grants().await, expected);
    assert_eq!(Fake::count(&fake.state.grant_gets), 2);
}

#[tokio::test]
async fn each_unavailable_probe_names_its_reason() {
    let fake = Fake::start().await;
    let design = client(&fake);
    let cases = [
        ((404, "{}".to_owned()), "probe_404_old_server"),
        ((200, json!({"grants": {}}).to_string()), "probe_shape"),
        ((200, "not json".to_owned()), "probe_shape"),
        ((403, json!({"grants": []}).to_string()), "probe_shape"),
        ((503, "{}".to_owned()), "probe_network"),
        ((0, String::new()), "probe_network"),
    ];
    for (answer, reason) in cases {
        *fake.state.grants_answer.lock().unwrap() = answer.clone();
        assert_eq!(
            design.grants().await,
            GrantProbe::Unavailable(reason),
            "{answer:?}"
        );
    }
    let unreachable = super::tests::client(&Fake {
        state: Arc::clone(&fake.state),
        base_url: "http://127.0.0.1:9".into(),
    });
    assert_eq!(
        unreachable.grants().await,
        GrantProbe::Unavailable("probe_network")
    );
}

#[tokio::test]
async fn a_grant_is_recorded_or_found_ineligible() {
    let fake = Fake::start().await;
    let design = client(&fake);
    assert_eq!(
        design.record_grant("p1").await.unwrap(),
        GrantRecord::Recorded
    );
    assert_eq!(
        design.record_grant("shared-1").await.unwrap(),
        GrantRecord::NotEligible
    );
    let error = design.record_grant("boom").await.unwrap_err();
    assert!(
        matches!(error, DesignError::Http { status: 503, .. }),
        "{error:?}"
    );
    assert_eq!(Fake::count(&fake.state.grant_posts), 3);
}

#[tokio::test]
async fn the_project_identity_is_the_first_text_block_as_json() {
    let fake = Fake::start().await;
    let design = client(&fake);
    let identity = design.project_identity("p1").await.unwrap();
    assert_eq!(identity["name"], "Q3 deck");
    assert_eq!(identity["sharing"]["scope"], "invited");
    assert_eq!(design.project_identity("missing").await, None);
    assert_eq!(design.project_identity("garbled").await, None);
}
