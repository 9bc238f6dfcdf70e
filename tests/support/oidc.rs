//! A real OpenID provider for the identity tests: npm `oidc-provider` (pinned in
//! `tests/support/oidc/package.json` and its lock file) installed once into the git-ignored
//! `target/oidc-provider/`, started on a loopback port by `tests/support/oidc/op.mjs`.
//! Discovery, JWKS, client credentials with RFC 8707 resource indicators (JWT access tokens),
//! the code flow with the development login form, and the script's control routes: rotate the
//! signing keys, mint a token with chosen claims signed by the current key, a key's PEM, and
//! how many key documents were served.
//!
//! Never skips: when Node.js or the package cannot be had the test fails saying why.

mod signin;

pub use signin::CodeClient;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The pinned provider (reference/identity-facts.md).
pub const VERSION: &str = "9.13.3";
const SOURCE: &str = "tests/support/oidc";

/// The directory holding `node_modules/oidc-provider`, installing it on first use.
pub fn installed() -> PathBuf {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match INSTALLED.get_or_init(install) {
        Ok(path) => path.clone(),
        Err(why) => panic!("the test OpenID provider is needed and could not be had: {why}"),
    }
}

/// Installs the pinned package when missing, and copies the script next to it (once per test
/// process, before any provider of this process starts).
fn install() -> Result<PathBuf, String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.join("target/oidc-provider");
    if installed_version(&root).as_deref() != Some(VERSION) {
        npm_ci(manifest, &root)?;
    }
    // Written aside and renamed, so a provider of another test process never reads half of it.
    let aside = root.join(format!("op.mjs.{}", std::process::id()));
    std::fs::copy(manifest.join(SOURCE).join("op.mjs"), &aside)
        .and_then(|_| std::fs::rename(&aside, root.join("op.mjs")))
        .map_err(|error| format!("op.mjs: {error}"))?;
    Ok(root)
}

fn npm_ci(manifest: &Path, root: &Path) -> Result<(), String> {
    std::fs::create_dir_all(root).map_err(|error| format!("{}: {error}", root.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(manifest.join(SOURCE).join(file), root.join(file))
            .map_err(|error| format!("{file}: {error}"))?;
    }
    let output = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefix"])
        .arg(root)
        .output()
        .map_err(|error| format!("`npm` could not run ({error}): install Node.js and npm"))?;
    if !output.status.success() {
        return Err(format!(
            "`npm ci` in {} failed: {}",
            root.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    match installed_version(root) {
        Some(version) if version == VERSION => Ok(()),
        other => Err(format!("installed oidc-provider {other:?}, not {VERSION}")),
    }
}

fn installed_version(root: &Path) -> Option<String> {
    let text =
        std::fs::read_to_string(root.join("node_modules/oidc-provider/package.json")).ok()?;
    let package: Value = serde_json::from_str(&text).ok()?;
    package["version"].as_str().map(str::to_string)
}

/// A running provider; killed when dropped (and it exits by itself when its stdin closes).
pub struct Op {
    pub issuer: String,
    child: tokio::process::Child,
    http: reqwest::Client,
}

impl Op {
    /// Starts a provider with `config` (see `op.mjs`: `clients`, `resources`, `accounts`,
    /// `jwks_max_age`).
    pub async fn start(config: Value) -> Op {
        // The script was copied beside its node_modules once, by `installed()`: copying it again
        // here would tear it under a provider another test is starting (found in CI: a node
        // that read a half-written op.mjs printed nothing and exited).
        let root = installed();
        let mut child = tokio::process::Command::new("node")
            .arg(root.join("op.mjs"))
            .current_dir(&root)
            .env("OP_CONFIG", config.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs (install Node.js)");
        let stdout = child.stdout.take().expect("stdout piped");
        let mut stderr = child.stderr.take().expect("stderr piped");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(30), stdout.read_line(&mut line))
            .await
            .expect("the provider started within 30 s")
            .expect("the provider's first line");
        let started: Value = match serde_json::from_str(&line) {
            Ok(started) => started,
            Err(error) => {
                let mut why = Vec::new();
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    tokio::io::AsyncReadExt::read_to_end(&mut stderr, &mut why),
                )
                .await;
                panic!(
                    "the provider printed `{line}` ({error}); its stderr: {}",
                    String::from_utf8_lossy(&why)
                )
            }
        };
        // Whatever it prints later is drained: a closed pipe would kill it on its next write.
        tokio::spawn(async move { tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await });
        tokio::spawn(async move { tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await });
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Op {
            issuer: started["issuer"].as_str().unwrap().to_string(),
            child,
            http,
        }
    }

    /// A JWT access token by client credentials for `resource` (RFC 8707) with `scope`.
    pub async fn client_credentials(
        &self,
        client: &str,
        secret: &str,
        resource: &str,
        scope: &str,
    ) -> String {
        let response = self
            .http
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(secret))
            .form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ])
            .send()
            .await
            .expect("the token endpoint answers");
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON token response");
        assert!(status.is_success(), "client credentials: {status} {body}");
        body["access_token"].as_str().unwrap().to_string()
    }

    /// A token with exactly `claims` (no `iss` added) and `header` fields over the defaults
    /// (`alg`, the current key's `kid`, `typ: at+jwt`), signed with the current `alg` key.
    pub async fn mint(&self, claims: Value, header: Value, alg: &str) -> String {
        let body = self
            .control_post(
                "mint",
                json!({"claims": claims, "header": header, "alg": alg}),
            )
            .await;
        body["token"].as_str().unwrap().to_string()
    }

    /// New signing keys from now on; the previous ones stay published.
    pub async fn rotate(&self) -> Value {
        self.control_post("rotate", json!({})).await
    }

    /// The SPKI PEM of published key `kid`.
    pub async fn public_pem(&self, kid: &str) -> String {
        let url = format!("{}/control/pem?kid={kid}", self.issuer);
        let body: Value = self
            .http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        body["pem"].as_str().unwrap().to_string()
    }

    /// `{discovery, jwks, rotations}`: documents served so far.
    pub async fn stats(&self) -> Value {
        let url = format!("{}/control/stats", self.issuer);
        self.http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The published key set.
    pub async fn jwks(&self) -> Value {
        let url = format!("{}/jwks", self.issuer);
        self.http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Stops the provider: its port refuses connections from now on.
    pub async fn stop(&mut self) {
        self.child.kill().await.expect("the provider is killed");
    }

    async fn control_post(&self, route: &str, body: Value) -> Value {
        let response = self
            .http
            .post(format!("{}/control/{route}", self.issuer))
            .json(&body)
            .send()
            .await
            .expect("the control route answers");
        assert!(
            response.status().is_success(),
            "control/{route}: {}",
            response.status()
        );
        response.json().await.unwrap()
    }
}
