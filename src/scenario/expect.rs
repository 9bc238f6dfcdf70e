//! scenario::expect: the `expect` block of a scenario and how an outcome is compared with it.

use serde::{Deserialize, Deserializer, Serialize};

use super::run::Outcome;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// `allow`, `ask` or `deny`; absent when an input error is expected.
    #[serde(default)]
    pub decision: Option<String>,
    /// Absent: not checked. `null`: no approval. Else the approval kind.
    #[serde(default, deserialize_with = "explicit")]
    pub approval: Option<Option<String>>,
    #[serde(default)]
    pub policies: Option<Vec<String>>,
    #[serde(default)]
    pub reason_contains: Option<String>,
    /// An input error is expected instead of a decision.
    #[serde(default)]
    pub error: Option<ExpectedError>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ExpectedError {
    #[serde(default)]
    pub field: Option<String>,
    #[serde(default)]
    pub message_contains: Option<String>,
}

fn explicit<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}

/// One way an outcome differs from its expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    pub field: &'static str,
    pub expected: String,
    pub actual: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\n    - expected: {}\n    + actual:   {}",
            self.field, self.expected, self.actual
        )
    }
}

impl Expectation {
    pub fn compare(&self, outcome: &Outcome) -> Vec<Mismatch> {
        match outcome {
            Outcome::Decided(decision) => self.compare_decision(decision),
            Outcome::Refused(error) => self.compare_refusal(error),
        }
    }

    fn compare_decision(&self, decision: &crate::authz::Decision) -> Vec<Mismatch> {
        let mut mismatches = Vec::new();
        if let Some(error) = &self.error {
            let expected = format!("input error at {:?}", error.field);
            mismatches.push(mismatch(
                "error",
                expected,
                decision.decision.as_str().to_string(),
            ));
        }
        if let Some(expected) = &self.decision {
            check(
                &mut mismatches,
                "decision",
                expected,
                decision.decision.as_str(),
            );
        }
        if let Some(expected) = &self.approval {
            let actual = decision
                .approval
                .as_ref()
                .map(|approval| approval.kind().as_str());
            check(
                &mut mismatches,
                "approval",
                expected.as_deref().unwrap_or("null"),
                actual.unwrap_or("null"),
            );
        }
        if let Some(expected) = &self.policies {
            let mut expected = expected.clone();
            expected.sort();
            check(
                &mut mismatches,
                "policies",
                &expected.join(", "),
                &decision.policies.join(", "),
            );
        }
        if let Some(needle) = &self.reason_contains {
            if !decision.reason.contains(needle.as_str()) {
                mismatches.push(mismatch(
                    "reason_contains",
                    needle.clone(),
                    decision.reason.clone(),
                ));
            }
        }
        mismatches
    }

    fn compare_refusal(&self, error: &crate::call::CallError) -> Vec<Mismatch> {
        let mut mismatches = Vec::new();
        let Some(expected) = &self.error else {
            let actual = format!("input error at `{}`: {}", error.field, error.message);
            mismatches.push(mismatch(
                "decision",
                self.decision.clone().unwrap_or_default(),
                actual,
            ));
            return mismatches;
        };
        if let Some(field) = &expected.field {
            check(&mut mismatches, "error.field", field, &error.field);
        }
        if let Some(needle) = &expected.message_contains {
            if !error.message.contains(needle.as_str()) {
                mismatches.push(mismatch(
                    "error.message_contains",
                    needle.clone(),
                    error.message.clone(),
                ));
            }
        }
        mismatches
    }
}

fn check(mismatches: &mut Vec<Mismatch>, field: &'static str, expected: &str, actual: &str) {
    if expected != actual {
        mismatches.push(mismatch(field, expected.to_string(), actual.to_string()));
    }
}

fn mismatch(field: &'static str, expected: String, actual: String) -> Mismatch {
    Mismatch {
        field,
        expected,
        actual,
    }
}
