//! Tests for `result`.
use super::*;

fn image(length: usize) -> Value {
    json!({"type": "image", "data": "A".repeat(length), "mimeType": "image/png"})
}

fn text(length: usize) -> Value {
    json!({"type": "text", "text": "t".repeat(length)})
}

fn map(blocks: Vec<Value>) -> MappedResult {
    map_result(&json!({"content": blocks, "isError": false}))
}

#[test]
fn text_and_image_blocks_pass_through() {
    let mapped = map(vec![json!({"type": "text", "text": "hi"}), image(10)]);
    assert_eq!(
        mapped.content,
        vec![json!({"type": "text", "text": "hi"}), image(10)]
    );
    assert!(!mapped.is_error);
    assert!(mapped.notices.is_empty());
}

#[test]
fn an_image_at_the_cap_is_kept() {
    let mapped = map(vec![image(130_000)]);
    assert_eq!(mapped.content, vec![image(130_000)]);
    assert!(mapped.notices.is_empty());
}

#[test]
fn an_image_just_over_the_cap_is_replaced_by_its_notice() {
    let mapped = map(vec![image(130_001)]);
    let notice = "[render_preview image omitted — 127KB exceeds 127KB cap]";
    assert_eq!(
        mapped.content,
        vec![json!({"type": "text", "text": notice})]
    );
    assert_eq!(mapped.notices, vec![notice.to_owned()]);
}

#[test]
fn a_large_preview_names_its_rounded_size() {
    let mapped = map(vec![image(200_000), text(5)]);
    assert_eq!(
        mapped.content[0]["text"],
        "[render_preview image omitted — 195KB exceeds 127KB cap]"
    );
    assert_eq!(mapped.content[1], text(5));
}

#[test]
fn unsupported_images_and_other_blocks_become_json_text() {
    let svg = json!({"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"});
    let resource = json!({"type": "resource", "uri": "x"});
    let numeric = json!({"type": "image", "data": 5, "mimeType": "image/png"});
    let mapped = map(vec![svg.clone(), resource.clone(), numeric.clone()]);
    let texts: Vec<String> = mapped
        .content
        .iter()
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        texts,
        vec![svg.to_string(), resource.to_string(), numeric.to_string()]
    );
}

#[test]
fn blocks_exactly_filling_the_aggregate_are_all_kept() {
    let mapped = map(vec![image(100_000), text(30_000)]);
    assert_eq!(mapped.content.len(), 2);
    assert!(mapped.notices.is_empty());
}

#[test]
fn one_character_over_the_aggregate_drops_the_block_with_a_notice() {
    let mapped = map(vec![image(100_000), text(30_001)]);
    let notice = "[ClaudeDesign result truncated — 1 block(s) (29k chars) omitted; aggregate over 127k-char cap]";
    assert_eq!(
        mapped.content,
        vec![image(100_000), json!({"type": "text", "text": notice})]
    );
    assert_eq!(mapped.notices, vec![notice.to_owned()]);
}

#[test]
fn a_later_smaller_block_still_fits_after_a_dropped_one() {
    let mapped = map(vec![image(120_000), image(20_000), text(9_999), text(1)]);
    assert_eq!(mapped.content[0], image(120_000));
    assert_eq!(mapped.content[1], text(9_999));
    assert_eq!(mapped.content[2], text(1));
    assert_eq!(
        mapped.content[3]["text"],
        "[ClaudeDesign result truncated — 1 block(s) (20k chars) omitted; aggregate over 127k-char cap]"
    );
}

#[test]
fn text_counts_in_javascript_length() {
    // 65,000 astral characters are 130,000 UTF-16 units: exactly at the cap with nothing else.
    let astral = "😀".repeat(65_000);
    let mapped = map(vec![json!({"type": "text", "text": astral}), text(1)]);
    assert_eq!(mapped.content.len(), 2);
    assert_eq!(mapped.notices.len(), 1);
}

#[test]
fn an_error_joins_its_text_blocks_with_newlines() {
    let result = json!({"isError": true, "content": [
        {"type": "text", "text": "first"}, {"type": "text", "text": "second"}]});
    let mapped = map_result(&result);
    assert!(mapped.is_error);
    assert_eq!(
        mapped.content,
        vec![json!({"type": "text", "text": "first\nsecond"})]
    );
}

#[test]
fn an_error_without_text_says_so() {
    let mapped = map_result(&json!({"isError": true, "content": []}));
    assert_eq!(mapped.content[0]["text"], "(error with no message)");
    let mapped = map_result(&json!({"isError": true, "content": [image(4)]}));
    assert_eq!(mapped.content[0]["text"], "(error with no message)");
}

#[test]
fn an_empty_or_malformed_result_is_empty() {
    for result in [
        json!({"content": []}),
        json!({}),
        json!(null),
        json!({"content": "x"}),
    ] {
        let mapped = map_result(&result);
        assert!(!mapped.is_error);
        assert_eq!(
            mapped.content,
            vec![json!({"type": "text", "text": "(empty result)"})]
        );
    }
}

#[test]
fn a_json_rpc_error_carries_its_data() {
    let mapped =
        map_rpc_error(&json!({"code": -32601, "message": "no such method", "data": {"m": "x"}}));
    assert!(mapped.is_error);
    assert_eq!(mapped.content[0]["text"], "no such method — {\"m\":\"x\"}");
    let mapped = map_rpc_error(&json!({"code": -32601, "message": "plain"}));
    assert_eq!(mapped.content[0]["text"], "plain");
    let mapped = map_rpc_error(&json!({"code": 1}));
    assert_eq!(mapped.content[0]["text"], "(error with no message)");
}
