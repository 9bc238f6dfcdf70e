//! Issue 34 §2 with the real client's own OAuth flow: Claude Code, given only askgate's `/mcp`
//! URL and the IdP's client id for it, discovers the IdP from askgate's protected-resource
//! metadata (RFC 9728), signs a person in with the authorization code flow and PKCE (`claude
//! mcp login --no-browser` on a terminal; the person's side — the provider's login and consent
//! pages — driven over HTTP), keeps the token itself, and calls askgate with it: the decision is the
//! person's, named `iss|sub`, with the client's id.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::gateway::harness::Gateway;
use crate::support::claude_code::{command, spawn_on_terminal};
use crate::support::free_port;
use crate::support::oidc::Op;

/// Every line the client prints, stdout and stderr as they come.
fn output_lines(child: &mut tokio::process::Child) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let (send, lines) = tokio::sync::mpsc::unbounded_channel();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let pump = |reader: Box<dyn tokio::io::AsyncRead + Unpin + Send>| {
        let send = send.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
    };
    pump(Box::new(stdout));
    pump(Box::new(stderr));
    lines
}

/// The authorization URL at `issuer` the client printed (a terminal hyperlink: the URL ends
/// at the first control character of its escape sequence).
async fn printed_url(
    lines: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    issuer: &str,
) -> String {
    let mut seen = String::new();
    let found = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.recv().await {
            if let Some(start) = line.find(issuer) {
                let url: String = line[start..]
                    .chars()
                    .take_while(|c| !c.is_control() && !c.is_whitespace())
                    .collect();
                return Some(url);
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        None
    })
    .await;
    match found {
        Ok(Some(url)) => url,
        _ => panic!("the client printed no authorization URL at {issuer}: {seen}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i34_the_real_client_signs_a_person_in_with_its_own_oauth_flow_and_calls_as_them() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mcp = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let callback_port = free_port();
    let op = Op::start(json!({
        "clients": [
            {"client_id": "claude-code",
             "redirect_uris": [format!("http://localhost:{callback_port}/callback")]},
            {"client_id": "approver-bot", "client_secret": "approver-secret",
             "claims": {"groups": ["askgate-approvers"]}}
        ],
        "accounts": {"dev": {"groups": ["design"], "email": "dev@acme.test"}},
        "resources": {mcp.as_str(): {"scope": "askgate:agent askgate:read"}}
    }))
    .await;
    let logs = tempfile::tempdir().unwrap();
    let log_dir = logs.path().to_path_buf();
    let identity = json!({"issuers": [{
        "issuer": op.issuer,
        "audience": mcp,
        "agent_scopes": ["askgate:agent"],
        "approver_groups": ["askgate-approvers"],
    }]});
    let gateway = Gateway::start_on(listener, |raw| {
        raw.identity = Some(serde_json::from_value(identity).unwrap());
        raw.log_dir = Some(log_dir);
    })
    .await;
    let approver = op
        .client_credentials("approver-bot", "approver-secret", &mcp, "askgate:read")
        .await;
    let consent = gateway
        .post("/v1/design/consent", Some(&approver), None)
        .await;
    assert_eq!(consent.status, 200, "{}", consent.body);

    // The client knows askgate's URL and the IdP's client id: no token, no secret.
    let home = tempfile::tempdir().unwrap();
    let port = callback_port.to_string();
    let (added, printed) = command(
        home.path(),
        &[
            "mcp",
            "add",
            "--transport",
            "http",
            "--client-id",
            "claude-code",
            "--callback-port",
            &port,
            "askgate",
            &mcp,
        ],
        Duration::from_secs(60),
    )
    .await;
    assert!(added, "{printed}");

    // Signing in on a terminal: the client prints the authorization URL and asks for the
    // redirect URL back.
    let mut login = spawn_on_terminal(
        home.path(),
        &["mcp", "login", "askgate", "--no-browser"],
        &[],
    );
    let mut lines = output_lines(&mut login);
    let authorize = printed_url(&mut lines, &op.issuer).await;
    for parameter in [
        "code_challenge_method=S256",
        "client_id=claude-code",
        "resource=",
    ] {
        assert!(authorize.contains(parameter), "{parameter}: {authorize}");
    }
    // The person signs in at the provider; the provider sends the browser back to the client.
    let back = op.authorize(&authorize, "dev").await;
    assert!(
        back.contains(&format!(":{callback_port}/callback?code=")),
        "{back}"
    );
    // The person pastes the redirect URL back at the client's prompt (its `--no-browser`
    // path; the loopback listener races its own exit in this version).
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = login.stdin.take().unwrap();
        stdin
            .write_all(format!("{back}\r").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        // Kept open until the client is done: `script` ends the session at end of input.
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(120)).await;
            drop(stdin);
        });
    }
    let status = tokio::time::timeout(Duration::from_secs(60), login.wait())
        .await
        .expect("the login ends")
        .unwrap();
    let mut rest = String::new();
    while let Ok(line) = lines.try_recv() {
        rest.push_str(&line);
        rest.push('\n');
    }
    assert!(status.success(), "login: {status}; {rest}");

    super::idp::lists_projects(home.path(), None).await;
    assert_eq!(gateway.tool_calls("list_projects").await, 1);

    let decided = super::idp::decisions(logs.path(), "list_projects");
    assert_eq!(decided.len(), 1, "{decided:?}");
    let caller = &decided[0]["facts"]["context"]["caller"];
    assert_eq!(
        caller["principal"],
        format!("{}|dev", op.issuer),
        "{caller}"
    );
    assert_eq!(caller["client"], "claude-code", "{caller}");
}
