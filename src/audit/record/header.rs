//! audit::record::header: the two fields every record starts with — `"v"`, the format version
//! (only [`FORMAT_VERSION`] decodes), and `"kind"`, one fixed string per record type. It checks
//! them on decode; it must not know any other field.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The record format version written by this build; readers report any other as foreign.
pub const FORMAT_VERSION: u64 = 1;

/// The `"v"` field: serializes as [`FORMAT_VERSION`] and accepts nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(FORMAT_VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match u64::deserialize(deserializer)? {
            FORMAT_VERSION => Ok(Version),
            other => Err(serde::de::Error::custom(format!(
                "foreign record version `{other}`"
            ))),
        }
    }
}

/// A `"kind"` marker type that (de)serializes as exactly one string.
macro_rules! kind_marker {
    ($name:ident, $text:literal) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name;

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($text)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                if text == $text {
                    Ok($name)
                } else {
                    Err(serde::de::Error::custom(format!(
                        "expected kind `{}`, found `{text}`",
                        $text
                    )))
                }
            }
        }
    };
}

kind_marker!(DecisionKind, "decision");
kind_marker!(ApprovalRecordKind, "approval");
kind_marker!(OutcomeKind, "outcome");

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]

    use super::super::tests::outcome_line;
    use super::super::{OutcomeRecord, OutcomeStatus};

    #[test]
    fn version_and_kind_are_checked_on_decode() {
        let good: OutcomeRecord = serde_json::from_str(&outcome_line("1", "outcome")).unwrap();
        assert_eq!(good.status, OutcomeStatus::Ok);
        for (version, kind) in [
            ("2", "outcome"),
            ("0", "outcome"),
            ("\"1\"", "outcome"),
            ("1", "approval"),
        ] {
            assert!(serde_json::from_str::<OutcomeRecord>(&outcome_line(version, kind)).is_err());
        }
    }
}
