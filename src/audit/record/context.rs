//! audit::record::context: the request context of a logged decision ([`LoggedContext`]). A
//! record being written holds the decided context itself and serializes it straight into the
//! line (no second copy of it as a JSON tree); a record read back holds the JSON object as
//! logged, for `upgrade` to complete. Both write the same bytes: the object the schema of the
//! day shapes, a non-empty Projects search query replaced by [`REDACTED`]. It converts only.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::REDACTED;
use crate::authz::context::{CallContext, SurfaceContext};

/// The Cedar request context (without approvals granted) of a logged decision.
#[derive(Debug, Clone)]
pub enum LoggedContext {
    /// The context the call was decided on (a record being written).
    Decided(Arc<CallContext>),
    /// The object as a line holds it (a record read back).
    Logged(Map<String, Value>),
}

impl LoggedContext {
    /// The context as a JSON object, as it is logged.
    pub fn to_map(&self) -> Map<String, Value> {
        match self {
            Self::Logged(map) => map.clone(),
            Self::Decided(context) => match serde_json::to_value(&*redacted(context)) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            },
        }
    }
}

/// The context as logged: free text (a Projects search query) redacted. Copied only then.
fn redacted(context: &Arc<CallContext>) -> std::borrow::Cow<'_, CallContext> {
    match &context.surface {
        SurfaceContext::Projects(projects) if !projects.query.is_empty() => {
            let mut copy = CallContext::clone(context);
            if let SurfaceContext::Projects(projects) = &mut copy.surface {
                projects.query = REDACTED.to_string();
            }
            std::borrow::Cow::Owned(copy)
        }
        _ => std::borrow::Cow::Borrowed(context),
    }
}

impl Serialize for LoggedContext {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Decided(context) => redacted(context).serialize(serializer),
            Self::Logged(map) => map.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for LoggedContext {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::deserialize(deserializer).map(Self::Logged)
    }
}

/// Equal when they log the same object.
impl PartialEq for LoggedContext {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Logged(one), Self::Logged(two)) => one == two,
            _ => self.to_map() == other.to_map(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes written straight from the context are the bytes of the JSON object it used
    /// to be copied into first, and read back they are equal.
    fn assert_same_bytes(context: CallContext, query_logged: Option<&str>) {
        let decided = LoggedContext::Decided(Arc::new(context.clone()));
        let direct = serde_json::to_vec(&decided).unwrap();
        let mut tree = serde_json::to_value(&context).unwrap();
        if let Some(query) = query_logged {
            tree["projects"]["query"] = Value::String(query.to_string());
        }
        assert_eq!(
            String::from_utf8(direct.clone()).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
        let read: LoggedContext = serde_json::from_slice(&direct).unwrap();
        assert_eq!(read, decided);
    }

    /// Every decided context of the committed format-1 corpus, upgraded to today's facts.
    #[test]
    fn a_decided_context_writes_the_object_it_reads_back_as() {
        let corpus = include_str!("../../../tests/fixtures/log-v1/corpus/decisions-000001.jsonl");
        let mut projects = 0;
        for line in corpus.lines() {
            let Ok(record) = serde_json::from_str::<super::super::DecisionRecord>(line) else {
                continue;
            };
            let context = CallContext::clone(&record.facts.to_facts().unwrap().context);
            if let SurfaceContext::Projects(_) = &context.surface {
                projects += 1;
                let mut asked = context.clone();
                if let SurfaceContext::Projects(surface) = &mut asked.surface {
                    surface.query = "free text".to_string();
                }
                assert_same_bytes(asked, Some(REDACTED));
                let mut empty = context;
                if let SurfaceContext::Projects(surface) = &mut empty.surface {
                    surface.query = String::new();
                }
                assert_same_bytes(empty, None);
            } else {
                assert_same_bytes(context, None);
            }
        }
        assert!(projects > 0, "the corpus has Projects calls");
    }
}
