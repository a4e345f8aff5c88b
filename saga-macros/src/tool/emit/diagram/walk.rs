//! The walk over the function as written: statements, then expressions in Rust's
//! evaluation order, meeting the suspensions in the order lowering numbered them, and
//! telling the graph where the flow goes at each branch, loop, `?`, `return`, `break` and
//! `continue`.
//!
//! A branch that neither suspends nor leaves adds nothing: its condition is dropped where
//! every branch goes on to the same place. A loop that suspends is a choice node with its
//! back edge; a loop that does not is walked once, for the exits in it.

use quote::quote;
use syn::{Block, Expr, Pat, Stmt};

use crate::tool::emit::diagram::graph::{Graph, Pending, Shape, dedup, join, with_all};
use crate::tool::emit::diagram::request::site_lines;
use crate::tool::emit::diagram::text::{code, code_pat, code_type, label_code, negate, short};
use crate::tool::ir::{Site, Suspension};
use crate::tool::lower::{chain, contains_suspension, has_let};
use crate::tool::parse::macro_args;
use crate::tool::parse::suspend::classify;

/// Where a `break` or `continue` goes: a loop (with its choice node when it suspends) or
/// a labelled block.
struct Target {
    label: Option<String>,
    is_loop: bool,
    choice: Option<usize>,
    breaks: Vec<Pending>,
    continues: Vec<Pending>,
}

pub(super) struct Walker<'a> {
    sites: &'a [Site],
    pub(super) next_site: usize,
    pub(super) consistent: bool,
    /// What the walk has drawn so far.
    pub(super) graph: Graph,
    targets: Vec<Target>,
    loops: usize,
    returns: usize,
    /// The type of the `let` whose initialiser is being walked, for `elicit` without a
    /// turbofish.
    let_type: Option<String>,
}

impl<'a> Walker<'a> {
    pub(super) fn new(sites: &'a [Site], start: &str) -> Self {
        Walker {
            sites,
            next_site: 0,
            consistent: true,
            graph: Graph::new(start),
            targets: Vec::new(),
            loops: 0,
            returns: 0,
            let_type: None,
        }
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
        self.graph.goto(node);
    }

    pub(super) fn site_node(&mut self, site: &Site, lines: Vec<String>) -> usize {
        self.graph
            .node(&site.variant.to_string(), lines, Shape::Plain)
    }

    // --- Statements -----------------------------------------------------------------------

