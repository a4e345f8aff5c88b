//! The diagram of a saga: Mermaid `stateDiagram-v2` text with the start, every suspension
//! point (what it asks, its message as written, its pinned key), every `checkpoint()`,
//! every helper call, and the exits (the result, `?` errors, each `return`), joined by the
//! control flow between them with its conditions as written.
//!
//! The walk reads the function as written, so that conditions and messages read as the
//! author wrote them, and meets its suspensions in the order lowering numbered them
//! (`lower::Site`): Rust's evaluation order, an assigned value before its place, a
//! helper's arguments before the helper. Each suspension is then the node of its site,
//! named by the site's state variant (`AfterElicitTarget`, the name `state_names()` and
//! the log use). Should the two orders ever disagree, the diagram falls back to the
//! sites alone, in order, rather than name a point wrongly.
//!
//! A branch that neither suspends nor leaves adds nothing: its condition is dropped where
//! every branch goes on to the same place. A loop that suspends is a choice node with its
//! back edge; a loop that does not is walked once, for the exits in it.
//!
//! Text from the code is made safe for Mermaid by [`escape`]: Mermaid's entity codes
//! (`#quot;`) are not decoded in state diagrams, so the few characters its grammar or its
//! HTML sanitiser would take as syntax are replaced by look-alikes instead.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ItemFn, Pat, Stmt};

use super::lower::{Site, contains_suspension};
use super::macro_args;
use super::sig::Signature;
use super::suspend::{Args, RequestKind, Suspension, classify};
use crate::shared::private_path;

/// Whose diagram it is: the wording of its start.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// A `#[saga_tool]` (or prompt, or resource).
    Tool,
    /// A `#[saga_fn]`.
    Helper,
}

/// The most characters of one line of text in the diagram.
const MAX_LINE: usize = 80;

/// The Mermaid `stateDiagram-v2` text of the saga `item`, whose suspension points are
/// `sites` (as lowering found them) and whose arguments are `params`.
pub fn build(whose: Whose, item: &ItemFn, params: &[String], sites: &[Site]) -> String {
    let name = item.sig.ident.to_string();
    let name = name.trim_start_matches("r#");
    let start = match whose {
        Whose::Tool => format!("{name}({})", params.join(", ")),
        Whose::Helper => format!("#[saga_fn] {name}({})", params.join(", ")),
    };
    let mut walker = Walker::new(sites, &start);
    walker.block(&item.block);
    let tail = tail_text(&item.block);
    if walker.consistent && walker.next_site == sites.len() {
        walker.finish(tail);
        walker.render()
    } else {
        linear(sites, &start)
    }
}

/// The sites alone, in order: the diagram when the walk and lowering disagree.
fn linear(sites: &[Site], start: &str) -> String {
    let mut walker = Walker::new(sites, start);
    for site in sites {
        let node = walker.site_node(site, site_lines(&site.suspension, None));
        walker.goto(node);
    }
    walker.finish(None);
    let mut text = walker.render();
    text.push_str("    %% control flow not shown: the sites in the order they were found\n");
    text
}

/// The text of the tail expression of the body, when it is a plain value.
fn tail_text(block: &Block) -> Option<String> {
    match block.stmts.last() {
        Some(Stmt::Expr(expr, None)) => match expr {
            Expr::If(_)
            | Expr::Match(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Block(_)
            | Expr::Unsafe(_) => None,
            // The answer of a suspension is the result: its node says what it asks.
            other if contains_suspension(other) => None,
            other => Some(short(&code(other))),
        },
        _ => None,
    }
}

/// A path of the control flow not yet ended at a node: where it comes from, and the
/// conditions it took since.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Pending {
    from: usize,
    labels: Vec<String>,
}

