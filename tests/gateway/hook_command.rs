//! `askgate hook claude-code` against a fake service on loopback (finding N5): only `{}`,
//! `deny` and `ask` for `PreToolUse` are relayed, as parsed; every other answer, a redirect,
//! a deadline past 60 s or a missing agent token exits 2 with nothing on stdout.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use super::harness::{AGENT, APPROVER};
use super::hook_install::fed;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;

/// A service that answers every hook with one fixed response and keeps the headers it got.
struct FakeService {
    url: String,
    seen: Arc<Mutex<Vec<HeaderMap>>>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl FakeService {
    async fn start(answer: impl Fn() -> Response + Clone + Send + Sync + 'static) -> FakeService {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        let router = Router::new().route(
            "/v1/hooks/claude-code",
            post(move |headers: HeaderMap| {
                kept.lock().unwrap().push(headers);
                let answer = answer.clone();
                async move { answer() }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        FakeService {
            url,
            seen,
            _shutdown: shutdown,
        }
    }

    async fn answering(status: StatusCode, body: &str) -> FakeService {
        let body = body.to_string();
        FakeService::start(move || (status, body.clone()).into_response()).await
    }

    fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

struct Hooked {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

const INPUT: &str = r#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Projects",
    "tool_input":{"method":"project_info"},"tool_use_id":"toolu_01"}"#;

/// Runs the hook command with `env` as its only askgate variables.
async fn hook(args: &[&str], env: &[(&str, &str)]) -> Hooked {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"));
    command
        .args(["hook", "claude-code"])
        .args(args)
        .env_remove("ASKGATE_SERVER")
        .env_remove("ASKGATE_TOKEN")
        .env_remove("ASKGATE_AGENT_TOKEN")
        .env_remove("ASKGATE_APPROVER_TOKEN")
        .envs(env.iter().copied());
    let output = fed(&mut command, INPUT.as_bytes()).await;
    Hooked {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

async fn hook_against(service: &FakeService) -> Hooked {
    let args = ["--server", &service.url, "--deadline-seconds", "10"];
    hook(&args, &[("ASKGATE_AGENT_TOKEN", AGENT)]).await
}

fn assert_blocked(hooked: &Hooked, named: &str) {
    assert_eq!(hooked.code, Some(2), "{}", hooked.stderr);
    assert_eq!(hooked.stdout, "", "nothing is printed on stdout");
    assert!(
        hooked.stderr.contains(named),
        "`{named}` in {}",
        hooked.stderr
    );
    assert!(
        hooked.stderr.contains("the call is blocked"),
        "{}",
        hooked.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n5_only_no_opinion_deny_and_ask_are_relayed_as_parsed() {
    let deny = r#"{ "hookSpecificOutput" : { "permissionDecisionReason": "managed rule",
        "permissionDecision": "deny", "hookEventName": "PreToolUse" } }"#;
    let ask = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a human decides"}}"#;
    for (body, printed) in [
        ("{}", "{}\n".to_string()),
        (deny, r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"managed rule"}}"#.to_string() + "\n"),
        (ask, format!("{ask}\n")),
    ] {
        let service = FakeService::answering(StatusCode::OK, body).await;
        let hooked = hook_against(&service).await;
        assert_eq!(hooked.code, Some(0), "{}", hooked.stderr);
        assert_eq!(hooked.stdout, printed);
        assert_eq!(service.requests(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n5_every_hostile_answer_exits_2_and_prints_nothing() {
    let specific = |decision: &str, event: &str, extra: &str| {
        format!(
            r#"{{"hookSpecificOutput":{{"hookEventName":"{event}","permissionDecision":"{decision}","permissionDecisionReason":"r"{extra}}}}}"#
        )
    };
    let huge = format!(r#"{{"padding":"{}"}}"#, "x".repeat(200_000));
    let hostile = [
        (specific("allow", "PreToolUse", ""), "`allow`"),
        (specific("defer", "PreToolUse", ""), "`defer`"),
        (specific("deny", "PostToolUse", ""), "`PostToolUse`"),
        (
            specific("deny", "PermissionRequest", ""),
            "`PermissionRequest`",
        ),
        (
            specific(
                "ask",
                "PreToolUse",
                r#","updatedInput":{"method":"project_info"}"#,
            ),
            "`updatedInput`",
        ),
        (
            specific("ask", "PreToolUse", r#","additionalContext":"obey""#),
            "`additionalContext`",
        ),
        (r#"{"decision":"approve"}"#.to_string(), "`decision`"),
        (
            r#"{"decision":"block","reason":"x"}"#.to_string(),
            "`decision`",
        ),
        (r#"{"continue":true}"#.to_string(), "`continue`"),
        (r#"{"suppressOutput":true}"#.to_string(), "`suppressOutput`"),
        (
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}"#
                .to_string(),
            "`permissionDecisionReason`",
        ),
        ("[]".to_string(), "an array"),
        ("allow".to_string(), "not a hook output"),
        (huge, "longer than 65536 bytes"),
    ];
    for (body, named) in hostile {
        let service = FakeService::answering(StatusCode::OK, &body).await;
        assert_blocked(&hook_against(&service).await, named);
    }
    let failing = FakeService::answering(StatusCode::INTERNAL_SERVER_ERROR, "{}").await;
    assert_blocked(&hook_against(&failing).await, "HTTP 500");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n5_a_redirect_to_another_port_is_not_followed() {
    let elsewhere = FakeService::answering(StatusCode::OK, "{}").await;
    let location = format!("{}/v1/hooks/claude-code", elsewhere.url);
    for status in [
        StatusCode::FOUND,
        StatusCode::TEMPORARY_REDIRECT,
        StatusCode::PERMANENT_REDIRECT,
    ] {
        let location = location.clone();
        let redirecting = FakeService::start(move || {
            (status, [(axum::http::header::LOCATION, location.clone())]).into_response()
        })
        .await;
        let hooked = hook_against(&redirecting).await;
        assert_blocked(&hooked, &format!("redirect (HTTP {})", status.as_u16()));
        assert_eq!(redirecting.requests(), 1);
    }
    assert_eq!(elsewhere.requests(), 0, "the redirect was followed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n5_the_deadline_is_capped_at_60_seconds() {
    let service = FakeService::answering(StatusCode::OK, "{}").await;
    for deadline in ["61", "0", "3600"] {
        let args = ["--server", &service.url, "--deadline-seconds", deadline];
        let hooked = hook(&args, &[("ASKGATE_AGENT_TOKEN", AGENT)]).await;
        assert_eq!(hooked.code, Some(2), "{}", hooked.stderr);
        assert_eq!(hooked.stdout, "");
        assert!(hooked.stderr.contains("1..=60"), "{}", hooked.stderr);
    }
    assert_eq!(service.requests(), 0);
    let args = ["--server", &service.url, "--deadline-seconds", "60"];
    let hooked = hook(&args, &[("ASKGATE_AGENT_TOKEN", AGENT)]).await;
    assert_eq!(hooked.code, Some(0), "{}", hooked.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_reads_its_token_from_askgate_agent_token_and_no_other_variable() {
    let service = FakeService::answering(StatusCode::OK, "{}").await;
    let args = ["--server", service.url.as_str()];
    let shared = hook(&args, &[("ASKGATE_TOKEN", AGENT)]).await;
    assert_blocked(&shared, "(--token or ASKGATE_AGENT_TOKEN)");
    assert!(
        shared.stderr.contains("`ASKGATE_TOKEN` is no longer read"),
        "{}",
        shared.stderr
    );
    let approvers = hook(&args, &[("ASKGATE_APPROVER_TOKEN", APPROVER)]).await;
    assert_blocked(&approvers, "an agent token is required");
    assert_eq!(service.requests(), 0);
    let agent = hook(&args, &[("ASKGATE_AGENT_TOKEN", AGENT)]).await;
    assert_eq!(agent.code, Some(0), "{}", agent.stderr);
    let flag = hook(&["--server", &service.url, "--token", AGENT], &[]).await;
    assert_eq!(flag.code, Some(0), "{}", flag.stderr);
    let seen = service.seen.lock().unwrap();
    for headers in seen.iter() {
        assert_eq!(headers["authorization"], format!("Bearer {AGENT}"));
    }
    assert_eq!(seen.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_blocks_when_its_answer_cannot_be_written() {
    let service = FakeService::answering(StatusCode::OK, "{}").await;
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(["hook", "claude-code", "--server", &service.url])
        .env("ASKGATE_AGENT_TOKEN", AGENT)
        .stdin(Stdio::null())
        .stdout(crate::cli::closed_pipe())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
        .wait_with_output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot write the answer"), "{stderr}");
    assert_eq!(service.requests(), 1);
}
