//! server::config::projects: the `projects` section — the one directory a `local_path` may be
//! read under (`local_path_root`, unset by default: every `local_path` is refused) — and the
//! paths askgate owns, which are never read through a `local_path` even under that root (N1).
//! It checks the root once, at startup; it does not decide a call.

use std::path::PathBuf;

use serde::Deserialize;

use super::{Config, ConfigError};

/// The `projects` section as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawProjects {
    /// The directory a `project_write` `local_path` is resolved against and must stay under.
    pub local_path_root: Option<PathBuf>,
}

const ROOT_KEY: &str = "projects.local_path_root";

impl RawProjects {
    /// The root, absolute and an existing directory; `None` when not configured.
    pub fn validate(self) -> Result<Option<PathBuf>, ConfigError> {
        let Some(root) = self.local_path_root else {
            return Ok(None);
        };
        if !root.is_absolute() {
            return Err(ConfigError::new(
                ROOT_KEY,
                format!("`{}` is not an absolute path", root.display()),
            ));
        }
        match std::fs::metadata(&root) {
            Ok(metadata) if metadata.is_dir() => Ok(Some(root)),
            Ok(_) => Err(ConfigError::new(
                ROOT_KEY,
                format!("`{}` is not a directory", root.display()),
            )),
            Err(error) => Err(ConfigError::new(
                ROOT_KEY,
                format!("`{}` cannot be used: {error}", root.display()),
            )),
        }
    }
}

/// The old key: `local_path` was resolved against it, and it defaulted to the directory `serve`
/// started in, which held the configuration file (N1). Its value is not echoed.
pub fn refuse_working_dir(given: bool) -> Result<(), ConfigError> {
    if !given {
        return Ok(());
    }
    Err(ConfigError::new(
        "working_dir",
        format!(
            "was removed: a `local_path` is read only under `{ROOT_KEY}` (unset by default, \
             which refuses every `local_path`)"
        ),
    ))
}

impl Config {
    /// What askgate owns on its own machine: the configuration file, the decision log, spill
    /// and policy directories. A `local_path` naming one of them, or anything under one of the
    /// directories, is refused (compared by device and inode, so links do not get around it).
    pub fn service_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.config_file.iter().cloned().collect();
        paths.extend(self.log.dir.iter().cloned());
        paths.push(self.spill_dir.clone());
        paths.extend(self.policies.iter().cloned());
        paths.extend(self.shadow_policies.iter().cloned());
        paths.extend(self.baseline.iter().cloned());
        paths
    }
}

#[cfg(test)]
mod tests {
    use super::super::RawConfig;
    use super::*;

    fn validate(json: &str) -> Result<Config, ConfigError> {
        Config::validate(serde_json::from_str::<RawConfig>(json).unwrap())
    }

    #[test]
    fn the_root_is_unset_by_default_and_must_be_an_absolute_directory() {
        assert_eq!(validate("{}").unwrap().local_path_root, None);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().display().to_string();
        let config = validate(&format!(
            r#"{{"projects": {{"local_path_root": "{root}"}}}}"#
        ));
        assert_eq!(config.unwrap().local_path_root, Some(dir.path().into()));
        let error = validate(r#"{"projects": {"local_path_root": "docs"}}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid configuration `projects.local_path_root`: `docs` is not an absolute path"
        );
        std::fs::write(dir.path().join("file"), "").unwrap();
        let file = format!(r#"{{"projects": {{"local_path_root": "{root}/file"}}}}"#);
        assert!(validate(&file)
            .unwrap_err()
            .to_string()
            .ends_with("/file` is not a directory"));
        let missing = format!(r#"{{"projects": {{"local_path_root": "{root}/missing"}}}}"#);
        assert_eq!(validate(&missing).unwrap_err().field, ROOT_KEY);
    }

    #[test]
    fn the_old_working_dir_key_is_refused_naming_the_root_without_its_value() {
        let error = validate(r#"{"working_dir": "/srv/secret-place"}"#).unwrap_err();
        assert_eq!(error.field, "working_dir");
        assert!(
            error.message.contains("`projects.local_path_root`"),
            "{error}"
        );
        assert!(!error.to_string().contains("secret-place"), "{error}");
    }

    #[test]
    fn the_service_paths_hold_the_config_file_and_every_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("askgate.json");
        let body = r#"{"log_dir": "/l", "spill_dir": "/s", "policies": ["/p"],
            "shadow_policies": ["/sh"], "baseline": "/b"}"#;
        std::fs::write(&file, body).unwrap();
        let config = Config::validate(RawConfig::from_file(&file).unwrap()).unwrap();
        let expected: Vec<PathBuf> = [file.to_str().unwrap(), "/l", "/s", "/p", "/sh", "/b"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(config.service_paths(), expected);
    }
}
