//! A minimal MCP client over Streamable HTTP for the handler tests: `initialize` (keeping the
//! `Mcp-Session-Id`), then JSON-RPC requests whose answer may come as JSON or as an SSE stream.

use serde_json::{json, Value};

use super::harness::Gateway;

/// What one POST to `/mcp` answered: the status, the headers we look at, and every JSON-RPC
/// message it carried (one for JSON, any number for SSE).
#[derive(Debug)]
pub struct McpReply {
    pub status: u16,
    pub www_authenticate: Option<String>,
    pub session: Option<String>,
    pub messages: Vec<Value>,
    pub text: String,
}

impl McpReply {
    /// The response to the request with `id`.
    pub fn response(&self, id: u64) -> Value {
        self.messages
            .iter()
            .find(|message| message["id"] == json!(id))
            .cloned()
            .unwrap_or_else(|| panic!("no response {id}: {self:?}"))
    }
}

pub struct McpClient<'a> {
    pub gateway: &'a Gateway,
    pub token: Option<&'a str>,
    pub session: Option<String>,
    /// Speak 2026-07-28: no `initialize`, each request carries its version in `_meta` and the
    /// `Mcp-Method` / `Mcp-Name` headers (as Claude Code does by default).
    pub stateless: bool,
    /// Headers added to every request (`Origin`, ...).
    pub headers: Vec<(String, String)>,
    /// The capabilities a stateless client declares in each request's `_meta`.
    pub capabilities: Value,
    next_id: u64,
}

impl<'a> McpClient<'a> {
    pub fn new(gateway: &'a Gateway, token: Option<&'a str>) -> Self {
        Self {
            gateway,
            token,
            session: None,
            stateless: false,
            headers: Vec::new(),
            capabilities: json!({}),
            next_id: 1,
        }
    }

    /// A 2026-07-28 client: stateless, no `initialize`.
    pub fn stateless(gateway: &'a Gateway, token: Option<&'a str>) -> Self {
        Self {
            stateless: true,
            ..Self::new(gateway, token)
        }
    }

    pub async fn post(&self, body: Value) -> McpReply {
        let version = if self.stateless {
            "2026-07-28"
        } else {
            "2025-11-25"
        };
        let mut request = self
            .gateway
            .http
            .post(format!("{}/mcp", self.gateway.url))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", version);
        if self.stateless {
            if let Some(method) = body["method"].as_str() {
                request = request.header("mcp-method", method);
            }
            if let Some(name) = body["params"]["name"].as_str() {
                request = request.header("mcp-name", name);
            }
        }
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut request = request.body(body.to_string());
        if let Some(token) = self.token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await.expect("mcp request sent");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_string)
        };
        let status = response.status().as_u16();
        let www_authenticate = header("www-authenticate");
        let session = header("mcp-session-id");
        let text = response.text().await.expect("mcp body read");
        McpReply {
            status,
            www_authenticate,
            session,
            messages: messages(&text),
            text,
        }
    }

    /// `initialize` with `capabilities`, then `notifications/initialized`.
    pub async fn initialize(&mut self, capabilities: Value) -> McpReply {
        let reply = self
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                    "clientInfo": {"name": "askgate-tests", "version": "0"}}),
            )
            .await;
        self.session = reply.session.clone();
        if reply.status == 200 {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let ack = self.post(note).await;
            assert_eq!(ack.status, 202, "{ack:?}");
        }
        reply
    }

    pub async fn request(&mut self, method: &str, mut params: Value) -> McpReply {
        let id = self.next_id;
        self.next_id += 1;
        if self.stateless {
            let meta = &mut params["_meta"];
            meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
            meta["io.modelcontextprotocol/clientInfo"] =
                json!({"name": "askgate-tests", "version": "0"});
            meta["io.modelcontextprotocol/clientCapabilities"] = self.capabilities.clone();
        }
        self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    /// `tools/list`'s tool names.
    pub async fn tool_names(&mut self) -> Vec<String> {
        let reply = self.request("tools/list", json!({})).await;
        let id = self.next_id - 1;
        let response = reply.response(id);
        response["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools: {response}"))
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_string))
            .collect()
    }

    /// `tools/call`'s result (`content`, `isError`, ...), with the whole reply.
    pub async fn call(&mut self, name: &str, arguments: Value) -> (Value, McpReply) {
        self.call_with_meta(name, arguments, None).await
    }

    /// `tools/call` with these whole `params` (a retry's `requestState`, ...).
    pub async fn call_with_params(&mut self, params: Value) -> (Value, McpReply) {
        let reply = self.request("tools/call", params).await;
        let response = reply.response(self.next_id - 1);
        assert!(
            response.get("error").is_none(),
            "a JSON-RPC error: {response}"
        );
        (response["result"].clone(), reply)
    }

    pub async fn call_with_meta(
        &mut self,
        name: &str,
        arguments: Value,
        meta: Option<Value>,
    ) -> (Value, McpReply) {
        let mut params = json!({"name": name, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        let reply = self.request("tools/call", params).await;
        let response = reply.response(self.next_id - 1);
        assert!(
            response.get("error").is_none(),
            "a JSON-RPC error: {response}"
        );
        (response["result"].clone(), reply)
    }
}

/// The JSON-RPC messages of a JSON body or of every SSE `data:` line.
fn messages(text: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return vec![value];
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}
