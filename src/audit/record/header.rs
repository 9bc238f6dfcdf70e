//! audit::record::header: the two fields every record starts with — `"v"`, the format version
//! (this build writes [`FORMAT_VERSION`] and reads every version of [`Version`]), and `"kind"`,
//! one fixed string per record type. It checks them on decode; it must not know any other
//! field.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The record format version written by this build; readers report any version but
/// [`Version`]'s as foreign.
pub const FORMAT_VERSION: u64 = 2;

/// The `"v"` field: the formats this build reads. Format 2 (since 2026-12-06) leaves out what
/// the record says elsewhere (the summary's tool, operation, project and targets, and empty or
/// absent fields) and is what this build writes; format 1 is read as it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Version {
    V1,
    #[default]
    V2,
}

impl Version {
    /// What this build writes.
    pub const CURRENT: Version = Version::V2;

    pub fn number(self) -> u64 {
        match self {
            Self::V1 => 1,
            Self::V2 => 2,
        }
    }

    /// The version of `number`, when this build reads it.
    pub fn of(number: u64) -> Option<Self> {
        match number {
            1 => Some(Self::V1),
            2 => Some(Self::V2),
            _ => None,
        }
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.number())
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let number = u64::deserialize(deserializer)?;
        Self::of(number)
            .ok_or_else(|| serde::de::Error::custom(format!("foreign record version `{number}`")))
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
    use super::super::tests::outcome_line;
    use super::super::{OutcomeRecord, OutcomeStatus};

    #[test]
    fn version_and_kind_are_checked_on_decode() {
        for version in ["1", "2"] {
            let good: OutcomeRecord =
                serde_json::from_str(&outcome_line(version, "outcome")).unwrap();
            assert_eq!(good.status, OutcomeStatus::Ok);
            assert_eq!(good.v.number().to_string(), version);
        }
        for (version, kind) in [
            ("3", "outcome"),
            ("0", "outcome"),
            ("\"1\"", "outcome"),
            ("1", "approval"),
        ] {
            assert!(serde_json::from_str::<OutcomeRecord>(&outcome_line(version, kind)).is_err());
        }
    }
}