    pub(super) fn block(&mut self, block: &Block) {
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
                    self.graph.junction();
                    let before = self.graph.frontier.clone();
                    self.graph.frontier = with_all(&before, &labels[1]);
                    self.expr(diverge);
                    let diverged = std::mem::take(&mut self.graph.frontier);
                    let matched = with_all(&before, &labels[0]);
                    self.graph.frontier = join(&before, &labels, vec![matched, diverged], None);
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
            self.suspension(&suspension);
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
                self.graph.fail(&label);
            }
            Expr::Return(expr_return) => self.expr_return(expr_return),
            Expr::Break(expr_break) => {
                if let Some(value) = &expr_break.expr {
                    self.expr(value);
                }
                let label = expr_break.label.as_ref().map(|l| l.ident.to_string());
                let pending = std::mem::take(&mut self.graph.frontier);
                if let Some(target) = self.target(label.as_deref(), false) {
                    target.breaks.extend(pending);
                }
            }
            Expr::Continue(expr_continue) => self.expr_continue(expr_continue),
            Expr::If(expr_if) => self.expr_if(expr_if),
            Expr::Match(expr_match) => self.expr_match(expr_match),
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
            Expr::Block(expr_block) => self.expr_block(expr_block),
            Expr::Unsafe(expr_unsafe) => self.block(&expr_unsafe.block),
            Expr::Binary(binary) if matches!(binary.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) => {
                self.short_circuit(binary)
            }
            Expr::Binary(binary) if crate::tool::lower::changes::compound_assign(&binary.op) => {
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

    /// A block; a labelled one is a target of `break 'label`.
    fn expr_block(&mut self, expr_block: &syn::ExprBlock) {
        match &expr_block.label {
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
                    self.graph.frontier.extend(target.breaks);
                }
            }
            None => self.block(&expr_block.block),
        }
    }

    /// A `return`: its value evaluated, then the saga leaves at a node of its own.
    fn expr_return(&mut self, expr_return: &syn::ExprReturn) {
        if let Some(value) = &expr_return.expr {
            self.expr(value);
        }
        self.returns += 1;
        let text = match &expr_return.expr {
            Some(value) => format!("return {}", code(value)),
            None => "return".to_owned(),
        };
        let id = format!("Return{}", self.returns);
        let node = self.graph.node(&id, vec![short(&text)], Shape::Plain);
        self.graph.goto(node);
        self.graph.frontier.clear();
    }

    /// A `continue`: back to its loop's choice, or kept for the loop's end.
    fn expr_continue(&mut self, expr_continue: &syn::ExprContinue) {
        let label = expr_continue.label.as_ref().map(|l| l.ident.to_string());
        let pending = std::mem::take(&mut self.graph.frontier);
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
                self.graph.edge(pending.from, choice, &pending.labels);
            }
        }
    }

    /// A `match`: its scrutinee, then one branch per arm, labelled with its pattern.
    fn expr_match(&mut self, expr_match: &syn::ExprMatch) {
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
            self.graph.junction();
        }
        let before = self.graph.frontier.clone();
        let mut outs = Vec::new();
        for (arm, label) in expr_match.arms.iter().zip(&labels) {
            self.graph.frontier = with_all(&before, label);
            self.expr(&arm.body);
            outs.push(std::mem::take(&mut self.graph.frontier));
        }
        self.graph.frontier = join(&before, &labels, outs, Some((&scrutinee, &patterns)));
    }

    /// `a && b`, `a || b`: the right side is evaluated only when the left does not decide.
    fn short_circuit(&mut self, binary: &syn::ExprBinary) {
        // The right side is evaluated only when the left does not decide.
        self.expr(&binary.left);
        let left = label_code(&binary.left);
        let (taken, skipped) = match binary.op {
            syn::BinOp::And(_) => (format!("if {left}"), format!("if {}", negate(&binary.left))),
            _ => (format!("if {}", negate(&binary.left)), format!("if {left}")),
        };
        let labels = [short(&taken), short(&skipped)];
        if branches(&binary.right) {
            self.graph.junction();
        }
        let before = self.graph.frontier.clone();
        self.graph.frontier = with_all(&before, &labels[0]);
        self.expr(&binary.right);
        let evaluated = std::mem::take(&mut self.graph.frontier);
        let skipped = with_all(&before, &labels[1]);
        self.graph.frontier = join(&before, &labels, vec![evaluated, skipped], None);
    }

    /// A suspension: what it evaluates before it suspends (a helper's arguments, which may
    /// suspend themselves; a request's, which may fail with `?`), then the suspension.
    fn suspension(&mut self, suspension: &Suspension) {
        match suspension {
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
        self.suspend(suspension);
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
        let terms = chain(&expr_if.cond);
        if has_let(&expr_if.cond) && terms.len() > 1 && contains_suspension(&expr_if.cond) {
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
            self.graph.junction();
        }
        let before = self.graph.frontier.clone();
        self.graph.frontier = with_all(&before, &labels[0]);
        self.block(&expr_if.then_branch);
        let then = std::mem::take(&mut self.graph.frontier);
        self.graph.frontier = with_all(&before, &labels[1]);
        if let Some((_, else_branch)) = &expr_if.else_branch {
            self.expr(else_branch);
        }
        let otherwise = std::mem::take(&mut self.graph.frontier);
        self.graph.frontier = join(&before, &labels, vec![then, otherwise], None);
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
        let before = self.graph.frontier.clone();
        let choice = if suspends {
            self.loops += 1;
            let id = format!("Loop{}", self.loops);
            let choice = self.graph.node(&id, Vec::new(), Shape::Choice);
            self.graph.goto(choice);
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
        let entry = self.graph.frontier.clone();
        let mut done = Vec::new();
        match &kind {
            LoopKind::Plain => {
                self.graph.frontier = with_all(&entry, if suspends { "" } else { "loop" })
            }
            LoopKind::For(header) => {
                self.graph.frontier = with_all(&entry, header);
                done = with_all(&entry, "done");
            }
            LoopKind::While(cond) => {
                self.expr(cond);
                let text = label_code(cond);
                let tested = self.graph.frontier.clone();
                self.graph.frontier = with_all(&tested, &short(&format!("while {text}")));
                done = with_all(&tested, &short(&negate(cond)));
            }
        }
        self.block(body);
        let Some(target) = self.targets.pop() else {
            return;
        };
        let mut ends = std::mem::take(&mut self.graph.frontier);
        match choice {
            Some(choice) => {
                for pending in ends {
                    let pending = pending.with("next");
                    self.graph.edge(pending.from, choice, &pending.labels);
                }
                self.graph.frontier = target.breaks;
                self.graph.frontier.extend(done);
            }
            None => {
                // Nothing in it suspends: the loop is one step of the flow, left by its
                // breaks (a `loop`) or at its end, whatever happened inside.
                ends.extend(target.continues);
                let leaves = match kind {
                    LoopKind::Plain => !target.breaks.is_empty(),
                    _ => true,
                };
                self.graph.frontier = if leaves { before } else { Vec::new() };
            }
        }
        dedup(&mut self.graph.frontier);
    }
}

enum LoopKind<'e> {
    Plain,
    While(&'e Expr),
    For(String),
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
