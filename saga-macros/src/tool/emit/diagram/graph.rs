//! The diagram being drawn: its nodes, its edges, and the paths of the control flow that
//! have not reached a node yet, with the conditions they took. Apart from the walk
//! because it knows nothing of Rust: the walk says where the flow goes, the graph keeps
//! it minimal (an edge drawn once, a condition dropped where it decided nothing) and
//! renders it.

use crate::tool::emit::diagram::escape::{escape, state_id};
use crate::tool::emit::diagram::text::short;

/// A path of the control flow not yet ended at a node: where it comes from, and the
/// conditions it took since.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) struct Pending {
    pub(super) from: usize,
    pub(super) labels: Vec<String>,
}

impl Pending {
    pub(super) fn with(&self, label: &str) -> Pending {
        let mut labels = self.labels.clone();
        if !label.is_empty() {
            labels.push(label.to_owned());
        }
        Pending {
            from: self.from,
            labels,
        }
    }
}

pub(super) fn with_all(pendings: &[Pending], label: &str) -> Vec<Pending> {
    pendings.iter().map(|pending| pending.with(label)).collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Plain,
    Choice,
}

struct Node {
    id: String,
    lines: Vec<String>,
    shape: Shape,
}

struct Edge {
    from: usize,
    to: usize,
    label: String,
}

/// The nodes and edges drawn so far, and where the flow is.
pub(super) struct Graph {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    pub(super) frontier: Vec<Pending>,
    failed: Option<usize>,
    choices: usize,
}

impl Graph {
    /// The start node, where the flow begins.
    pub(super) fn new(start: &str) -> Self {
        let mut graph = Graph {
            nodes: Vec::new(),
            edges: Vec::new(),
            frontier: Vec::new(),
            failed: None,
            choices: 0,
        };
        let start = graph.node("Start", vec![short(start)], Shape::Plain);
        graph.frontier = vec![Pending {
            from: start,
            labels: Vec::new(),
        }];
        graph
    }

    pub(super) fn node(&mut self, id: &str, lines: Vec<String>, shape: Shape) -> usize {
        self.nodes.push(Node {
            id: state_id(id),
            lines,
            shape,
        });
        self.nodes.len() - 1
    }

    pub(super) fn edge(&mut self, from: usize, to: usize, labels: &[String]) {
        let label = labels.join(", ");
        if self
            .edges
            .iter()
            .any(|edge| edge.from == from && edge.to == to && edge.label == label)
        {
            return;
        }
        self.edges.push(Edge { from, to, label });
    }

    /// Every pending path ends at `node`, which the flow then leaves unconditionally.
    pub(super) fn goto(&mut self, node: usize) {
        for pending in std::mem::take(&mut self.frontier) {
            self.edge(pending.from, node, &pending.labels);
        }
        self.frontier = vec![Pending {
            from: node,
            labels: Vec::new(),
        }];
    }

    /// A `?`: every pending path may end at the error, with `label`; the flow goes on.
    pub(super) fn fail(&mut self, label: &str) {
        let failed = match self.failed {
            Some(failed) => failed,
            None => {
                let failed = self.node("Failed", vec!["error from ?".to_owned()], Shape::Plain);
                self.failed = Some(failed);
                failed
            }
        };
        for pending in self.frontier.clone() {
            let pending = pending.with(label);
            self.edge(pending.from, failed, &pending.labels);
        }
    }

    /// Where paths from several places reach a branch that matters: a choice node, so that
    /// the branch's conditions are drawn once rather than from each place.
    pub(super) fn junction(&mut self) {
        if self.frontier.len() < 2 {
            return;
        }
        self.choices += 1;
        let id = format!("Choice{}", self.choices);
        let node = self.node(&id, Vec::new(), Shape::Choice);
        self.goto(node);
    }

