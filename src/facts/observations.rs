//! facts::observations: what the upstream has told askgate, held as facts for a decision —
//! the server's grant list, raw `get_project` identities, the discovered catalog and the
//! attached Project's data. The executor gathers them; the decision core only reads them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::call::Catalog;

/// The result of `GET /v1/design/grants`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerGrants {
    /// false when the probe failed (old server, bad shape, network).
    pub available: bool,
    pub projects: BTreeSet<String>,
}

impl Default for ServerGrants {
    fn default() -> Self {
        Self {
            available: true,
            projects: BTreeSet::new(),
        }
    }
}

impl ServerGrants {
    /// `granted`, `not_granted` or `unavailable` for one project (client-facts §5.1 B6n).
    pub fn status(&self, project_id: &str) -> &'static str {
        if !self.available {
            "unavailable"
        } else if self.projects.contains(project_id) {
            "granted"
        } else {
            "not_granted"
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct DesignObservations {
    pub server_grants: ServerGrants,
    /// Raw `get_project` results by project id; sanitizing is part of gathering facts.
    pub project_identity: BTreeMap<String, serde_json::Value>,
    /// The discovered operation catalog; `None` before discovery.
    pub catalog: Option<Arc<Catalog>>,
}

/// One uploaded file of the attached Project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectFile {
    pub path: String,
    #[serde(default)]
    pub file_kind: Option<String>,
}

/// One text doc of the attached Project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectDoc {
    pub path: String,
}

/// What was seen of a `project_write` `local_path` when the call was decided: the executor
/// reads only a descriptor of this same file (device, inode, size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalFileStat {
    pub device: u64,
    pub inode: u64,
    pub bytes: u64,
}

/// Where a `project_write` `local_path` lies on askgate's machine, as established for the
/// decision (N1). Only `under_root` may be read; the policies refuse every other place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalPathPlace {
    /// Not established: nothing looked (hook mode, a failed look-up, an older record).
    #[default]
    Unknown,
    /// `projects.local_path_root` is not configured: no `local_path` is read.
    RootUnset,
    /// Outside the root, lexically or once symlinks are resolved.
    OutsideRoot,
    /// Under the root but lexically only: the path or the root could not be resolved.
    Unresolved,
    /// One of askgate's own files, or inside one of its directories (by device and inode).
    ServiceFile,
    /// Under the root, resolved, and none of askgate's own files.
    UnderRoot,
}

impl LocalPathPlace {
    /// The fact's value in the request context.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::RootUnset => "root_unset",
            Self::OutsideRoot => "outside_root",
            Self::Unresolved => "unresolved",
            Self::ServiceFile => "service_file",
            Self::UnderRoot => "under_root",
        }
    }
}

/// The attached Project's data (`detail`) and the credential's scopes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectsObservations {
    pub scopes: Vec<String>,
    /// The `detail` lookup was needed but failed (or has not run yet): the project's docs,
    /// uploads and knowledge stats are unknown (C11).
    pub detail_unavailable: bool,
    /// The `local_path` file as stat'ed for this decision; `None` when there is none or it
    /// could not be stat'ed.
    pub local_file: Option<LocalFileStat>,
    /// Where the `local_path` lies (`unknown` when nothing looked).
    pub local_path_place: LocalPathPlace,
    pub knowledge_size: Option<i64>,
    pub max_knowledge_size: Option<i64>,
    pub docs: Vec<ProjectDoc>,
    pub files: Vec<ProjectFile>,
}

#[derive(Debug, Clone, Default)]
pub struct Observations {
    pub design: DesignObservations,
    /// `None` when no data about the attached Project is at hand.
    pub projects: Option<ProjectsObservations>,
}
