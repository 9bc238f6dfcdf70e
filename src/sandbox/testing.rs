//! sandbox::testing: starts a sandbox on 127.0.0.1:0 for the HTTP tests and speaks to it with
//! reqwest. Test-only; it must not be used outside `#[cfg(test)]`.
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::{Sandbox, SandboxConfig};

pub const TOKEN: &str = "sandbox-access-token";

pub struct Running {
    pub base: String,
    pub sandbox: Sandbox,
    pub client: reqwest::Client,
    _stop: oneshot::Sender<()>,
}

pub async fn start() -> Running {
    start_with(SandboxConfig::default()).await
}

pub async fn start_with(config: SandboxConfig) -> Running {
    let sandbox = Sandbox::new(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let server = sandbox.clone();
    tokio::spawn(async move {
        let _ = server
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await;
    });
    Running {
        base,
        sandbox,
        client: reqwest::Client::new(),
        _stop: stop,
    }
}

impl Running {
    pub async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> (u16, Value, reqwest::header::HeaderMap) {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
            headers,
        )
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .json(&body);
        let (status, body, _) = self.send(request).await;
        (status, body)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let request = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        let (status, body, _) = self.send(request).await;
        (status, body)
    }

    pub async fn initialize(&self) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}});
        let request = self
            .client
            .post(format!("{}/v1/design/mcp", self.base))
            .bearer_auth(TOKEN)
            .json(&body);
        let (status, _, headers) = self.send(request).await;
        assert_eq!(status, 200);
        headers["mcp-session-id"].to_str().unwrap().to_owned()
    }

    pub async fn rpc(&self, session: &str, method: &str, params: Value) -> (u16, Value) {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let request = self
            .client
            .post(format!("{}/v1/design/mcp", self.base))
            .bearer_auth(TOKEN)
            .header("mcp-session-id", session)
            .json(&body);
        let (status, body, _) = self.send(request).await;
        (status, body)
    }

    pub async fn call(&self, session: &str, tool: &str, arguments: Value) -> (u16, Value) {
        self.rpc(
            session,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    /// The parsed JSON of the first text block of a successful call.
    pub async fn call_ok(&self, session: &str, tool: &str, arguments: Value) -> Value {
        let (status, body) = self.call(session, tool, arguments).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["isError"], false, "{body}");
        let text = body["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        serde_json::from_str(text).unwrap_or(Value::String(text.to_owned()))
    }

    pub async fn consent(&self) {
        let (status, _) = self
            .post(
                "/v1/design/consent",
                json!({"consent": "agent_design_projects"}),
            )
            .await;
        assert_eq!(status, 200);
    }

    pub async fn fault(&self, body: Value) {
        let (status, answer) = self.post("/_sandbox/faults", body).await;
        assert_eq!(status, 200, "{answer}");
    }
}
