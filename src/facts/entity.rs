//! facts::entity: references to Cedar entities by type and id, built without the Cedar parser
//! so any id (quotes, slashes, unicode) is carried exactly.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::OnceLock;

use cedar_policy::{EntityId, EntityTypeName, EntityUid};
use serde::{Deserialize, Serialize};

use crate::authz::EvaluationError;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityRef {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

/// The entity types the schema declares; parsed once.
const TYPES: &[&str] = &[
    "Action",
    "Agent",
    "DesignProject",
    "DesignWorkspace",
    "AttachedProject",
];

fn type_names() -> &'static HashMap<&'static str, EntityTypeName> {
    static NAMES: OnceLock<HashMap<&'static str, EntityTypeName>> = OnceLock::new();
    NAMES.get_or_init(|| {
        TYPES
            .iter()
            .filter_map(|name| {
                EntityTypeName::from_str(name)
                    .ok()
                    .map(|parsed| (*name, parsed))
            })
            .collect()
    })
}

impl EntityRef {
    pub fn new(kind: &str, id: impl Into<String>) -> Self {
        Self {
            kind: kind.to_string(),
            id: id.into(),
        }
    }

    pub fn action(id: &str) -> Self {
        Self::new("Action", id)
    }

    pub fn uid(&self) -> Result<EntityUid, EvaluationError> {
        let type_name = match type_names().get(self.kind.as_str()) {
            Some(name) => name.clone(),
            None => EntityTypeName::from_str(&self.kind)
                .map_err(|_| EvaluationError::EntityId(self.kind.clone()))?,
        };
        Ok(EntityUid::from_type_name_and_id(
            type_name,
            EntityId::new(&self.id),
        ))
    }
}

impl std::fmt::Display for EntityRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}::{:?}", self.kind, self.id)
    }
}
