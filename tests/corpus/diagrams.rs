//! The corpus's diagrams (`SagaTool::diagram`, issue 26) against their snapshots in
//! `tests/diagrams/corpus/`: every construct the transform accepts, drawn; every
//! suspension point of each saga exactly once in its diagram, as its own state.

use saga_runtime::engine::SagaTool;

use super::expressions::*;
use super::helpers::*;
use super::sagas::*;
use crate::loops::looper;

fn check(tool: &impl SagaTool) {
    let name = tool.tool().name.to_string();
    super::snapshots::check("corpus", &name, &tool.diagram(), tool.state_names());
}

#[test]
fn the_corpus_diagrams_match_their_snapshots() {
    // tests/corpus/sagas.rs
    check(&statements);
    check(&branches);
    check(&matcher);
    check(&loop_value);
    check(&stack);
    check(&for_kinds);
    check(&grid);
    check(&search);
    check(&early_exit);
    check(&lookup_chain);
    check(&shadowing);
    check(&captures);
    check(&keyed);
    check(&five_asks);
    check(&joined);
    check(&url_flow);
    check(&context_aware);
    check(&described_args);
    check(&structured);
    check(&many_rounds);
    check(&big_state);
    check(&original_name);
    check(&declines);
    // tests/corpus/main.rs
    check(&looper);
    // tests/corpus/expressions.rs
    check(&operands);
    check(&conditions);
    check(&lets_and_macros);
    check(&with_items);
    check(&borrowed_loops);
    check(&join_many);
    check(&nested);
    // tests/corpus/helpers.rs
    check(&cleanup);
    check(&research);
    check(&everywhere);
}
