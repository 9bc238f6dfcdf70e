//! server::present: approvals and untrusted text as a person reads them — the console's pages,
//! the webhook's messages and `askgate approvals` all show them through here.
//!
//! Map: `shown` (untrusted text made visible), `card` (one approval for a person).

pub mod card;
pub mod shown;
