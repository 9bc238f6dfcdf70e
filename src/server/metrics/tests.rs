use std::time::Duration;

use super::*;

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn counts_are_written_under_today_names() {
    let metrics = Metrics::default();
    let fast = Duration::from_micros(30);
    metrics.decision_made("ClaudeDesign", "read_file", "allow", fast);
    metrics.decision_made("ClaudeDesign", "read_file", "allow", Duration::from_secs(3));
    metrics.decision_made("Odd\"tool", "op", "deny", fast);
    metrics.upstream_failed("timeout");
    metrics.shadow_compared(false);
    metrics.approval_link(LinkStep::Redeemed);
    metrics.mcp_call(McpPath::Fast);
    let text = metrics.render(&scraped::registry(4, &Default::default()));
    let lines = lines(&text);
    for expected in [
        "askgate_decisions_total{tool=\"ClaudeDesign\",operation=\"read_file\",outcome=\"allow\"} 2",
        "askgate_decisions_total{tool=\"Odd\\\"tool\",operation=\"op\",outcome=\"deny\"} 1",
        "askgate_decision_seconds_bucket{le=\"0.00005\"} 2",
        "askgate_decision_seconds_bucket{le=\"2.0\"} 2",
        "askgate_decision_seconds_bucket{le=\"+Inf\"} 3",
        "askgate_decision_seconds_count 3",
        "askgate_upstream_seconds_count 0",
        "askgate_upstream_errors_total{kind=\"timeout\"} 1",
        "askgate_shadow_decisions_total{result=\"agree\"} 0",
        "askgate_shadow_decisions_total{result=\"disagree\"} 1",
        "askgate_mcp_approval_links_total{step=\"redeemed\"} 1",
        "askgate_mcp_approval_links_total{step=\"offered\"} 0",
        "askgate_mcp_tool_calls_total{path=\"fast\"} 1",
        "askgate_mcp_tool_calls_total{path=\"service\"} 0",
        "askgate_pending_approvals 4",
        "askgate_webhook_messages_total{result=\"delivered\"} 0",
        "askgate_webhook_attempt_failures_total 0",
        "# TYPE askgate_decisions counter",
    ] {
        assert!(lines.contains(&expected), "{expected} not in\n{text}");
    }
    assert_eq!(lines.last(), Some(&"# EOF"), "{text}");
    assert_eq!(lines.iter().filter(|line| **line == "# EOF").count(), 1);
}
