//! `check_content`'s verdicts and messages, pinned: every schema below against every
//! content, compared line by line with `golden/content_check.txt` (written by the
//! implementation that walked the schema's JSON on each check, before the check was read
//! once per form). A missing or different file fails; `SAGA_SNAPSHOTS=overwrite` writes it
//! anew (read the diff, then commit it), as it does every snapshot of the workspace.

use saga_runtime::__support::check_content;
use serde_json::json;

#[test]
fn verdicts_and_messages_match_the_golden_file() {
    let schemas = [
        json!({"type":"object","properties":{"name":{"type":"string","minLength":2,"maxLength":4},"age":{"type":"integer","minimum":0,"maximum":150},"ok":{"type":"boolean"},"w":{"type":"number","minimum":0.5}},"required":["name","ok", 3]}),
        json!({"type":"object","properties":{"color":{"type":"string","enum":["red","green"]},"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"m"}]},"any":{"type":"string","anyOf":[{"const":"x"}]},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"maxItems":2,"minItems":1},"free":{"type":"array"},"mail":{"type":"string","format":"email"},"day":{"type":"string","format":"date"},"dt":{"type":"string","format":"date-time"},"u":{"type":"string","format":"uri"},"weird":{"type":"string","format":"weird"},"odd":{"type":"object"},"nt":{"enum":["q"]}}}),
        json!({"type":"object","properties":[1,2],"required":["a"]}),
        json!({"type":"object","required":"a"}),
        json!({"type":"object","properties":{"n":{"type":"string","minLength":-1,"maxLength":2.5,"enum":[1,"a"]}}}),
        json!({}),
    ];
    let contents = [
        json!({"name":"Al","age":3,"ok":true,"w":1}),
        json!({"name":"Al","age":3.0,"ok":false}),
        json!({}),
        json!({"name":null}),
        json!({"name":"A","ok":true}),
        json!({"name":"Alfred","ok":true}),
        json!({"name":5,"ok":true}),
        json!({"name":"Al","age":3.5,"ok":true}),
        json!({"name":"Al","age":-1,"ok":true}),
        json!({"name":"Al","age":151,"ok":true}),
        json!({"name":"Al","ok":"yes"}),
        json!({"name":"Al","ok":true,"w":0.1}),
        json!("Al"),
        json!(null),
        json!([1]),
        json!({"color":"red","size":"s","tags":["a","b"],"mail":"a@b.io","day":"2026-07-28","dt":"2026-07-28T10:00:00Z","u":"https://x"}),
        json!({"color":"blue"}),
        json!({"size":"z"}),
        json!({"any":"y"}),
        json!({"tags":["c"]}),
        json!({"tags":[]}),
        json!({"tags":["a","b","a"]}),
        json!({"tags":[1]}),
        json!({"tags":"a"}),
        json!({"free":[1]}),
        json!({"free":["z"]}),
        json!({"mail":"nope"}),
        json!({"mail":"a @b.c"}),
        json!({"day":"28/07/2026"}),
        json!({"dt":"2026-07-28"}),
        json!({"dt":"2026-07-28T1"}),
        json!({"u":":x"}),
        json!({"u":"ht tp:x"}),
        json!({"weird":"x"}),
        json!({"odd":{"a":1}}),
        json!({"nt":"z"}),
        json!({"a":1}),
        json!({"n":"abc"}),
        json!({"n":"a"}),
        json!({"n":"b"}),
        json!({"name":"Āé","ok":true}),
        json!({"name":"ĀéĀéĀ","ok":true}),
    ];
    let mut out = String::new();
    for s in &schemas {
        for c in &contents {
            // The golden file pins each refusal's text, which the typed error displays.
            let r = check_content(s.as_object().unwrap(), c).map_err(|e| e.to_string());
            // Printed with sorted keys, as the file was written before serde_json kept
            // insertion order: the verdicts are what the file pins.
            let (mut s, mut c) = (s.clone(), c.clone());
            s.sort_all_objects();
            c.sort_all_objects();
            out.push_str(&format!("{s} {c} {r:?}\n"));
        }
    }
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/content_check.txt"
    );
    saga_snapshot::assert_snapshot(std::path::Path::new(golden), "the verdicts", &out);
}
