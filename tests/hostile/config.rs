//! The `askgate serve` binary refusing unsafe configurations before it listens (C7, C12,
//! C13): the published demo tokens as callers off loopback, credentials in the upstream URL,
//! and a secret in the wrong place — none of them echoed in the error.

use std::process::Command;

struct Refusal {
    code: i32,
    stdout: String,
    stderr: String,
}

fn serve_with_config(config: &serde_json::Value) -> Refusal {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("askgate.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(["serve", "--watch-seconds", "0", "--config"])
        .arg(&path)
        .env_remove("ASKGATE_LISTEN")
        .env_remove("ASKGATE_UPSTREAM")
        .output()
        .expect("askgate runs");
    Refusal {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn c7_demo_tokens_are_refused_as_callers_off_loopback() {
    for token in ["askgate-demo-approver-token", "askgate-demo-agent-token"] {
        let refusal = serve_with_config(&serde_json::json!({
            "listen": "0.0.0.0:0",
            "callers": [
                {"token": "a-real-agent-secret-0001-abcdefghij", "role": "agent", "principal": "a"},
                {"token": token, "role": "approver", "principal": "ops"}
            ]
        }));
        assert_eq!(refusal.code, 2, "{}", refusal.stderr);
        assert!(
            refusal
                .stderr
                .contains("`callers[1].token`: is a published demo token"),
            "{}",
            refusal.stderr
        );
        assert!(
            refusal.stdout.is_empty(),
            "nothing started: {}",
            refusal.stdout
        );
    }
}

#[test]
fn c12_credentials_in_the_upstream_url_are_refused_and_not_printed() {
    let refusal = serve_with_config(&serde_json::json!({
        "upstream": "http://user:SECRET-PASSWORD@127.0.0.1:9",
        "upstream_credentials": {"access_token": "a-token"}
    }));
    assert_eq!(refusal.code, 2, "{}", refusal.stderr);
    assert!(
        refusal.stderr.contains("must not carry credentials"),
        "{}",
        refusal.stderr
    );
    assert!(
        refusal.stderr.contains("http://127.0.0.1:9/"),
        "{}",
        refusal.stderr
    );
    assert!(!refusal.stderr.contains("SECRET"), "{}", refusal.stderr);
    assert!(!refusal.stdout.contains("SECRET"), "{}", refusal.stdout);
    // Neither is a password in a URL that does not parse.
    let refusal = serve_with_config(&serde_json::json!({
        "upstream": "http://user:SECRET-PASSWORD@",
        "upstream_credentials": {"access_token": "a-token"}
    }));
    assert_eq!(refusal.code, 2, "{}", refusal.stderr);
    assert!(!refusal.stderr.contains("SECRET"), "{}", refusal.stderr);
}

#[test]
fn c13_a_mistyped_secret_is_not_echoed_in_the_config_error() {
    for config in [
        serde_json::json!({"upstream_credentials": "SECRET-TOKEN"}),
        serde_json::json!({"callers": "SECRET-TOKEN"}),
        serde_json::json!({"callers": [{"token": ["SECRET-TOKEN"], "role": "agent", "principal": "a"}]}),
        serde_json::json!({"upstream_credentials": {"access_token": 5, "refresh_token": "SECRET-TOKEN"}}),
        serde_json::json!({"callers": [{"token": "SECRET\"TOKEN-with-quote", "role": "boss", "principal": "a"}]}),
    ] {
        let refusal = serve_with_config(&config);
        assert_eq!(refusal.code, 2, "{config}: {}", refusal.stderr);
        assert!(
            refusal.stderr.contains("invalid configuration `config`"),
            "{}",
            refusal.stderr
        );
        assert!(
            !refusal.stderr.contains("SECRET"),
            "{config}: {}",
            refusal.stderr
        );
        assert!(
            !refusal.stderr.contains("TOKEN"),
            "{config}: {}",
            refusal.stderr
        );
    }
}

#[test]
fn http_limits_are_validated_with_the_field_named() {
    for (http, field) in [
        (
            serde_json::json!({"header_read_timeout_ms": 0}),
            "http.header_read_timeout_ms",
        ),
        (
            serde_json::json!({"idle_timeout_ms": 60000}),
            "http.idle_timeout_ms",
        ),
        (
            serde_json::json!({"reserved_connections": 0}),
            "http.reserved_connections",
        ),
        (
            serde_json::json!({"max_connections": 0}),
            "http.max_connections",
        ),
    ] {
        let refusal = serve_with_config(&serde_json::json!({ "http": http }));
        assert_eq!(refusal.code, 2, "{}", refusal.stderr);
        assert!(
            refusal.stderr.contains(&format!("`{field}`")),
            "{}",
            refusal.stderr
        );
    }
}
