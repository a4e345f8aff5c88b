//! One saga's trace drawn as a trace backend lays it out (a tree of spans by parent, each
//! with its links), from what the receiver got: the guide's observability chapter shows
//! it (`docs/guide/src/observability-trace.txt`), so the picture stays true.
//!
//! Ids change with every run, so spans are named by what they are: the client's spans by
//! their order, a linked span by its round.

use std::fmt::Write as _;

use crate::receiver::Span;

/// The picture of the saga whose MCP server spans are `rounds` (oldest first), with their
/// children among `spans`; `clients` names the client's spans by id.
pub fn draw(spans: &[Span], rounds: &[&Span], clients: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let name_of_client = |id: &str| {
        clients
            .iter()
            .find(|(span, _)| *span == id)
            .map_or("(no parent: a root)", |(_, name)| name)
    };
    let _ = writeln!(out, "one trace: the client's");
    for (n, round) in rounds.iter().enumerate() {
        let _ = writeln!(out, "{}", name_of_client(&round.parent_span_id));
        let mut line = format!(
            "└─ {}  [server · {}]  saga.outcome={}",
            round.name,
            round.service,
            round.attr("saga.outcome").unwrap_or("-")
        );
        for (_, linked) in &round.links {
            let target = rounds
                .iter()
                .position(|other| &other.span_id == linked)
                .map_or("another span".to_owned(), |i| format!("round {}", i + 1));
            let _ = write!(line, "  ⤷ link to {target}");
        }
        let _ = writeln!(out, "{line}");
        let mut children: Vec<&Span> = spans
            .iter()
            .filter(|span| span.parent_span_id == round.span_id)
            .collect();
        children.sort_by_key(|span| span.start);
        for (c, child) in children.iter().enumerate() {
            let branch = if c + 1 == children.len() {
                "└─"
            } else {
                "├─"
            };
            let attributes = ["saga.round", "saga.entered", "saga.left", "saga.outcome"]
                .iter()
                .filter_map(|key| {
                    let short = key.trim_start_matches("saga.");
                    Some(format!("{short}={}", child.attr(key)?))
                })
                .collect::<Vec<_>>()
                .join(" ");
            let _ = writeln!(out, "   {branch} {}  {attributes}", child.name);
        }
        if n + 1 < rounds.len() {
            out.push('\n');
        }
    }
    out
}
