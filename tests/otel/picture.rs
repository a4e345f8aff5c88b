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

/// The picture of a task's trace: its creation (`creation`, the MCP server span of the
/// request that created it) under the client's span (`client`), and under the creation
/// its worker steps in the order they began, each with its own children. Runs of spans
/// alike (steps on the same replica with the same outcome, a step's store writes) are
/// drawn once: how many there are varies with the machine's speed.
pub fn draw_task(spans: &[Span], creation: &Span, client: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "one task's trace: the client's");
    let _ = writeln!(out, "{client}");
    let _ = writeln!(
        out,
        "└─ {}  [server · {}]  saga.outcome={}",
        creation.name,
        creation.service,
        creation.attr("saga.outcome").unwrap_or("-")
    );
    let children_of = |parent: &str| {
        let mut children: Vec<&Span> = spans
            .iter()
            .filter(|span| span.parent_span_id == parent)
            .collect();
        children.sort_by_key(|span| span.start);
        children
    };
    let line = |span: &Span| {
        let mut line = span.name.clone();
        if span.name.starts_with("task ") {
            let _ = write!(line, "  [internal · {}]", span.service);
        }
        for key in ["saga.outcome", "error.type", "saga.task.takeover.reason"] {
            if let Some(value) = span.attr(key) {
                let _ = write!(line, "  {key}={value}");
            }
        }
        for (event, _) in &span.events {
            let _ = write!(line, "  · event: {event}");
        }
        line
    };
    // Each child as its lines (itself, then its own children), runs alike drawn once.
    let mut blocks: Vec<Vec<String>> = Vec::new();
    for child in children_of(&creation.span_id) {
        let mut block = vec![line(child)];
        for grand in children_of(&child.span_id) {
            let grand = line(grand);
            if block.len() == 1 || block.last() != Some(&grand) {
                block.push(grand);
            }
        }
        if blocks.last() != Some(&block) {
            blocks.push(block);
        }
    }
    for (b, block) in blocks.iter().enumerate() {
        let last = b + 1 == blocks.len();
        let (branch, under) = if last {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        let _ = writeln!(out, "   {branch} {}", block[0]);
        for (g, grand) in block[1..].iter().enumerate() {
            let twig = if g + 2 == block.len() {
                "└─"
            } else {
                "├─"
            };
            let _ = writeln!(out, "   {under} {twig} {grand}");
        }
    }
    out
}
