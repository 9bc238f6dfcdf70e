//! Describes the local argument schema of one Design operation as static data; it holds no
//! validation logic and never looks at a call.

/// Largest string scalar, string element or capped object field, in UTF-8 bytes (§1.4).
pub const STRING_MAX_BYTES: usize = 4_096;

/// Largest `plan_token`, in UTF-8 bytes: tokens are signed blobs, far longer than other scalars.
pub const PLAN_TOKEN_MAX_BYTES: usize = 65_536;

/// The allowed top-level keys of one operation's `arguments`, in documentation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentSchema {
    pub keys: &'static [ArgumentKey],
}

impl ArgumentSchema {
    /// The rule for `name`, when the operation allows that key.
    pub fn key(&self, name: &str) -> Option<&'static ArgumentKey> {
        self.keys.iter().find(|key| key.name == name)
    }

    /// Allowed key names in documentation order, for error hints.
    pub fn key_names(&self) -> impl Iterator<Item = &'static str> {
        self.keys.iter().map(|key| key.name)
    }
}

/// One allowed top-level key and the shape its value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentKey {
    pub name: &'static str,
    pub kind: ArgumentKind,
}

/// The shape of one argument value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentKind {
    /// A string, boolean or number; a string is capped at `max_bytes` UTF-8 bytes.
    Scalar { max_bytes: usize },
    /// A string naming one of `values`, compared as `matching` says.
    Choice {
        values: &'static [&'static str],
        matching: ChoiceMatching,
    },
    /// An array of strings, each capped at [`STRING_MAX_BYTES`].
    StringList,
    /// An array of objects whose fields are all strings.
    ObjectList { fields: &'static [ElementField] },
}

/// How a [`ArgumentKind::Choice`] value is compared with the allowed values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceMatching {
    /// Byte-for-byte (finalize_plan `scope`).
    Exact,
    /// Case-insensitive by Unicode lower-casing (as JavaScript `toLowerCase`), no trimming
    /// (update_sharing `scope`, `link_permission`).
    CaseInsensitive,
    /// Case-insensitive after trimming JavaScript whitespace, refusing more than two UTF-16
    /// code units of padding (`role`).
    TrimmedCaseInsensitive,
}

/// One field of an object element inside an [`ArgumentKind::ObjectList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElementField {
    pub name: &'static str,
    pub required: bool,
    /// `None` for body fields (`data`, `content`), which are not capped locally.
    pub max_bytes: Option<usize>,
}

/// Trimmed padding beyond this many UTF-16 code units (JavaScript `.length` of the raw value
/// minus that of the trimmed one) makes a `role` value invalid (§1.4).
pub const ROLE_PADDING_MAX_CHARS: usize = 2;

/// Shorthands that keep the operation table in `operations.rs` readable.
pub(crate) const fn scalar(name: &'static str) -> ArgumentKey {
    ArgumentKey {
        name,
        kind: ArgumentKind::Scalar {
            max_bytes: STRING_MAX_BYTES,
        },
    }
}

pub(crate) const fn string_list(name: &'static str) -> ArgumentKey {
    ArgumentKey {
        name,
        kind: ArgumentKind::StringList,
    }
}

pub(crate) const fn object_list(
    name: &'static str,
    fields: &'static [ElementField],
) -> ArgumentKey {
    ArgumentKey {
        name,
        kind: ArgumentKind::ObjectList { fields },
    }
}

pub(crate) const fn choice(
    name: &'static str,
    values: &'static [&'static str],
    matching: ChoiceMatching,
) -> ArgumentKey {
    ArgumentKey {
        name,
        kind: ArgumentKind::Choice { values, matching },
    }
}

pub(crate) const fn field(name: &'static str, required: bool) -> ElementField {
    ElementField {
        name,
        required,
        max_bytes: Some(STRING_MAX_BYTES),
    }
}

pub(crate) const fn body_field(name: &'static str, required: bool) -> ElementField {
    ElementField {
        name,
        required,
        max_bytes: None,
    }
}
