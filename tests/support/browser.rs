//! A real headless Chromium for end-to-end tests, driven over WebDriver (fantoccini) through
//! Debian's `chromedriver`. When the browser is missing and the tests run as root, it is
//! installed with apt on first use; otherwise the test fails saying what to install. Never a
//! silent skip.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder};
use serde_json::json;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

fn installed() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            if Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists() {
                return Ok(());
            }
            let root = Command::new("id")
                .arg("-u")
                .output()
                .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
                .unwrap_or(false);
            if !root {
                return Err(format!(
                    "{CHROMIUM} and {CHROMEDRIVER} are needed: install Debian's `chromium` and `chromium-driver` (apt-get install chromium chromium-driver)"
                ));
            }
            let status = Command::new("sh")
                .args(["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver"])
                .status()
                .map_err(|error| format!("apt-get could not run: {error}"))?;
            if status.success() && Path::new(CHROMEDRIVER).exists() {
                Ok(())
            } else {
                Err("apt-get install chromium chromium-driver failed".to_string())
            }
        })
        .clone()
}

/// A running chromedriver; killed on drop.
pub struct Driver {
    child: Child,
    pub url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    pub async fn start() -> Driver {
        if let Err(why) = installed() {
            panic!("the browser test needs a real browser: {why}");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|address| address.port())
            .expect("a free port");
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let url = format!("http://127.0.0.1:{port}");
        let driver = Driver { child, url };
        let status = format!("{}/status", driver.url);
        for _ in 0..100 {
            if reqwest::get(&status)
                .await
                .is_ok_and(|reply| reply.status().is_success())
            {
                return driver;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("chromedriver did not answer on {}", driver.url);
    }

    /// A new browser session (its own profile, so its own cookies).
    pub async fn browser(&self, profile: &Path, width: u32, height: u32) -> Client {
        let arguments = [
            "--headless=new".to_string(),
            "--no-sandbox".to_string(),
            "--disable-gpu".to_string(),
            "--disable-quic".to_string(),
            "--no-first-run".to_string(),
            "--disable-background-networking".to_string(),
            "--disable-component-update".to_string(),
            "--disable-sync".to_string(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.display()),
        ];
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".to_string(),
            json!({"binary": CHROMIUM, "args": arguments}),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        ClientBuilder::new(connector)
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("a browser session")
    }
}
