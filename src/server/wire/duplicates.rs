//! server::wire::duplicates: finds the first key a JSON body sends twice in one object, at any
//! depth (C5). A JSON parser keeps the last of two keys, but a caller's own parser may keep
//! the first, so `{"project_id":"p2","project_id":"p1"}` would be decided as one project and
//! run as another; the body is refused instead. It must not build values or judge them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};

/// The first duplicated key and where it is (`input.arguments.files[0].path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    pub key: String,
    pub path: String,
}

/// The first duplicate key of `body`, or `None` (also when `body` is not JSON: the typed parse
/// that follows reports that).
pub fn first_duplicate_key(body: &[u8]) -> Option<DuplicateKey> {
    let mut trail = Trail::default();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let _ = Walk { trail: &mut trail }.deserialize(&mut deserializer);
    trail.found
}

#[derive(Debug, Clone)]
enum Segment<'de> {
    Key(Cow<'de, str>),
    Index(usize),
}

/// The path from the root to the value being walked, rendered only for a duplicate.
#[derive(Default)]
struct Trail<'de> {
    stack: Vec<Segment<'de>>,
    found: Option<DuplicateKey>,
}

impl Trail<'_> {
    fn path(&self) -> String {
        let mut path = String::new();
        for segment in &self.stack {
            match segment {
                Segment::Key(key) if path.is_empty() => path.push_str(key),
                Segment::Key(key) => {
                    path.push('.');
                    path.push_str(key);
                }
                Segment::Index(index) => path.push_str(&format!("[{index}]")),
            }
        }
        path
    }
}

struct Walk<'t, 'de> {
    trail: &'t mut Trail<'de>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_, 'de> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            self.trail.stack.push(Segment::Index(index));
            let more = seq.next_element_seed(Walk { trail: self.trail })?;
            self.trail.stack.pop();
            if more.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<Cow<'de, str>, foldhash::fast::RandomState> = HashSet::default();
        while let Some(Key(key)) = map.next_key()? {
            if !seen.insert(key.clone()) {
                self.trail.stack.push(Segment::Key(key.clone()));
                self.trail.found = Some(DuplicateKey {
                    key: key.into_owned(),
                    path: self.trail.path(),
                });
                return Err(A::Error::custom("duplicate key"));
            }
            self.trail.stack.push(Segment::Key(key));
            map.next_value_seed(Walk { trail: self.trail })?;
            self.trail.stack.pop();
        }
        Ok(())
    }
}

/// An object key, borrowed from the body when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(key)))
    }

    fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(key.to_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(body: &str) -> Option<(String, String)> {
        first_duplicate_key(body.as_bytes()).map(|found| (found.key, found.path))
    }

    #[test]
    fn c5_duplicates_are_found_at_any_depth() {
        assert_eq!(
            found(r#"{"input":{"arguments":{"project_id":"p2","project_id":"p1"}}}"#),
            Some(("project_id".into(), "input.arguments.project_id".into()))
        );
        assert_eq!(
            found(r#"{"a":[{"x":1},{"path":"a","path":"b"}]}"#),
            Some(("path".into(), "a[1].path".into()))
        );
        // An escaped spelling of the same key is the same key.
        assert_eq!(
            found(r#"{"operation":"x","op\u0065ration":"y"}"#),
            Some(("operation".into(), "operation".into()))
        );
        assert_eq!(
            found(r#"{"s":{"id":"1"},"s":{}}"#),
            Some(("s".into(), "s".into()))
        );
    }

    #[test]
    fn distinct_keys_and_non_json_are_not_duplicates() {
        assert_eq!(found(r#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#), None);
        assert_eq!(found("[1, 2, {}]"), None);
        assert_eq!(found("{not json"), None);
        assert_eq!(found(""), None);
    }
}
