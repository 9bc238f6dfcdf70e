//! Which PostgreSQL the fleet tests use (issue 20 §5): the server at
//! `ASKGATE_TEST_DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/test`) when it
//! answers, otherwise a throwaway cluster started once per test process — Debian's
//! `postgresql` binaries (installed with apt on first use when root), `initdb` into
//! `target/tmp/fleet-postgres/` as an unprivileged user, `postgres` on a free loopback port,
//! shut down when the test process exits. The tests never skip.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;
use tokio_postgres::NoTls;

/// The server URL the tests were given, or the default.
pub fn configured() -> String {
    std::env::var("ASKGATE_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// The server every fleet test of this process creates its databases on: resolved once.
pub async fn server_url() -> String {
    static SERVER: OnceCell<String> = OnceCell::const_new();
    SERVER
        .get_or_init(|| async { resolve(&configured()).await })
        .await
        .clone()
}

/// `configured` when a PostgreSQL answers there, else the URL of a new throwaway cluster
/// (said on stderr, with why).
pub async fn resolve(configured: &str) -> String {
    let cause = match answers(configured).await {
        Ok(()) => return configured.to_string(),
        Err(cause) => cause,
    };
    eprintln!("fleet tests: no PostgreSQL at {configured} ({cause}); starting a throwaway cluster");
    let started = tokio::task::spawn_blocking(start_throwaway)
        .await
        .expect("the cluster starter does not panic");
    match started {
        Ok(url) => {
            eprintln!("fleet tests: throwaway cluster at {url}");
            url
        }
        Err(why) => panic!(
            "no PostgreSQL at {configured} ({cause}), and no throwaway cluster either: {why}. \
             Set ASKGATE_TEST_DATABASE_URL, or install Debian's postgresql package"
        ),
    }
}

/// Whether a PostgreSQL accepts a connection at `url` within 5 s.
pub async fn answers(url: &str) -> Result<(), String> {
    let connected =
        tokio::time::timeout(Duration::from_secs(5), tokio_postgres::connect(url, NoTls)).await;
    match connected {
        Ok(Ok((client, connection))) => {
            tokio::spawn(connection);
            client
                .simple_query("SELECT 1")
                .await
                .map(drop)
                .map_err(|error| error.to_string())
        }
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("no answer within 5 s".to_string()),
    }
}

/// The uid and gid `initdb` and `postgres` run as when this process is root (they refuse to
/// run as root): `nobody` and `nogroup`.
const UNPRIVILEGED: (u32, u32) = (65_534, 65_534);

/// Starts a cluster and returns its URL. Blocking.
fn start_throwaway() -> Result<String, String> {
    let bin = postgres_binaries()?;
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fleet-postgres");
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    remove_stale_clusters(&root);
    let data = root.join(format!(
        "data-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir(&data).map_err(|e| format!("{}: {e}", data.display()))?;
    let as_root = rustix::process::geteuid().is_root();
    if as_root {
        std::os::unix::fs::chown(&data, Some(UNPRIVILEGED.0), Some(UNPRIVILEGED.1))
            .map_err(|e| format!("chown {}: {e}", data.display()))?;
    }
    let unprivileged = |command: &mut Command| {
        if as_root {
            command.uid(UNPRIVILEGED.0).gid(UNPRIVILEGED.1);
        }
        command.env("LC_ALL", "C").current_dir(&data);
    };

    let mut initdb = Command::new(bin.join("initdb"));
    initdb.args([
        "-U",
        "postgres",
        "-A",
        "trust",
        "--no-sync",
        "--no-locale",
        "-E",
        "UTF8",
    ]);
    initdb.arg("-D").arg(data.join("pgdata"));
    unprivileged(&mut initdb);
    let output = initdb
        .output()
        .map_err(|e| format!("initdb could not start: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "initdb failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }

    let port = super::harness::free_port();
    // A shell holds the server and stops it (fast shutdown) when its stdin, a pipe from this
    // process, closes: when the test process exits, however it exits.
    let script = format!(
        "\"$0\" -D pgdata -p {port} -k . -c listen_addresses=127.0.0.1 -c fsync=off \
         -c max_connections=400 -c shared_buffers=32MB >server.log 2>&1 & server=$!; \
         read _closed; kill -INT $server; wait $server"
    );
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(script)
        .arg(bin.join("postgres"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    unprivileged(&mut shell);
    let mut child = shell
        .spawn()
        .map_err(|e| format!("postgres could not start: {e}"))?;
    // The pipe's write end lives as long as this process: leaked on purpose.
    std::mem::forget(child.stdin.take());
    std::mem::forget(child);

    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    wait_until_it_answers(&url, &data)?;
    Ok(url)
}

/// The directory of `initdb` and `postgres`: Debian's newest `/usr/lib/postgresql/*/bin`, or
/// the one `initdb` on the `PATH` is in; installs the package first when neither is there and
/// this process is root.
fn postgres_binaries() -> Result<PathBuf, String> {
    if let Some(found) = find_binaries() {
        return Ok(found);
    }
    if !rustix::process::geteuid().is_root() {
        return Err(
            "no initdb (Debian's postgresql package is not installed, and installing \
                    it needs root)"
                .to_string(),
        );
    }
    eprintln!("fleet tests: installing Debian's postgresql package");
    let installed = Command::new("sh")
        .arg("-c")
        .arg("apt-get update -qq && apt-get install -y -qq postgresql >/dev/null")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("apt-get could not start: {e}"))?;
    if !installed.success() {
        return Err(format!("apt-get install postgresql failed ({installed})"));
    }
    find_binaries().ok_or_else(|| "no initdb after installing postgresql".to_string())
}

fn find_binaries() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("initdb"))
        .find(|initdb| initdb.is_file())
        .and_then(|initdb| initdb.canonicalize().ok())
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
}

/// Removes the data directories of earlier test processes that are no longer running.
fn remove_stale_clusters(root: &Path) {
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let owner = name
            .to_str()
            .and_then(|name| name.strip_prefix("data-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if owner.is_some_and(|pid| {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        }) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Polls `url` for 30 s; on failure the error carries the server's log.
fn wait_until_it_answers(url: &str, data: &Path) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let last = runtime.block_on(answers(url));
        match last {
            Ok(()) => return Ok(()),
            Err(cause) if Instant::now() >= deadline => {
                let log = std::fs::read_to_string(data.join("server.log")).unwrap_or_default();
                return Err(format!(
                    "postgres did not answer within 30 s ({cause}); its log:\n{log}"
                ));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// The throwaway path itself, on this machine whatever `ASKGATE_TEST_DATABASE_URL` says: a
/// URL where nothing listens resolves to a new cluster that answers, and a replica of the
/// real binary runs on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_server_answering_a_throwaway_cluster_serves_the_fleet() {
    let nobody = format!(
        "postgres://postgres@127.0.0.1:{}/test",
        super::harness::free_port()
    );
    assert!(answers(&nobody).await.is_err());
    let url = resolve(&nobody).await;
    assert_ne!(url, nobody);
    answers(&url).await.expect("the throwaway cluster answers");

    let database = super::harness::Database::fresh_on(&url, "throwaway").await;
    let root = tempfile::tempdir().unwrap();
    let policies = super::harness::ask_delete_policies(root.path());
    let replica = super::harness::Replica::start("a", root.path(), &database.url, &policies).await;
    let health = replica.healthz().await;
    assert_eq!(health.status, 200, "{:?}", health.body);
    assert_eq!(health.body["status"], "ok", "{:?}", health.body);
}
