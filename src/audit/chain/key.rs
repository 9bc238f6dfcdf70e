//! audit::chain::key: the replica's Ed25519 checkpoint key — read from the file the config
//! names, or generated on first run (32 random bytes, hex, mode 0600) for the default file
//! beside the log — and public keys as `log verify --key` takes them (64 hex digits, or a file
//! holding them). It signs nothing itself (that is `checkpoint`'s).

use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};

use super::{hex, LineHash};

/// A replica's signing key.
#[derive(Clone)]
pub struct CheckpointKey {
    key: SigningKey,
}

impl std::fmt::Debug for CheckpointKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "CheckpointKey({})", self.public_hex())
    }
}

impl PartialEq for CheckpointKey {
    fn eq(&self, other: &Self) -> bool {
        self.key.verifying_key() == other.key.verifying_key()
    }
}

impl Eq for CheckpointKey {}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the log's checkpoint key `{path}`: {message}")]
pub struct KeyError {
    pub path: String,
    pub message: String,
}

impl CheckpointKey {
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// Reads the key at `path`; when `generate` and no file is there, makes a new one there
    /// (mode 0600, never overwriting a file).
    pub fn load(path: &Path, generate: bool) -> Result<Self, KeyError> {
        let error = |message: String| KeyError {
            path: path.display().to_string(),
            message,
        };
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let seed = LineHash::parse(text.trim().as_bytes()).ok_or_else(|| {
                    error("not 64 lowercase hex digits (an Ed25519 private key seed)".to_string())
                })?;
                Ok(Self::from_seed(seed.0))
            }
            Err(missing) if generate && missing.kind() == std::io::ErrorKind::NotFound => {
                let mut seed = [0u8; 32];
                getrandom::fill(&mut seed).map_err(|cause| error(cause.to_string()))?;
                write_new(path, &format!("{}\n", hex(&seed)))
                    .map_err(|cause| error(cause.to_string()))?;
                Ok(Self::from_seed(seed))
            }
            Err(cause) => Err(error(cause.to_string())),
        }
    }

    pub fn signing(&self) -> &SigningKey {
        &self.key
    }

    /// The public key as `log verify --key` takes it.
    pub fn public_hex(&self) -> String {
        hex(self.key.verifying_key().as_bytes())
    }
}

/// The default key file in the log directory: one per replica, so replicas sharing a volume
/// sign with keys of their own.
pub fn default_key_path(log_dir: &Path, replica: Option<&str>) -> PathBuf {
    match replica {
        Some(replica) => log_dir.join(format!("checkpoint-{replica}.key")),
        None => log_dir.join("checkpoint.key"),
    }
}

/// Creates `path` with `text`, readable by its owner only; fails if it exists.
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

/// A public key given to `log verify --key`: 64 hex digits, or a file holding them.
pub fn parse_public(given: &str) -> Result<VerifyingKey, String> {
    let text = if LineHash::parse(given.trim().as_bytes()).is_some() {
        given.trim().to_string()
    } else {
        std::fs::read_to_string(given)
            .map_err(|error| {
                format!("`{given}` is neither 64 hex digits nor a readable file: {error}")
            })?
            .trim()
            .to_string()
    };
    let bytes = LineHash::parse(text.as_bytes())
        .ok_or_else(|| format!("`{given}`: a public key is 64 lowercase hex digits"))?;
    VerifyingKey::from_bytes(&bytes.0).map_err(|error| format!("`{given}`: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_is_private_to_its_owner_and_read_back() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = default_key_path(dir.path(), Some("a"));
        assert!(
            CheckpointKey::load(&path, false).is_err(),
            "no file, no generation"
        );
        let made = CheckpointKey::load(&path, true).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(CheckpointKey::load(&path, true).unwrap(), made);
        let public = parse_public(&made.public_hex()).unwrap();
        assert_eq!(public, made.signing().verifying_key());
        std::fs::write(dir.path().join("bad.key"), "not a key").unwrap();
        let error = CheckpointKey::load(&dir.path().join("bad.key"), true).unwrap_err();
        assert!(error.message.contains("64 lowercase hex"), "{error}");
    }
}
