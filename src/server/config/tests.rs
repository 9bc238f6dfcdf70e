//! server::config::tests: the refusals of `Config::validate` (C7, C12, the log's writer
//! threads) and the quoting rule of config file errors (C13); the binary's own refusals are in
//! `tests/hostile/config.rs`.
use super::*;

fn caller(token: &str) -> RawCaller {
    RawCaller {
        token: token.to_string(),
        role: Role::Approver,
        principal: "ops".to_string(),
        session: RawSessionDefaults::default(),
        may_claim: None,
        groups: Vec::new(),
        email: None,
        scopes: Vec::new(),
    }
}

fn with(listen: &str, callers: Vec<RawCaller>) -> Result<Config, ConfigError> {
    Config::validate(RawConfig {
        listen: Some(listen.to_string()),
        callers: Some(callers),
        ..RawConfig::default()
    })
}

#[test]
fn c7_demo_tokens_are_refused_only_off_loopback() {
    for token in [DEMO_AGENT_TOKEN, DEMO_APPROVER_TOKEN] {
        let error = with("0.0.0.0:8080", vec![caller(token)]).unwrap_err();
        assert_eq!(error.field, "callers[0].token");
        assert!(!error.to_string().contains(token), "{error}");
        assert!(with("[::]:8080", vec![caller(token)]).is_err());
        // On loopback the published tokens are what the demo callers are anyway.
        assert!(with("127.0.0.1:8080", vec![caller(token)]).is_ok());
    }
    assert!(with(
        "0.0.0.0:8080",
        vec![caller("a-secret-of-thirty-two-characters")]
    )
    .is_ok());
}

#[test]
fn weak_or_unusable_tokens_are_refused_without_echoing_them() {
    for token in [
        "sixteen-chars-ok",
        "thirty-one-characters-long-xxxx",
        "a-secret-of-thirty-two-chars\nwith-newline",
        "a secret of thirty-two characters",
        "a-secret-of-thirty-two-characters\t",
    ] {
        let error = with("127.0.0.1:8080", vec![caller(token)]).unwrap_err();
        assert_eq!(error.field, "callers[0].token", "{token:?}");
        assert!(!error.to_string().contains(token), "{error}");
    }
    let metrics = Config::validate(RawConfig {
        metrics_token: Some("short".to_string()),
        ..RawConfig::default()
    })
    .unwrap_err();
    assert_eq!(metrics.field, "metrics_token");
    assert!(!metrics.to_string().contains("short"), "{metrics}");
}

#[test]
fn c12_userinfo_in_the_upstream_is_refused_without_showing_it() {
    let credentials = Some(RawUpstreamCredentials {
        access_token: "t".to_string(),
        refresh_token: None,
        session_token: None,
        scopes: Vec::new(),
    });
    let upstream = |url: &str| {
        Config::validate(RawConfig {
            upstream: Some(url.to_string()),
            upstream_credentials: credentials.clone(),
            ..RawConfig::default()
        })
    };
    for url in [
        "http://user:PASS@127.0.0.1:9",
        "https://user@example.com",
        "http://:PASS@h",
    ] {
        let error = upstream(url).unwrap_err();
        assert_eq!(error.field, "upstream", "{url}");
        assert!(!error.to_string().contains("PASS"), "{error}");
        assert!(!error.to_string().contains("user@"), "{error}");
    }
    for url in ["ftp://h", "http://", "nonsense", "http://u:PASS@"] {
        let error = upstream(url).unwrap_err();
        assert!(!error.to_string().contains("PASS"), "{error}");
    }
    let config = upstream("http://127.0.0.1:9/").unwrap();
    assert_eq!(
        config.upstream,
        Upstream::Url("http://127.0.0.1:9".to_string())
    );
}

#[test]
fn n6_the_health_listener_needs_an_address_of_its_own() {
    let health = |address: &str| {
        Config::validate(RawConfig {
            listen: Some("127.0.0.1:8080".to_string()),
            health_listen: Some(address.to_string()),
            ..RawConfig::default()
        })
    };
    assert_eq!(
        health("127.0.0.1:8081").unwrap().health_listen,
        Some("127.0.0.1:8081".parse().unwrap())
    );
    let same = health("127.0.0.1:8080").unwrap_err();
    assert_eq!(same.field, "health_listen");
    assert!(same.message.contains("is the `listen` address"), "{same}");
    assert_eq!(health("nonsense").unwrap_err().field, "health_listen");
}

#[test]
fn issue_20_a_bad_replica_id_is_refused_naming_the_field() {
    let with = |id: &str| {
        Config::validate(RawConfig {
            replica_id: Some(id.to_string()),
            ..RawConfig::default()
        })
    };
    for id in ["", "Replica", "a_b", "a/b", "-a"] {
        let error = with(id).unwrap_err();
        assert_eq!(error.field, "replica_id", "{id:?}");
    }
    let config = with("eu-1").unwrap();
    assert_eq!(config.store.replica_id.unwrap().as_str(), "eu-1");
    assert!(Config::validate(RawConfig::default())
        .unwrap()
        .store
        .replica_id
        .is_none());
}

#[test]
fn log_room_bytes_default_to_none_and_are_bounded() {
    let room = |bytes: Option<u64>| {
        Config::validate(RawConfig {
            log_room_bytes: bytes,
            ..RawConfig::default()
        })
    };
    assert_eq!(room(None).unwrap().log.room_bytes, 0);
    assert_eq!(room(Some(1 << 20)).unwrap().log.room_bytes, 1 << 20);
    let error = room(Some(64 * 1024 * 1024 + 1)).unwrap_err();
    assert_eq!(error.field, "log_room_bytes");
    assert!(
        error.to_string().contains("is more than 67108864 bytes"),
        "{error}"
    );
}

#[test]
fn log_sync_threads_default_to_one_and_must_be_one_to_eight() {
    let threads = |count: Option<u64>| {
        Config::validate(RawConfig {
            log_sync_threads: count,
            ..RawConfig::default()
        })
    };
    assert_eq!(threads(None).unwrap().log.sync_threads, 1);
    assert_eq!(threads(Some(3)).unwrap().log.sync_threads, 3);
    for wrong in [0, 9, u64::MAX] {
        let error = threads(Some(wrong)).unwrap_err();
        assert_eq!(error.field, "log_sync_threads");
        assert!(error.to_string().contains("is not 1 to 8"), "{error}");
    }
}

#[test]
fn log_checkpoints_default_to_1000_records_or_60_seconds_and_are_bounded() {
    let checkpoints = |records: Option<u64>, seconds: Option<u64>| {
        Config::validate(RawConfig {
            log_checkpoint_records: records,
            log_checkpoint_seconds: seconds,
            ..RawConfig::default()
        })
    };
    let default = checkpoints(None, None).unwrap();
    assert_eq!(default.log.checkpoint_records, 1000);
    assert_eq!(
        default.log.checkpoint_interval,
        std::time::Duration::from_secs(60)
    );
    assert_eq!(default.log.key_file, None);
    let set = checkpoints(Some(5), Some(1)).unwrap();
    assert_eq!(set.log.checkpoint_records, 5);
    assert_eq!(
        set.log.checkpoint_interval,
        std::time::Duration::from_secs(1)
    );
    let error = checkpoints(Some(0), None).unwrap_err();
    assert_eq!(error.field, "log_checkpoint_records");
    for wrong in [0, 86_401] {
        let error = checkpoints(None, Some(wrong)).unwrap_err();
        assert_eq!(error.field, "log_checkpoint_seconds");
        assert!(error.to_string().contains("is not 1 to 86400"), "{error}");
    }
}
