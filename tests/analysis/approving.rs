//! `askgate diff` on the approving set (issue 35): a change to who may answer an approval is
//! proved with the real `cvc5`. Dropping docs/admins.md's owners rule lets more people approve
//! (reported, exit 5, with the solver's example approver); adding it only narrows (shown,
//! exit 0); widening it to design leads is found with a design lead as the example.

use serde_json::Value;

use super::{diff_json, policy_dir};
use crate::support::documented_rule;

/// A managed directory whose `approving/` holds `rules` (and whose live part is empty).
fn managed(root: &std::path::Path, name: &str, rules: &[(&str, String)]) -> String {
    let dir = policy_dir(root, name, &[]);
    let approving = dir.join("approving");
    std::fs::create_dir_all(&approving).unwrap();
    for (file, text) in rules {
        std::fs::write(approving.join(file), text).unwrap();
    }
    dir.display().to_string()
}

/// The attributes of the example's principal (`"principal"`) or resource (`"resource"`).
fn attrs(finding: &Value, side: &str) -> Value {
    let uid = &finding["request"][side];
    finding["entities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entity| entity["uid"]["type"] == uid["type"] && entity["uid"]["id"] == uid["id"])
        .map(|entity| entity["attrs"].clone())
        .unwrap_or_default()
}

fn groups(finding: &Value) -> Vec<String> {
    let groups = attrs(finding, "principal")["groups"].clone();
    serde_json::from_value(groups).unwrap_or_default()
}

fn operation(finding: &Value) -> String {
    attrs(finding, "resource")["operation"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn i35_diff_reports_a_change_that_lets_more_people_approve() {
    let root = tempfile::tempdir().unwrap();
    let owners = documented_rule("org.deletes-by-owners");
    let with = managed(root.path(), "with", &[("owners.cedar", owners.clone())]);
    let without = managed(root.path(), "without", &[]);

    let (code, report) = diff_json(&[&with, &without]);
    assert_eq!(code, 5, "{report:#}");
    let approving = &report["approving"];
    assert_eq!(approving["environments"], 2, "{approving:#}");
    assert_eq!(
        approving["identical"], 1,
        "refuse is untouched: {approving:#}"
    );
    let findings = approving["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{approving:#}");
    let finding = &findings[0];
    assert_eq!(finding["action"], "approve");
    assert_eq!(finding["direction"], "widens");
    assert!(
        ["delete_files", "project_delete"].contains(&operation(finding).as_str()),
        "the example approves a delete: {finding:#}"
    );
    assert!(
        !groups(finding).contains(&"owners".to_string()),
        "{finding:#}"
    );
    assert_eq!(report["proven"], true, "{report:#}");

    // The other way it only narrows: shown, not counted.
    let (code, report) = diff_json(&[&without, &with]);
    assert_eq!(code, 0, "{report:#}");
    let findings = report["approving"]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    assert_eq!(findings[0]["direction"], "narrows");

    // Letting design leads approve deletes too widens, with a design lead who is no owner.
    let leads = owners.replace(
        "!(principal.groups.contains(\"owners\"))",
        "!(principal.groups.contains(\"owners\")) && !(principal.groups.contains(\"design-leads\"))",
    );
    assert_ne!(leads, owners);
    let widened = managed(root.path(), "leads", &[("owners.cedar", leads)]);
    let (code, report) = diff_json(&[&with, &widened]);
    assert_eq!(code, 5, "{report:#}");
    let finding = &report["approving"]["findings"][0];
    assert_eq!(finding["direction"], "widens", "{report:#}");
    let groups = groups(finding);
    assert!(
        groups.contains(&"design-leads".to_string()) && !groups.contains(&"owners".to_string()),
        "{finding:#}"
    );
}
