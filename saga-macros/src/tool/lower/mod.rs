//! Lower: the body normalised, as data the emitter builds the machine from. Before this
//! pass, `match` guards are desugared ([`desugar`]), the body's items hoisted ([`items`])
//! and shadowing bindings renamed ([`rename`]); after it, the tool's exits are rewritten
//! ([`rewrite`]). What is live where ([`scope`]) and what a place borrows ([`places`])
//! are read here; the machine itself, code that names the runtime, is
//! [`emit::machine`](crate::tool::emit::machine)'s.
//!
//! This pass, the normalisation. Afterwards:
//!
//! - every suspension is a statement of its own, `let __aN = __saga_site!(N);`, followed
//!   by the user's statement reading `__aN` where the suspension was;
//! - an `if`, `match`, `loop` or block that contains a suspension is a whole statement or
//!   a whole `let` initialiser;
//! - `while` and `for` loops that contain a suspension are `loop`s (a `for` walks a saved
//!   `Vec` of its items, since an iterator cannot be saved).
//!
//! A suspension may be moved ahead of the rest of its statement only if it is what the
//! statement evaluates first; anything else is an error that says how to rewrite it.
//!
//! The lowering is one recursive descent, statements holding expressions holding blocks
//! of statements, so its steps are methods of one `Lower`: the entry and the statements
//! here, the rest in the files below (expressions, their operands, `for` loops, the
//! sites). They reach each other through `self` only, so that no file imports one that
//! imports it back.

pub mod changes;
pub mod desugar;
mod expr;
mod for_loop;
mod gather;
pub mod items;
mod operands;
pub mod places;
mod pushed;
pub mod recompute;
pub mod rename;
pub mod rewrite;
pub mod scope;
mod site;
pub mod sources;
mod suspends;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, Ident, Pat, Stmt};

use self::suspends::{Finder, contains_suspension_stmt};
use crate::errors::Errors;
use crate::tool::ir::{ForLoop, Site};

pub(super) use self::expr::{chain, has_let};
pub use self::suspends::contains_suspension;

impl Site {
    /// Whether `name` is a `for` loop's item binding.
    pub fn is_for_item(&self, name: &str) -> bool {
        self.for_loops
            .iter()
            .any(|each| each.bindings.iter().any(|binding| binding == name))
    }

    /// Where the suspension is written, resolved where the attribute is: for the code
    /// generated there that names the expansion's own locals (`__slot`, `__answers`),
    /// which a suspension given by a `macro_rules!`'s caller could not see. (A helper
    /// call's code keeps the call's own span, so that its errors read as the user's.)
    pub fn resolved_span(&self) -> Span {
        crate::shared::at_call_site(self.span)
    }

    /// Whether `name` holds a `for` loop's collected remaining items.
    pub fn is_rest_of_items(&self, name: &str) -> bool {
        self.for_loops.iter().any(|each| each.rest == name)
    }
}

pub use self::suspends::{SITE_MACRO, site_id};

/// Lowers `body`, whose parameters are read by the locals `params`, of which those
/// declared `mut` and those that are shared references are `mutable_params` and
/// `reference_params`.
pub fn lower(
    body: Block,
    params: &[Ident],
    (mutable_params, reference_params): (&[Ident], &[Ident]),
    errors: &mut Errors,
) -> (Block, Vec<Site>) {
    let refs = places::Refs::of_lenient(&body);
    let mutable = recompute::mutable_locals(&body, mutable_params);
    let mut bound: std::collections::HashSet<String> =
        params.iter().map(ToString::to_string).collect();
    let mut references: std::collections::HashSet<String> =
        reference_params.iter().map(ToString::to_string).collect();
    struct Bindings<'a>(
        &'a mut std::collections::HashSet<String>,
        &'a mut std::collections::HashSet<String>,
    );
    impl<'ast> Visit<'ast> for Bindings<'_> {
        fn visit_pat_ident(&mut self, pat_ident: &'ast syn::PatIdent) {
            self.0.insert(pat_ident.ident.to_string());
            syn::visit::visit_pat_ident(self, pat_ident);
        }
        fn visit_local(&mut self, local: &'ast syn::Local) {
            if let Pat::Type(typed) = &local.pat
                && let Pat::Ident(ident) = &*typed.pat
                && matches!(&*typed.ty, syn::Type::Reference(reference) if reference.mutability.is_none())
            {
                self.1.insert(ident.ident.to_string());
            }
            syn::visit::visit_local(self, local);
        }
    }
    Bindings(&mut bound, &mut references).visit_block(&body);
    let mut lower = Lower {
        refs,
        bound,
        mutable,
        references,
        sites: Vec::new(),
        errors,
        hoisted: 0,
        variants: Vec::new(),
        source: String::new(),
        for_loops: Vec::new(),
    };
    let block = lower.block(body);
    let mut sites = lower.sites;
    for site in &mut sites {
        site.for_loops.clone_from(&lower.for_loops);
    }
    (block, sites)
}

struct Lower<'a> {
    /// The locals that borrow a place (see `places`): a `for` over one borrows again.
    refs: places::Refs,
    /// Every name the function binds (its parameters' locals and its patterns'): a path
    /// that is none of them names an item, such as a constant (`for_loop`).
    bound: std::collections::HashSet<String>,
    /// The locals declared `mut` (and parameters): what a recomputed loop may not read
    /// but as its collection (`recompute`).
    mutable: std::collections::HashSet<String>,
    /// The locals written with a shared reference's type (`let bank: &[&str] = …`): saved
    /// as their choice, not a place, so a loop over one walks a new iterator of it.
    references: std::collections::HashSet<String>,
    sites: Vec<Site>,
    errors: &'a mut Errors,
    hoisted: usize,
    variants: Vec<String>,
    /// The statement being lowered, as written.
    source: String,
    for_loops: Vec<ForLoop>,
}