    /// The result at the end of the body, and the terminal edges.
    pub(super) fn finish(&mut self, tail: Option<String>) {
        if !self.frontier.is_empty() {
            let mut lines = vec!["result".to_owned()];
            lines.extend(tail);
            let done = self.node("Done", lines, Shape::Plain);
            self.goto(done);
            self.frontier.clear();
        }
        // The error node last, so that it stays out of the way of the main flow.
        if let Some(failed) = self.failed {
            let node = self.nodes.remove(failed);
            self.nodes.push(node);
            let moved = self.nodes.len() - 1;
            for edge in &mut self.edges {
                for end in [&mut edge.from, &mut edge.to] {
                    if *end == failed {
                        *end = moved;
                    } else if *end > failed {
                        *end -= 1;
                    }
                }
            }
            self.failed = Some(moved);
        }
    }

    pub(super) fn render(&self) -> String {
        let mut out = String::from("stateDiagram-v2\n");
        for node in &self.nodes {
            match node.shape {
                Shape::Choice => out.push_str(&format!("    state {} <<choice>>\n", node.id)),
                Shape::Plain => {
                    for line in &node.lines {
                        out.push_str(&format!("    {} : {}\n", node.id, escape(line)));
                    }
                }
            }
        }
        out.push_str(&format!("    [*] --> {}\n", self.nodes[0].id));
        // Edges between the same two nodes are drawn as one, their conditions joined.
        let mut drawn: Vec<(usize, usize, Vec<&str>)> = Vec::new();
        for edge in &self.edges {
            match drawn.iter_mut().find(|(from, to, labels)| {
                *from == edge.from
                    && *to == edge.to
                    && !labels.contains(&"")
                    && !edge.label.is_empty()
            }) {
                Some((_, _, labels)) => labels.push(&edge.label),
                None => drawn.push((edge.from, edge.to, vec![edge.label.as_str()])),
            }
        }
        for (from, to, labels) in drawn {
            let (from, to) = (&self.nodes[from].id, &self.nodes[to].id);
            let label = labels.join(" or ");
            if label.is_empty() {
                out.push_str(&format!("    {from} --> {to}\n"));
            } else {
                out.push_str(&format!("    {from} --> {to} : {}\n", escape(&label)));
            }
        }
        for node in &self.nodes {
            let exit = node.id == "Done" || node.id == "Failed" || node.id.starts_with("Return");
            if exit {
                out.push_str(&format!("    {} --> [*]\n", node.id));
            }
        }
        out
    }
}

/// Where the branches of a fork go on from. A path that went through a branch untouched
/// (from where it was before, with only that branch's condition added) in every branch
/// is the path before the fork: the condition decided nothing. Among a `match`'s arms,
/// those that pass a path through untouched share one edge (`match x { A | B }`).
pub(super) fn join(
    before: &[Pending],
    labels: &[String],
    mut outs: Vec<Vec<Pending>>,
    arms: Option<(&str, &[String])>,
) -> Vec<Pending> {
    let mut result: Vec<Pending> = Vec::new();
    for pending in before {
        let untouched: Vec<usize> = (0..outs.len())
            .filter(|&i| outs[i].contains(&pending.with(&labels[i])))
            .collect();
        let merged = if untouched.len() == outs.len() {
            Some(pending.clone())
        } else if untouched.len() >= 2 {
            arms.map(|(scrutinee, patterns)| {
                let joined: Vec<&str> = untouched.iter().map(|&i| patterns[i].as_str()).collect();
                pending.with(&short(&format!(
                    "match {scrutinee} {{ {} }}",
                    joined.join(" | ")
                )))
            })
        } else {
            None
        };
        if let Some(merged) = merged {
            for &i in &untouched {
                let passed = pending.with(&labels[i]);
                outs[i].retain(|out| *out != passed);
            }
            result.push(merged);
        }
    }
    for out in outs {
        result.extend(out);
    }
    dedup(&mut result);
    result
}

pub(super) fn dedup(pendings: &mut Vec<Pending>) {
    let mut seen: Vec<Pending> = Vec::new();
    pendings.retain(|pending| {
        if seen.contains(pending) {
            false
        } else {
            seen.push(pending.clone());
            true
        }
    });
}
