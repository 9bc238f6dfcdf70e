//! authz::entity: references to Cedar entities by type and id, built without the Cedar parser
//! so any id (quotes, slashes, unicode) is carried exactly.

use std::str::FromStr;
use std::sync::OnceLock;

use cedar_policy::{EntityId, EntityTypeName, EntityUid};
use serde::{Deserialize, Serialize};

use super::EvaluationError;

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

/// Scanned, not hashed: there are five, and this runs for every entity of every call.
fn type_names() -> &'static [(&'static str, EntityTypeName)] {
    static NAMES: OnceLock<Vec<(&'static str, EntityTypeName)>> = OnceLock::new();
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
        let known = type_names().iter().find(|(name, _)| *name == self.kind);
        let type_name = match known {
            Some((_, parsed)) => parsed.clone(),
            None => EntityTypeName::from_str(&self.kind)
                .map_err(|_| EvaluationError::EntityId(self.kind.clone()))?,
        };
        Ok(EntityUid::from_type_name_and_id(
            type_name,
            EntityId::new(&self.id),
        ))
    }
}

/// Exactly as Cedar displays the entity's uid (`Type::"id"`, the id `str::escape_debug`ed),
/// without building the uid: request records name entities this way on every call.
impl std::fmt::Display for EntityRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}::\"{}\"", self.kind, self.id.escape_debug())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_exactly_the_cedar_uid_display() {
        let ids = [
            "main",
            "",
            "p1",
            "it's",
            "say \"hi\"",
            "back\\slash",
            "line\nbreak\ttab\r",
            "\u{0}nul",
            "é\u{301}combining",
            "\u{301}leading combining",
            "emoji 🦀",
            "\u{202E}rtl\u{200B}",
            "Action::\"x\"",
        ];
        for kind in TYPES {
            for id in ids {
                let entity = EntityRef::new(kind, id);
                assert_eq!(
                    entity.to_string(),
                    entity.uid().unwrap().to_string(),
                    "{kind} {id:?}"
                );
            }
        }
    }
}
