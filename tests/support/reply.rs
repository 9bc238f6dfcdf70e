//! support::reply: what every test of a running service reads back — one reply type, one
//! request helper, one session body — whether the service runs in this process
//! (`gateway::harness`, `reliability::harness`) or as `askgate serve` (`support::serve`,
//! `fleet::harness`).

use serde_json::{json, Value};

/// A status, the headers and a JSON body (the body as a JSON string when it is not JSON).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    pub fn decision(&self) -> &str {
        self.text("decision")
    }

    /// The body's string field `key` ("" when absent).
    pub fn text(&self, key: &str) -> &str {
        self.body[key].as_str().unwrap_or("")
    }

    pub fn policies(&self) -> Vec<String> {
        self.body["policies"]
            .as_array()
            .map(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The approval id of a 202 ask.
    pub fn approval_id(&self) -> String {
        assert_eq!(self.status, 202, "expected an ask: {}", self.body);
        self.body["approval"]["id"]
            .as_str()
            .expect("approval id")
            .to_string()
    }

    pub fn card_kind(&self) -> &str {
        self.body["approval"]["card"]["kind"].as_str().unwrap_or("")
    }
}

/// Sends `method url` with the bearer `token` and the JSON `body`, if any.
pub async fn send(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<Vec<u8>>,
) -> Result<Reply, reqwest::Error> {
    let mut request = http.request(method, url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body);
    }
    let response = request.send().await?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await?;
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Ok(Reply {
        status,
        headers,
        body,
    })
}

/// A main agent's interactive session in default mode, as the HTTP API takes it.
pub fn session(id: &str) -> Value {
    json!({"id": id, "agent": "main", "mode": "default", "interactive": true})
}