impl Pending {
    fn with(&self, label: &str) -> Pending {
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

fn with_all(pendings: &[Pending], label: &str) -> Vec<Pending> {
    pendings.iter().map(|pending| pending.with(label)).collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
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

/// Where a `break` or `continue` goes: a loop (with its choice node when it suspends) or
/// a labelled block.
struct Target {
    label: Option<String>,
    is_loop: bool,
    choice: Option<usize>,
    breaks: Vec<Pending>,
    continues: Vec<Pending>,
}

struct Walker<'a> {
    sites: &'a [Site],
    next_site: usize,
    consistent: bool,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    frontier: Vec<Pending>,
    targets: Vec<Target>,
    failed: Option<usize>,
    loops: usize,
    choices: usize,
    returns: usize,
    /// The type of the `let` whose initialiser is being walked, for `elicit` without a
    /// turbofish.
    let_type: Option<String>,
}

impl<'a> Walker<'a> {
    fn new(sites: &'a [Site], start: &str) -> Self {
        let mut walker = Walker {
            sites,
            next_site: 0,
            consistent: true,
            nodes: Vec::new(),
            edges: Vec::new(),
            frontier: Vec::new(),
            targets: Vec::new(),
            failed: None,
            loops: 0,
            choices: 0,
            returns: 0,
            let_type: None,
        };
        let start = walker.node("Start", vec![short(start)], Shape::Plain);
        walker.frontier = vec![Pending {
            from: start,
            labels: Vec::new(),
        }];
        walker
    }

    fn node(&mut self, id: &str, lines: Vec<String>, shape: Shape) -> usize {
        self.nodes.push(Node {
            id: state_id(id),
            lines,
            shape,
        });
        self.nodes.len() - 1
    }

    fn edge(&mut self, from: usize, to: usize, labels: &[String]) {
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
    fn goto(&mut self, node: usize) {
        for pending in std::mem::take(&mut self.frontier) {
            self.edge(pending.from, node, &pending.labels);
        }
        self.frontier = vec![Pending {
            from: node,
            labels: Vec::new(),
        }];
    }

    /// A `?`: every pending path may end at the error, with `label`; the flow goes on.
    fn fail(&mut self, label: &str) {
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
    fn junction(&mut self) {
        if self.frontier.len() < 2 {
            return;
        }
        self.choices += 1;
        let id = format!("Choice{}", self.choices);
        let node = self.node(&id, Vec::new(), Shape::Choice);
        self.goto(node);
    }

    /// The node of the next site, which must be of the kinds `suspension` asks.
    fn suspend(&mut self, suspension: &Suspension) {
        let index = self.next_site;
        self.next_site += 1;
        let Some(site) = self.sites.get(index) else {
            self.consistent = false;
            return;
        };
        if site.suspension.kinds() != suspension.kinds() {
            self.consistent = false;
            return;
        }
        let lines = site_lines(suspension, self.let_type.take());
        let node = self.site_node(site, lines);
        self.goto(node);
    }

    fn site_node(&mut self, site: &Site, lines: Vec<String>) -> usize {
        self.node(&site.variant.to_string(), lines, Shape::Plain)
    }

    // --- Statements -----------------------------------------------------------------------

    fn block(&mut self, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local(local) => {
                let Some(init) = &local.init else {
                    return;
                };
                self.let_type = match &local.pat {
                    Pat::Type(typed) => Some(code_type(&typed.ty)),
                    _ => None,
                };
                self.expr(&init.expr);
                self.let_type = None;
                if let Some((_, diverge)) = &init.diverge {
                    let pattern = match &local.pat {
                        Pat::Type(typed) => &*typed.pat,
                        other => other,
                    };
                    let matched = format!("let {} = {}", code_pat(pattern), label_code(&init.expr));
                    let labels = [
                        format!("if {}", short(&matched)),
                        format!("if {}", short(&format!("!({matched})"))),
                    ];
                    self.junction();
                    let before = self.frontier.clone();
                    self.frontier = with_all(&before, &labels[1]);
                    self.expr(diverge);
                    let diverged = std::mem::take(&mut self.frontier);
                    let matched = with_all(&before, &labels[0]);
                    self.frontier = join(&before, &labels, vec![matched, diverged], None);
                }
            }
            Stmt::Expr(expr, _) => self.expr(expr),
            Stmt::Macro(stmt_macro) => {
                let expr = Expr::Macro(syn::ExprMacro {
                    attrs: Vec::new(),
                    mac: stmt_macro.mac.clone(),
                });
                self.expr(&expr);
            }
            Stmt::Item(_) => {}
        }
    }

    // --- Expressions, in Rust's evaluation order ------------------------------------------

    fn exprs<'e>(&mut self, exprs: impl IntoIterator<Item = &'e Expr>) {
        for expr in exprs {
            self.expr(expr);
        }
    }

    fn expr(&mut self, expr: &Expr) {
        if let Some(Ok(suspension)) = classify(expr) {
            // What a suspension evaluates before it suspends: a helper's arguments (which
            // may suspend themselves), a request's (which may fail with `?`).
            match &suspension {
                Suspension::Call { call, .. } => {
                    if let Expr::Call(call) = call {
                        self.exprs(&call.args);
                    }
                }
                Suspension::Await { request, .. } => self.request_args(request),
                Suspension::Join { requests } => {
                    for (request, _) in requests {
                        self.request_args(request);
                    }
                }
            }
            self.suspend(&suspension);
            return;
        }
        match expr {
            Expr::Try(expr_try) => {
                self.expr(&expr_try.expr);
                let label = if is_suspension(&expr_try.expr) {
                    "?".to_owned()
                } else {
                    format!("{}?", short(&code(&expr_try.expr)))
                };
                self.fail(&label);
            }
            Expr::Return(expr_return) => {
                if let Some(value) = &expr_return.expr {
                    self.expr(value);
                }
                self.returns += 1;
                let text = match &expr_return.expr {
                    Some(value) => format!("return {}", code(value)),
                    None => "return".to_owned(),
                };
                let id = format!("Return{}", self.returns);
                let node = self.node(&id, vec![short(&text)], Shape::Plain);
                self.goto(node);
                self.frontier.clear();
            }
            Expr::Break(expr_break) => {
                if let Some(value) = &expr_break.expr {
                    self.expr(value);
                }
                let label = expr_break.label.as_ref().map(|l| l.ident.to_string());
                let pending = std::mem::take(&mut self.frontier);
                if let Some(target) = self.target(label.as_deref(), false) {
                    target.breaks.extend(pending);
                }
            }
            Expr::Continue(expr_continue) => {
                let label = expr_continue.label.as_ref().map(|l| l.ident.to_string());
                let pending = std::mem::take(&mut self.frontier);
                let choice = match self.target(label.as_deref(), true) {
                    Some(target) => match target.choice {
                        Some(choice) => Some(choice),
                        None => {
                            target.continues.extend(pending.clone());
                            None
                        }
                    },
                    None => None,
                };
                if let Some(choice) = choice {
                    for pending in pending {
                        let pending = pending.with("continue");
                        self.edge(pending.from, choice, &pending.labels);
                    }
                }
            }
            Expr::If(expr_if) => self.expr_if(expr_if),
            Expr::Match(expr_match) => {
                self.expr(&expr_match.expr);
                let scrutinee = short(&label_code(&expr_match.expr));
                let patterns: Vec<String> = expr_match
                    .arms
                    .iter()
                    .map(|arm| {
                        let pattern = code_pat(&arm.pat);
                        match &arm.guard {
                            Some((_, guard)) => format!("{pattern} if {}", code(guard)),
                            None => pattern,
                        }
                    })
                    .collect();
                let labels: Vec<String> = patterns
                    .iter()
                    .map(|pattern| short(&format!("match {scrutinee} {{ {pattern} }}")))
                    .collect();
                if expr_match.arms.iter().any(|arm| branches(&arm.body)) {
                    self.junction();
                }
                let before = self.frontier.clone();
                let mut outs = Vec::new();
                for (arm, label) in expr_match.arms.iter().zip(&labels) {
                    self.frontier = with_all(&before, label);
                    self.expr(&arm.body);
                    outs.push(std::mem::take(&mut self.frontier));
                }
                self.frontier = join(&before, &labels, outs, Some((&scrutinee, &patterns)));
            }
            Expr::Loop(expr_loop) => {
                let label = expr_loop.label.as_ref().map(|l| l.name.ident.to_string());
                self.walk_loop(label, LoopKind::Plain, &expr_loop.body);
            }
            Expr::While(expr_while) => {
                let label = expr_while.label.as_ref().map(|l| l.name.ident.to_string());
                self.walk_loop(label, LoopKind::While(&expr_while.cond), &expr_while.body);
            }
            Expr::ForLoop(expr_for) => {
                self.expr(&expr_for.expr);
                let label = expr_for.label.as_ref().map(|l| l.name.ident.to_string());
                let header = format!(
                    "for {} in {}",
                    code_pat(&expr_for.pat),
                    label_code(&expr_for.expr)
                );
                self.walk_loop(label, LoopKind::For(short(&header)), &expr_for.body);
            }
            Expr::Block(expr_block) => match &expr_block.label {
                Some(label) => {
                    self.targets.push(Target {
                        label: Some(label.name.ident.to_string()),
                        is_loop: false,
                        choice: None,
                        breaks: Vec::new(),
                        continues: Vec::new(),
                    });
                    self.block(&expr_block.block);
                    if let Some(target) = self.targets.pop() {
                        self.frontier.extend(target.breaks);
                    }
                }
                None => self.block(&expr_block.block),
            },
            Expr::Unsafe(expr_unsafe) => self.block(&expr_unsafe.block),
            Expr::Binary(binary) if matches!(binary.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) => {
                // The right side is evaluated only when the left does not decide.
                self.expr(&binary.left);
                let left = label_code(&binary.left);
                let (taken, skipped) = match binary.op {
                    syn::BinOp::And(_) => {
                        (format!("if {left}"), format!("if {}", negate(&binary.left)))
                    }
                    _ => (format!("if {}", negate(&binary.left)), format!("if {left}")),
                };
                let labels = [short(&taken), short(&skipped)];
                if branches(&binary.right) {
                    self.junction();
                }
                let before = self.frontier.clone();
                self.frontier = with_all(&before, &labels[0]);
                self.expr(&binary.right);
                let evaluated = std::mem::take(&mut self.frontier);
                let skipped = with_all(&before, &labels[1]);
                self.frontier = join(&before, &labels, vec![evaluated, skipped], None);
            }
            Expr::Binary(binary) if super::restate::assigns(&binary.op) => {
                self.expr(&binary.right);
                self.expr(&binary.left);
            }
            Expr::Binary(binary) => {
                self.expr(&binary.left);
                self.expr(&binary.right);
            }
            Expr::Assign(assign) => {
                self.expr(&assign.right);
                self.expr(&assign.left);
            }
            Expr::MethodCall(call) => {
                self.expr(&call.receiver);
                self.exprs(&call.args);
            }
            Expr::Call(call) => {
                self.expr(&call.func);
                self.exprs(&call.args);
            }
            Expr::Tuple(tuple) => self.exprs(&tuple.elems),
            Expr::Array(array) => self.exprs(&array.elems),
            Expr::Struct(expr_struct) => {
                self.exprs(expr_struct.fields.iter().map(|field| &field.expr));
                if let Some(rest) = &expr_struct.rest {
                    self.expr(rest);
                }
            }
            Expr::Index(index) => {
                self.expr(&index.expr);
                self.expr(&index.index);
            }
            Expr::Range(range) => {
                if let Some(start) = &range.start {
                    self.expr(start);
                }
                if let Some(end) = &range.end {
                    self.expr(end);
                }
            }
            Expr::Repeat(repeat) => self.expr(&repeat.expr),
            Expr::Macro(mac) => {
                if let Some(args) = macro_args::std_args(&mac.mac) {
                    let values: Vec<Expr> = args.values().into_iter().cloned().collect();
                    self.exprs(&values);
                }
            }
            Expr::Field(field) => self.expr(&field.base),
            Expr::Await(awaited) => self.expr(&awaited.base),
            Expr::Unary(unary) => self.expr(&unary.expr),
            Expr::Cast(cast) => self.expr(&cast.expr),
            Expr::Paren(paren) => self.expr(&paren.expr),
            Expr::Group(group) => self.expr(&group.expr),
            Expr::Reference(reference) => self.expr(&reference.expr),
            Expr::Let(expr_let) => self.expr(&expr_let.expr),
            // A closure or an async block runs later, if ever: neither its `?` nor its
            // `return` leaves the saga.
            _ => {}
        }
    }

    /// The arguments of a request and of its builder calls, evaluated before it is sent.
    fn request_args(&mut self, request: &Expr) {
        match request {
            Expr::MethodCall(call) => {
                self.request_args(&call.receiver);
                self.exprs(&call.args);
            }
            Expr::Paren(paren) => self.request_args(&paren.expr),
            Expr::Call(call) => self.exprs(&call.args),
            _ => {}
        }
    }

    fn expr_if(&mut self, expr_if: &syn::ExprIf) {
        let terms = super::lower::chain(&expr_if.cond);
        if super::lower::has_let(&expr_if.cond)
            && terms.len() > 1
            && contains_suspension(&expr_if.cond)
        {
            // As lowering does: `if let P = e && c { A } else { B }` is
            // `if let P = e { if c { A } else { B } } else { B }`, `B` twice.
            let first = terms[0];
            let rest = &terms[1..];
            let then_branch = &expr_if.then_branch;
            let nested: Result<syn::ExprIf, _> = match &expr_if.else_branch {
                Some((_, else_branch)) => syn::parse2(quote! {
                    if #first { if #(#rest)&&* #then_branch else #else_branch } else #else_branch
                }),
                None => syn::parse2(quote! {
                    if #first { if #(#rest)&&* #then_branch }
                }),
            };
            match nested {
                Ok(nested) => return self.expr_if(&nested),
                Err(_) => self.consistent = false,
            }
        }
        self.expr(&expr_if.cond);
        let cond = label_code(&expr_if.cond);
        let labels = [
            short(&format!("if {cond}")),
            short(&format!("if {}", negate(&expr_if.cond))),
        ];
        let mut otherwise = Expr::If(expr_if.clone());
        if let Expr::If(copy) = &mut otherwise {
            *copy.cond = syn::parse_quote!(true);
        }
        if branches(&otherwise) {
            self.junction();
        }
        let before = self.frontier.clone();
        self.frontier = with_all(&before, &labels[0]);
        self.block(&expr_if.then_branch);
        let then = std::mem::take(&mut self.frontier);
        self.frontier = with_all(&before, &labels[1]);
        if let Some((_, else_branch)) = &expr_if.else_branch {
            self.expr(else_branch);
        }
        let otherwise = std::mem::take(&mut self.frontier);
        self.frontier = join(&before, &labels, vec![then, otherwise], None);
    }

    fn target(&mut self, label: Option<&str>, is_continue: bool) -> Option<&mut Target> {
        self.targets
            .iter_mut()
            .rev()
            .find(|target| match label {
                Some(label) => target.label.as_deref() == Some(label),
                // An unlabelled `break` or `continue` is its innermost loop's.
                None => target.is_loop,
            })
            .filter(|target| !is_continue || target.is_loop)
    }

    fn walk_loop(&mut self, label: Option<String>, kind: LoopKind<'_>, body: &Block) {
        let cond_suspends = matches!(kind, LoopKind::While(cond) if contains_suspension(cond));
        let suspends = cond_suspends || body.stmts.iter().any(stmt_suspends);
        let before = self.frontier.clone();
        let choice = if suspends {
            self.loops += 1;
            let id = format!("Loop{}", self.loops);
            let choice = self.node(&id, Vec::new(), Shape::Choice);
            self.goto(choice);
            Some(choice)
        } else {
            None
        };
        self.targets.push(Target {
            label,
            is_loop: true,
            choice,
            breaks: Vec::new(),
            continues: Vec::new(),
        });
        let entry = self.frontier.clone();
        let mut done = Vec::new();
        match &kind {
            LoopKind::Plain => self.frontier = with_all(&entry, if suspends { "" } else { "loop" }),
            LoopKind::For(header) => {
                self.frontier = with_all(&entry, header);
                done = with_all(&entry, "done");
            }
            LoopKind::While(cond) => {
                self.expr(cond);
                let text = label_code(cond);
                let tested = self.frontier.clone();
                self.frontier = with_all(&tested, &short(&format!("while {text}")));
                done = with_all(&tested, &short(&negate(cond)));
            }
        }
        self.block(body);
        let Some(target) = self.targets.pop() else {
            return;
        };
        let mut ends = std::mem::take(&mut self.frontier);
        match choice {
            Some(choice) => {
                for pending in ends {
                    let pending = pending.with("next");
                    self.edge(pending.from, choice, &pending.labels);
                }
                self.frontier = target.breaks;
                self.frontier.extend(done);
            }
            None => {
                // Nothing in it suspends: the loop is one step of the flow, left by its
                // breaks (a `loop`) or at its end, whatever happened inside.
                ends.extend(target.continues);
                let leaves = match kind {
                    LoopKind::Plain => !target.breaks.is_empty(),
                    _ => true,
                };
                self.frontier = if leaves { before } else { Vec::new() };
            }
        }
        dedup(&mut self.frontier);
    }

    /// The result at the end of the body, and the terminal edges.
    fn finish(&mut self, tail: Option<String>) {
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

    fn render(&self) -> String {
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

enum LoopKind<'e> {
    Plain,
    While(&'e Expr),
    For(String),
}

/// Where the branches of a fork go on from. A path that went through a branch untouched
/// (from where it was before, with only that branch's condition added) in every branch
/// is the path before the fork: the condition decided nothing. Among a `match`'s arms,
/// those that pass a path through untouched share one edge (`match x { A | B }`).
fn join(
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

fn dedup(pendings: &mut Vec<Pending>) {
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

/// Whether `expr` may change where the flow goes: it suspends, or leaves (`?`, `return`,
/// `break`, `continue`), outside closures and nested items.
fn branches(expr: &Expr) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Try(_) | Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => {
                    self.0 = true
                }
                Expr::Closure(_) | Expr::Async(_) => {}
                _ => syn::visit::visit_expr(self, expr),
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    if contains_suspension(expr) {
        return true;
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_expr(&mut finder, expr);
    finder.0
}

fn stmt_suspends(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Local(local) => local.init.as_ref().is_some_and(|init| {
            contains_suspension(&init.expr)
                || init
                    .diverge
                    .as_ref()
                    .is_some_and(|(_, diverge)| contains_suspension(diverge))
        }),
        Stmt::Expr(expr, _) => contains_suspension(expr),
        Stmt::Macro(stmt_macro) => contains_suspension(&Expr::Macro(syn::ExprMacro {
            attrs: Vec::new(),
            mac: stmt_macro.mac.clone(),
        })),
        Stmt::Item(_) => false,
    }
}

fn is_suspension(expr: &Expr) -> bool {
    match expr {
        Expr::Paren(paren) => is_suspension(&paren.expr),
        other => matches!(classify(other), Some(Ok(_))),
    }
}

/// The condition under which `cond` is false, as close to the code as it reads.
fn negate(cond: &Expr) -> String {
    match cond {
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Not(_)) => label_code(&unary.expr),
        Expr::Paren(paren) => negate(&paren.expr),
        Expr::Binary(binary) if matches!(binary.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) => {
            let mut flipped = binary.clone();
            flipped.op = match binary.op {
                syn::BinOp::Eq(_) => syn::BinOp::Ne(Default::default()),
                _ => syn::BinOp::Eq(Default::default()),
            };
            label_code(&Expr::Binary(flipped))
        }
        Expr::Path(_)
        | Expr::MethodCall(_)
        | Expr::Call(_)
        | Expr::Field(_)
        | Expr::Lit(_)
        | Expr::Index(_)
        | Expr::Macro(_)
        | Expr::Await(_)
        | Expr::Try(_) => format!("!{}", label_code(cond)),
        other => format!("!({})", label_code(other)),
    }
}

// --- What a suspension asks -----------------------------------------------------------------

/// The lines of a suspension's node: what it asks, its message as written, its key.
fn site_lines(suspension: &Suspension, let_type: Option<String>) -> Vec<String> {
    match suspension {
        Suspension::Await { request, kind } => {
            let mut lines = vec![request_title(request, *kind, let_type)];
            lines.extend(request_details(request, *kind));
            lines.into_iter().map(|line| short(&line)).collect()
        }
        Suspension::Join { requests } => {
            let mut lines = vec![format!("join!: {} requests in one round", requests.len())];
            for (request, kind) in requests {
                let mut line = request_title(request, *kind, None);
                for detail in request_details(request, *kind) {
                    line.push(' ');
                    line.push_str(&detail);
                }
                lines.push(short(&line));
            }
            lines
        }
        Suspension::Call { call, name } => vec![
            short(&format!("{}.await", code(call))),
            short(&format!("helper {name}: see its own diagram")),
        ],
    }
}

/// A request's builder chain: the call that makes it, then its builder calls in order.
fn builder_chain(request: &Expr) -> Option<(&syn::ExprCall, Vec<&syn::ExprMethodCall>)> {
    let mut calls = Vec::new();
    let mut expr = request;
    loop {
        match expr {
            Expr::MethodCall(call) => {
                calls.push(call);
                expr = &call.receiver;
            }
            Expr::Paren(paren) => expr = &paren.expr,
            Expr::Call(call) => {
                calls.reverse();
                return Some((call, calls));
            }
            _ => return None,
        }
    }
}

/// `elicit Target`, `sample`, `checkpoint`, …
fn request_title(request: &Expr, kind: RequestKind, let_type: Option<String>) -> String {
    let function = kind.function();
    match kind.args() {
        _ if kind == RequestKind::JoinAll => format!("{function}, in one round"),
        Args::Message { typed: true } => {
            let turbofish = builder_chain(request).and_then(|(call, _)| match &*call.func {
                Expr::Path(path) => {
                    path.path
                        .segments
                        .last()
                        .and_then(|segment| match &segment.arguments {
                            syn::PathArguments::AngleBracketed(args) => {
                                args.args.iter().find_map(|arg| match arg {
                                    syn::GenericArgument::Type(ty) => Some(code_type(ty)),
                                    _ => None,
                                })
                            }
                            _ => None,
                        })
                }
                _ => None,
            });
            match turbofish.or(let_type) {
                Some(ty) => format!("{function} {ty}"),
                None => function.to_owned(),
            }
        }
        _ => function.to_owned(),
    }
}

/// The message (and a URL elicitation's URL), then `key …` when pinned and `.outcome()`
/// when declines are answers.
fn request_details(request: &Expr, kind: RequestKind) -> Vec<String> {
    let Some((call, builders)) = builder_chain(request) else {
        return Vec::new();
    };
    let args: Vec<&Expr> = call.args.iter().collect();
    let mut lines = Vec::new();
    match kind.args() {
        Args::UrlThenMessage => {
            if let Some(message) = args.get(1) {
                lines.push(code(message));
            }
            if let Some(url) = args.first() {
                lines.push(format!("url {}", code(url)));
            }
        }
        Args::None => {}
        Args::Message { .. } => {
            if let Some(message) = args.first() {
                lines.push(code(message));
            }
        }
    }
    for builder in builders {
        match builder.method.to_string().as_str() {
            "key" => {
                if let Some(key) = builder.args.first() {
                    lines.push(format!("key {}", code(key)));
                }
            }
            "outcome" => lines.push(".outcome()".to_owned()),
            _ => {}
        }
    }
    lines
}

// --- Text -----------------------------------------------------------------------------------

/// `expr` as a user would write it, on one line.
fn code(expr: &Expr) -> String {
    // prettyplease prints a macro's tokens as tokens (`a ? + b ?`): the standard macros'
    // arguments, which are expressions, are printed as such instead.
    let mut expr = expr.clone();
    let mut macros = Macros(Vec::new());
    macros.visit_expr_mut(&mut expr);
    let text = one_line(quote!(fn __saga_diagram() { #expr; }), |text| {
        text.strip_suffix(';').unwrap_or(text).to_owned()
    })
    .unwrap_or_else(|| quote!(#expr).to_string());
    macros
        .0
        .iter()
        .enumerate()
        .rev()
        .fold(text, |text, (index, rendered)| {
            text.replace(&format!("{MACRO_PLACEHOLDER}{index}"), rendered)
        })
}

/// `expr` in a condition: a request it awaits (`elicit(..).await?`), which its node
/// shows, as `answer`.
fn label_code(expr: &Expr) -> String {
    struct Answers;
    impl VisitMut for Answers {
        fn visit_expr_mut(&mut self, expr: &mut Expr) {
            let request = match &*expr {
                Expr::Try(expr_try) => is_request(&expr_try.expr),
                other => is_request(other),
            };
            if request {
                *expr = syn::parse_quote!(answer);
                return;
            }
            visit_mut::visit_expr_mut(self, expr);
        }
    }
    let mut expr = expr.clone();
    Answers.visit_expr_mut(&mut expr);
    code(&expr)
}

/// Whether `expr` awaits a request or a `join!` (not a helper, whose call reads well).
fn is_request(expr: &Expr) -> bool {
    match expr {
        Expr::Paren(paren) => is_request(&paren.expr),
        other => matches!(
            classify(other),
            Some(Ok(Suspension::Await { .. } | Suspension::Join { .. }))
        ),
    }
}

const MACRO_PLACEHOLDER: &str = "__saga_diagram_macro_";

/// Replaces each standard macro by a placeholder, keeping its text.
struct Macros(Vec<String>);

impl VisitMut for Macros {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Macro(mac) = expr
            && let Some(text) = macro_text(&mac.mac)
        {
            let placeholder = format_ident!("{MACRO_PLACEHOLDER}{}", self.0.len());
            self.0.push(text);
            *expr = syn::parse_quote!(#placeholder);
            return;
        }
        visit_mut::visit_expr_mut(self, expr);
    }
}

/// A standard macro with its arguments printed as expressions: `format!("{}", a? + b)`.
fn macro_text(mac: &syn::Macro) -> Option<String> {
    let args = macro_args::std_args(mac)?;
    let path = &mac.path;
    let path = quote!(#path).to_string().replace(' ', "");
    let inner = match &args {
        macro_args::Args::List(list) => list.iter().map(code).collect::<Vec<_>>().join(", "),
        macro_args::Args::Repeat(value, _, count) => format!("{}; {}", code(value), code(count)),
    };
    let (open, close) = match mac.delimiter {
        syn::MacroDelimiter::Paren(_) => ("(", ")"),
        syn::MacroDelimiter::Brace(_) => ("{ ", " }"),
        syn::MacroDelimiter::Bracket(_) => ("[", "]"),
    };
    Some(format!("{path}!{open}{inner}{close}"))
}

fn code_pat(pat: &Pat) -> String {
    one_line(
        quote!(fn __saga_diagram() { match __x { #pat => {} } }),
        |text| {
            text.strip_prefix("match __x { ")
                .and_then(|text| text.strip_suffix(" => {} }"))
                .unwrap_or(text)
                .to_owned()
        },
    )
    .unwrap_or_else(|| quote!(#pat).to_string())
}

fn code_type(ty: &syn::Type) -> String {
    one_line(quote!(fn __saga_diagram() { let _: #ty; }), |text| {
        text.strip_prefix("let _: ")
            .and_then(|text| text.strip_suffix(';'))
            .unwrap_or(text)
            .to_owned()
    })
    .unwrap_or_else(|| quote!(#ty).to_string())
}

/// The body of a one-statement function, formatted and put on one line.
fn one_line(function: proc_macro2::TokenStream, body: impl Fn(&str) -> String) -> Option<String> {
    let file: syn::File = syn::parse2(function).ok()?;
    let text = prettyplease::unparse(&file);
    let mut lines: Vec<&str> = text.lines().map(str::trim).collect();
    // `fn __saga_diagram() {` … `}`
    if lines.len() < 3 {
        return None;
    }
    lines.remove(0);
    lines.pop();
    let mut joined = String::new();
    for line in lines {
        if line.is_empty() {
            continue;
        }
        let closes = line.starts_with(')') || line.starts_with(']');
        if closes && joined.ends_with(',') {
            joined.pop();
        }
        let opened = joined.ends_with('(') || joined.ends_with('[');
        if !joined.is_empty() && !opened && !closes {
            joined.push(' ');
        }
        joined.push_str(line);
    }
    Some(body(&joined))
}

/// `text` cut to [`MAX_LINE`] characters.
fn short(text: &str) -> String {
    if text.chars().count() > MAX_LINE {
        let cut: String = text.chars().take(MAX_LINE - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        text.to_owned()
    }
}

/// A state id: the variant's name, which is an identifier; anything else replaced.
fn state_id(name: &str) -> String {
    let id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() { "_".to_owned() } else { id }
}

/// `text` as the text of a description or a transition's label, where Mermaid reads a
/// line up to its end: on one line, and with what its grammar or its HTML sanitiser would
/// take as syntax replaced by a look-alike (Mermaid's `#quot;` codes are shown as they
/// are in state diagrams, so they cannot be used):
///
/// - `;` ends a statement: `⁏` (reversed semicolon);
/// - `::`, and a `:` at the end, are refused: `∶` (ratio);
/// - `<` before a letter opens an HTML tag, which is dropped: `‹` (and its `>`, `›`);
/// - `%%` opens a directive: `% %`;
/// - line breaks, tabs, control and bidirectional characters: a space.
pub fn escape(text: &str) -> String {
    let chars: Vec<char> = text
        .chars()
        .map(|c| {
            if c.is_control() || is_bidi_control(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut angles = 0usize;
    let mut last_space = true;
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        let rest_blank = chars[i + 1..].iter().all(|c| c.is_whitespace());
        let replaced = match c {
            ';' => SEMICOLON,
            ':' if before == Some(':') || after == Some(':') || rest_blank => COLON,
            '<' if after
                .is_some_and(|next| !next.is_whitespace() && next != '=' && next != '<') =>
            {
                angles += 1;
                LEFT_ANGLE
            }
            '>' if angles > 0
                && before
                    .is_some_and(|prev| !prev.is_whitespace() && prev != '-' && prev != '=') =>
            {
                angles -= 1;
                RIGHT_ANGLE
            }
            '%' if before == Some('%') => {
                out.push(' ');
                '%'
            }
            c => c,
        };
        if replaced.is_whitespace() {
            if last_space {
                continue;
            }
            last_space = true;
            out.push(' ');
        } else {
            last_space = false;
            out.push(replaced);
        }
    }
    let trimmed = out.trim_end().to_owned();
    if trimmed.is_empty() {
        "…".to_owned()
    } else {
        trimmed
    }
}

/// What `;` is shown as: U+204F REVERSED SEMICOLON (not the Greek question mark, which
/// normalisation turns back into a `;`).
const SEMICOLON: char = '\u{204f}';
/// What a `:` Mermaid would refuse is shown as: U+2236 RATIO.
const COLON: char = '\u{2236}';
/// What the `<` and `>` of a generic are shown as: U+2039 and U+203A.
const LEFT_ANGLE: char = '\u{2039}';
const RIGHT_ANGLE: char = '\u{203a}';

/// The Unicode characters that reorder text when displayed.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

// --- What the macros generate -------------------------------------------------------------

/// What a saga's expansion gains from its diagram.
pub struct Generated {
    /// `#[doc = …]`: the diagram section of the docs.
    pub doc: TokenStream,
    /// A tool's: `tool.meta` with the diagram under `saga/diagram` (inside `tool()`).
    pub meta: TokenStream,
    /// The method that gives the text: `SagaTool::diagram` or `SagaFn::diagram`.
    pub method: TokenStream,
}

/// The diagram of a tool (`#[saga_tool]`, `#[saga_prompt]`, `#[saga_resource]`).
pub fn tool(item: &ItemFn, sig: &Signature, sites: &[Site]) -> Generated {
    let diagram = build(Whose::Tool, item, &param_names(sig), sites);
    let doc = doc_section(&diagram, Whose::Tool);
    let private = private_path();
    Generated {
        doc: quote!(#[doc = #doc]),
        meta: quote!(tool.meta = #private::with_diagram(tool.meta.take(), #diagram);),
        method: quote! {
            fn diagram(&self) -> ::std::string::String {
                ::std::string::String::from(#diagram)
            }
        },
    }
}

/// The diagram of a `#[saga_fn]`.
pub fn helper(item: &ItemFn, sig: &Signature, sites: &[Site]) -> Generated {
    let diagram = build(Whose::Helper, item, &param_names(sig), sites);
    let doc = doc_section(&diagram, Whose::Helper);
    Generated {
        doc: quote!(#[doc = #doc]),
        meta: TokenStream::new(),
        method: quote! {
            fn diagram() -> &'static str {
                #diagram
            }
        },
    }
}

fn param_names(sig: &Signature) -> Vec<String> {
    sig.params
        .iter()
        .map(|param| param.ident.to_string().trim_start_matches("r#").to_owned())
        .collect()
}

// --- Rustdoc --------------------------------------------------------------------------------

/// The section appended to the docs of the tool's struct (or the helper's function): the
/// diagram in a `<pre class="mermaid">`, which reads as text as it is, and a module
/// script that has Mermaid draw it (rustdoc does not draw Mermaid itself).
pub fn doc_section(diagram: &str, whose: Whose) -> String {
    let (attribute, method) = match whose {
        Whose::Tool => ("`#[saga_tool]`", "`SagaTool::diagram()`"),
        Whose::Helper => ("`#[saga_fn]`", "`.diagram()` on a call of it"),
    };
    let html = diagram
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "\n\n# Diagram\n\n\
         Where this saga suspends and how it gets there, as {attribute} compiled it \
         (Mermaid; {method} gives the text):\n\n\
         <pre class=\"mermaid saga-diagram\">\n{html}</pre>\n\n\
         <script type=\"module\">\n\
         const dark = [\"dark\", \"ayu\"].includes(document.documentElement.dataset.theme);\n\
         const {{ default: mermaid }} = await import(\"{MERMAID_URL}\");\n\
         mermaid.initialize({{ startOnLoad: false, theme: dark ? \"dark\" : \"default\" }});\n\
         await mermaid.run({{ querySelector: \"pre.saga-diagram\" }});\n\
         </script>\n"
    )
}

/// Mermaid's ES module, at the version the diagrams were checked with.
const MERMAID_URL: &str = "https://cdn.jsdelivr.net/npm/mermaid@12.3.0/dist/mermaid.esm.min.mjs";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_mermaid_would_read_as_syntax() {
        assert_eq!(escape("a; b"), "a\u{204f} b");
        assert_eq!(escape("elicit::<Target>(x)"), "elicit∶∶‹Target›(x)");
        assert_eq!(escape("Vec<Vec<u8>>"), "Vec‹Vec‹u8››");
        assert_eq!(escape("if a < b && c > d"), "if a < b && c > d");
        assert_eq!(escape("x <= y -> z => w"), "x <= y -> z => w");
        assert_eq!(escape("target:"), "target∶");
        assert_eq!(escape("a: b"), "a: b");
        assert_eq!(escape("\"quoted\" {x} [y] | z"), "\"quoted\" {x} [y] | z");
        assert_eq!(escape("%%{init: {}}%%"), "% %{init: {}}% %");
        assert_eq!(escape("two\nlines\t\u{1b}[2J\u{202e}x"), "two lines [2J x");
        assert_eq!(escape("  "), "…");
        assert_eq!(
            escape("<script>alert(1)</script>"),
            "‹script›alert(1)‹/script›"
        );
    }

    /// Whatever the text, the escaped line has none of what Mermaid reads as syntax in a
    /// description or a label: a `;`, a `::`, a trailing `:`, a line break, `%%`, or a `<`
    /// before a letter.
    #[test]
    fn escaped_text_is_one_safe_line() {
        let alphabet: Vec<char> = ";:<>%\"#&{}[]|`\\\n\r\t a1-=\u{202e}".chars().collect();
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let length = (seed % 12) as usize;
            let mut state = seed;
            for _ in 0..length {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                text.push(alphabet[(state >> 33) as usize % alphabet.len()]);
            }
            let line = escape(&text);
            assert!(!line.is_empty());
            assert!(
                !line.contains(';') && !line.contains("::") && !line.ends_with(':'),
                "{text:?} → {line:?}"
            );
            assert!(!line.contains('\n') && !line.contains('\r') && !line.contains("%%"));
            assert!(!line.contains('\u{202e}'));
            let chars: Vec<char> = line.chars().collect();
            for pair in chars.windows(2) {
                assert!(
                    !(pair[0] == '<' && pair[1].is_alphabetic()),
                    "{text:?} → {line:?}"
                );
                assert!(!(pair[0] == '<' && pair[1] == '/'), "{text:?} → {line:?}");
            }
        }
    }

    #[test]
    fn code_reads_as_written() {
        let expr: Expr = syn::parse_quote!(format!(
            "Is deploying to '{}' safe right now?",
            target.target
        ));
        assert_eq!(
            code(&expr),
            "format!(\"Is deploying to '{}' safe right now?\", target.target)"
        );
        let expr: Expr = syn::parse_quote!(!verdict.text().starts_with("Yes"));
        assert_eq!(negate(&expr), "verdict.text().starts_with(\"Yes\")");
        let expr: Expr = syn::parse_quote!(i < n);
        assert_eq!(negate(&expr), "!(i < n)");
        let pat: Pat = syn::Pat::parse_multi
            .parse2(quote!(Some(x) | None))
            .unwrap();
        assert_eq!(code_pat(&pat), "Some(x) | None");
    }

    use syn::parse::Parser;

    /// The diagram of the tool `source`, through the whole compilation.
    fn diagram(source: &str) -> String {
        let item: ItemFn = syn::parse_str(source).expect("the test source is a fn");
        let compiled = match super::super::compile(
            item,
            super::super::sig::Role::Tool,
            crate::errors::Errors::default(),
        ) {
            Ok(compiled) => compiled,
            Err(error) => panic!("does not compile: {error}"),
        };
        build(
            Whose::Tool,
            &compiled.item,
            &param_names(&compiled.sig),
            &compiled.sites,
        )
    }

    #[test]
    fn print_samples() {
        for source in SAMPLES {
            eprintln!("{}", diagram(source));
        }
    }

    const SAMPLES: &[&str] = &[
        r#"async fn complex_tool(initial_arg: String, replicas: Option<u32>) -> Result<String, SagaError> {
    let target: Target = elicit("Please provide the deployment target:").await?;
    let verdict = sample(format!(
        "Is deploying to '{}' safe right now?",
        target.target
    ))
    .max_tokens(100)
    .await?;
    if !verdict.text().starts_with("Yes") {
        return Ok("Deployment postponed.".into());
    }
    Ok(format!(
        "Deployment to {} initiated successfully based on confirmation.",
        target.target
    ))
}"#,
        r#"async fn looper(n: u32, items: Vec<String>) -> Result<String, SagaError> {
    let mut names = Vec::new();
    let mut i = 0;
    while i < n {
        let name: String = elicit(format!("name #{i}?")).await?;
        if name == "stop" {
            break;
        }
        names.push(name);
        i += 1;
    }
    'outer: for item in items {
        for round in 0..2 {
            let ok: bool = elicit(format!("keep {item} ({round})?")).await?;
            if !ok {
                continue 'outer;
            }
        }
        names.push(item);
    }
    let total = match names.len() {
        0 => {
            checkpoint().await;
            0
        }
        k => {
            let v = sample(format!("{k} names")).await?;
            v.text().len()
        }
    };
    let (a, b) = join!(elicit::<i64>("a?").key("a"), elicit::<i64>("b?"));
    Ok(format!("{names:?} {total} {}", a? + b?))
}"#,
    ];
}