impl Lower<'_> {
    fn block(&mut self, block: Block) -> Block {
        let mut stmts = Vec::with_capacity(block.stmts.len());
        for stmt in block.stmts {
            self.stmt(stmt, &mut stmts);
        }
        Block {
            brace_token: block.brace_token,
            stmts,
        }
    }

    fn stmt(&mut self, stmt: Stmt, out: &mut Vec<Stmt>) {
        if !contains_suspension_stmt(&stmt) {
            out.push(stmt);
            return;
        }
        self.source = source_of(&stmt);
        match stmt {
            Stmt::Local(local)
                if local
                    .init
                    .as_ref()
                    .and_then(|init| init.diverge.as_ref())
                    .is_some_and(|(_, diverge)| contains_suspension(diverge)) =>
            {
                let local = let_else_as_match(local);
                self.stmt(Stmt::Local(local), out);
            }
            Stmt::Local(mut local) => {
                let hint = pattern_names(&local.pat);
                if let Some(init) = &mut local.init {
                    let expr =
                        std::mem::replace(&mut *init.expr, Expr::Verbatim(TokenStream::new()));
                    let expr = self.head(expr, &hint, out, 0);
                    self.reject_rest(&expr);
                    *init.expr = expr;
                }
                out.push(Stmt::Local(local));
            }
            Stmt::Expr(expr, semi) => {
                let expr = self.head(expr, "", out, 0);
                self.reject_rest(&expr);
                out.push(Stmt::Expr(expr, semi));
            }
            Stmt::Macro(stmt_macro) => {
                let expr = Expr::Macro(syn::ExprMacro {
                    attrs: stmt_macro.attrs,
                    mac: stmt_macro.mac,
                });
                let expr = self.head(expr, "", out, 0);
                out.push(Stmt::Expr(expr, stmt_macro.semi_token));
            }
            item @ Stmt::Item(_) => out.push(item),
        }
    }

    /// A suspension left after lowering: in an expression saga does not take apart.
    fn reject_rest(&mut self, expr: &Expr) {
        let mut finder = Finder::default();
        finder.visit_expr(expr);
        for span in finder.found {
            self.errors.push(syn::Error::new(
                span,
                "saga cannot resume in the middle of this kind of expression; if the \
                 statement always evaluates this suspension, and before anything else it \
                 does, bind the answer first with `let answer = ….await;` just before the \
                 statement and use `answer` where the suspension was; otherwise write out \
                 when it runs with an `if`",
            ));
        }
    }
}

/// `let P = e else { … };` whose `else` suspends, as
/// `let (a, b) = match e { P => (a, b), _ => { … } };`, which the machine can resume in.
fn let_else_as_match(local: syn::Local) -> syn::Local {
    let original = local.clone();
    let Some(init) = local.init else {
        return original;
    };
    let Some((_, diverge)) = init.diverge else {
        return original;
    };
    let span = local.pat.span();
    let (pat, ty) = match local.pat {
        Pat::Type(typed) => (*typed.pat, Some(typed.ty)),
        other => (other, None),
    };
    let mut names: Vec<(Ident, bool)> = Vec::new();
    crate::tool::lower::scope::pattern_bindings(&pat, &mut |ident, mutable| {
        names.push((ident.clone(), mutable))
    });
    let idents = names.iter().map(|(ident, _)| ident);
    let outer = names.iter().map(|(ident, mutable)| {
        let mutability = mutable.then(|| quote!(mut));
        quote!(#mutability #ident)
    });
    let (value, outer): (TokenStream, TokenStream) = if names.len() == 1 {
        (quote!(#(#idents)*), quote!(#(#outer)*))
    } else {
        (quote!((#(#idents,)*)), quote!((#(#outer,)*)))
    };
    let scrutinee = &init.expr;
    let scrutinee = match ty {
        Some(ty) => quote_spanned!(span=> { let __value: #ty = #scrutinee; __value }),
        None => quote!(#scrutinee),
    };
    let tokens = quote_spanned! {span=>
        let #outer = match #scrutinee {
            #pat => #value,
            _ => #diverge,
        };
    };
    match syn::parse2::<Stmt>(tokens) {
        Ok(Stmt::Local(rewritten)) => rewritten,
        _ => original,
    }
}

/// The names a pattern binds, joined with `_`, for naming a variant.
fn pattern_names(pat: &Pat) -> String {
    let mut names = Vec::new();
    crate::tool::lower::scope::pattern_bindings(pat, &mut |ident, _| names.push(ident.to_string()));
    names.join("_")
}

/// The statement as a user would read it, on one line, for the variant's doc comment.
pub(super) fn source_of(stmt: &Stmt) -> String {
    let file: Result<syn::File, _> = syn::parse2(quote!(fn __saga_source() { #stmt }));
    let text = match file {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => quote!(#stmt).to_string(),
    };
    let body = text
        .lines()
        .skip(1)
        .take_while(|line| *line != "}")
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    const MAX: usize = 120;
    if body.chars().count() > MAX {
        let cut: String = body.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        body
    }
}
