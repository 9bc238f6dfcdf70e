//! server::telemetry::client: the OTLP exporters' HTTP client — the service's own reqwest
//! client, run on the service's runtime. The SDK's batch processors export from threads of
//! their own; each request is handed to the runtime and awaited there, with a deadline and a
//! bound on the answer read.

use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// How long one export may take (the SDK's `OTEL_EXPORTER_OTLP_TIMEOUT` default).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// What is read of a collector's answer (a partial-success message is small).
const ANSWER_BYTES: usize = 64 * 1024;

/// An exporter's client: requests run on `runtime`.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl Client {
    pub fn new(runtime: tokio::runtime::Handle) -> Self {
        Self {
            http: reqwest::Client::new(),
            runtime,
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let http = self.http.clone();
        let exchange = async move {
            let mut response = http
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .timeout(EXPORT_TIMEOUT)
                .send()
                .await?;
            let status = response.status();
            let headers = response.headers().clone();
            let mut answer = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                let room = ANSWER_BYTES.saturating_sub(answer.len());
                answer.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
                if answer.len() >= ANSWER_BYTES {
                    break;
                }
            }
            Ok::<_, reqwest::Error>((status, headers, answer))
        };
        let (status, headers, answer) = self.runtime.spawn(exchange).await??;
        let mut response = Response::new(Bytes::from(answer));
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        Ok(response)
    }
}
