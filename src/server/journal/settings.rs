//! server::journal::settings: the decision log's configuration — the flat `log_*` keys of the
//! config file, `--log-dir` and `--log-durability` — validated beside the journal that owns
//! them (issue 39 §1), and the journal opened from them.

use std::path::PathBuf;

use crate::audit::chain::{checkpoint, key};
use crate::audit::files::ReplicaId;
use crate::audit::writer::{self, DecisionLog, Durability, LogOptions};
use crate::server::config::{ConfigError, RawConfig};

/// The decision log's settings, validated.
#[derive(Debug, Clone)]
pub struct LogSettings {
    /// `log_dir`: no log without one.
    pub dir: Option<PathBuf>,
    /// `log_failure`: `refuse` (the default) refuses a call whose record cannot be written.
    pub refuse_without_log: bool,
    /// `log_durability`: `fsync` (the default) or `none`.
    pub fsync: bool,
    /// `log_sync_threads`: writer threads with fsync.
    pub sync_threads: usize,
    /// `log_room_bytes`: zero-filled room past the open file's last line.
    pub room_bytes: u64,
    /// `log_key_file`: the checkpoint key; `None`: the default beside the log.
    pub key_file: Option<PathBuf>,
    /// A signed checkpoint after this many records (`log_checkpoint_records`) or this long
    /// (`log_checkpoint_seconds`).
    pub checkpoint_records: u64,
    pub checkpoint_interval: std::time::Duration,
}

impl LogSettings {
    /// The `log_*` keys of `raw`, each checked by name.
    pub fn validate(raw: &RawConfig) -> Result<Self, ConfigError> {
        let refuse_without_log = match raw.log_failure.as_deref() {
            None | Some("refuse") => true,
            Some("allow") => false,
            Some(other) => {
                return Err(ConfigError::new(
                    "log_failure",
                    format!("`{other}` is not `refuse` or `allow`"),
                ))
            }
        };
        let fsync = match raw.log_durability.as_deref() {
            None | Some("fsync") => true,
            Some("none") => false,
            Some(other) => {
                return Err(ConfigError::new(
                    "log_durability",
                    format!("`{other}` is not `fsync` or `none`"),
                ))
            }
        };
        let max = writer::MAX_SYNC_THREADS;
        let sync_threads = match raw.log_sync_threads {
            None => writer::DEFAULT_SYNC_THREADS,
            Some(count) => usize::try_from(count)
                .ok()
                .filter(|count| (1..=max).contains(count))
                .ok_or_else(|| {
                    ConfigError::new("log_sync_threads", format!("{count} is not 1 to {max}"))
                })?,
        };
        let most = writer::MAX_ROOM_BYTES;
        let room_bytes = match raw.log_room_bytes {
            None => writer::DEFAULT_ROOM_BYTES,
            Some(bytes) if bytes <= most => bytes,
            Some(bytes) => {
                return Err(ConfigError::new(
                    "log_room_bytes",
                    format!("{bytes} is more than {most} bytes"),
                ))
            }
        };
        let checkpoint_records = match raw.log_checkpoint_records {
            None => checkpoint::DEFAULT_EVERY_RECORDS,
            Some(count) if count >= 1 => count,
            Some(count) => {
                return Err(ConfigError::new(
                    "log_checkpoint_records",
                    format!("{count} is not at least 1"),
                ))
            }
        };
        let checkpoint_interval = match raw.log_checkpoint_seconds {
            None => checkpoint::DEFAULT_INTERVAL,
            Some(seconds) if (1..=86_400).contains(&seconds) => {
                std::time::Duration::from_secs(seconds)
            }
            Some(seconds) => {
                return Err(ConfigError::new(
                    "log_checkpoint_seconds",
                    format!("{seconds} is not 1 to 86400"),
                ))
            }
        };
        Ok(Self {
            dir: raw.log_dir.clone(),
            refuse_without_log,
            fsync,
            sync_threads,
            room_bytes,
            key_file: raw.log_key_file.clone(),
            checkpoint_records,
            checkpoint_interval,
        })
    }

    /// The journal these settings describe: none without a directory; else the log opened
    /// with its checkpoint key (a key file the settings name must exist; the default one is
    /// made on first run). `replica` names the files.
    pub fn open(&self, replica: Option<&ReplicaId>) -> Result<super::Journal, String> {
        let Some(dir) = &self.dir else {
            return Ok(super::Journal::disabled());
        };
        let key = match &self.key_file {
            Some(path) => key::CheckpointKey::load(path, false),
            None => key::CheckpointKey::load(
                &key::default_key_path(dir, replica.map(ReplicaId::as_str)),
                true,
            ),
        }
        .map_err(|error| error.to_string())?;
        let public = key.public_hex();
        let options = LogOptions {
            durability: if self.fsync {
                Durability::Fsync
            } else {
                Durability::None
            },
            replica: replica.cloned(),
            sync_threads: self.sync_threads,
            room_bytes: self.room_bytes,
            checkpoints: Some(checkpoint::Checkpoints {
                key,
                every_records: self.checkpoint_records,
                interval: self.checkpoint_interval,
            }),
            ..LogOptions::default()
        };
        let log = DecisionLog::open(dir, options).map_err(|error| error.to_string())?;
        Ok(super::Journal::new(Some(log), self.refuse_without_log).with_checkpoint_key(public))
    }
}
