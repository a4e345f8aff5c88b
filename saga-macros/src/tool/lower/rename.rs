//! α-renaming: every binding that reuses a name already bound in the function gets a name
//! of its own (`x` → `__x_2`), and every use is resolved to its binding following Rust's
//! scopes. The state machine can then save each local by name, whatever shadows it where
//! the saga suspends. Uses inside the standard macros (format strings' inline captures
//! included) and, token by token, inside other macros are renamed too.

use std::collections::HashMap;

use proc_macro2::{Group, TokenStream, TokenTree};
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Ident, Lit, LitStr, Pat};

use crate::tool::parse::macro_args;

/// Renames the shadowing bindings of `body`, whose parameters are `params` (each by the
/// name it is written with, and the local that holds it: see `sig::Param::local`). A
/// binding named like one of `reserved` is renamed too: the tool's own name is a unit
/// struct in the body's scope, and `let summary = …` would be read as a pattern matching
/// it.
pub fn alpha(body: &mut Block, params: &[(String, Ident)], reserved: &[Ident]) {
    let mut renamer = Renamer {
        scopes: vec![params.to_vec()],
        seen: params
            .iter()
            .map(|(written, _)| written.clone())
            .chain(reserved.iter().map(ToString::to_string))
            .map(|name| (name, 1))
            .collect(),
    };
    renamer.visit_block_mut(body);
}

/// `renamed`, spanned where the use it replaces was written. A clone, not
/// `Ident::new(&renamed.to_string(), ..)`, which panics on a raw identifier (`r#type`).
fn at(renamed: &Ident, span: proc_macro2::Span) -> Ident {
    let mut renamed = renamed.clone();
    renamed.set_span(span);
    renamed
}

struct Renamer {
    /// Innermost last: the bindings in scope, by the name they were written with.
    scopes: Vec<Vec<(String, Ident)>>,
    /// How many bindings of each name the function has made so far.
    seen: HashMap<String, usize>,
}

impl Renamer {
    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.scopes.push(Vec::new());
        f(self);
        self.scopes.pop();
    }

    fn resolve(&self, name: &str) -> Option<&Ident> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(written, _)| written == name)
            .map(|(_, ident)| ident)
    }

    /// Binds the names of `pat` in the innermost scope, renaming those already used.
    fn bind(&mut self, pat: &mut Pat) {
        let mut fresh: HashMap<String, Ident> = HashMap::new();
        self.bind_in(pat, &mut fresh);
        if let Some(scope) = self.scopes.last_mut() {
            scope.extend(fresh);
        }
    }

    fn bind_in(&mut self, pat: &mut Pat, fresh: &mut HashMap<String, Ident>) {
        match pat {
            Pat::Ident(pat_ident) => {
                if let Some((_, sub)) = &mut pat_ident.subpat {
                    self.bind_in(sub, fresh);
                }
                let name = pat_ident.ident.to_string();
                // `None`, `Red`, `MAX`: a constant or a unit variant, not a binding.
                let binding = pat_ident.by_ref.is_some()
                    || pat_ident.mutability.is_some()
                    || pat_ident.subpat.is_some()
                    || !name.starts_with(|c: char| c.is_uppercase());
                if !binding {
                    return;
                }
                // The alternatives of an or-pattern bind the same names.
                if let Some(ident) = fresh.get(&name) {
                    pat_ident.ident = ident.clone();
                    return;
                }
                let count = self.seen.entry(name.clone()).or_insert(0);
                *count += 1;
                if *count > 1 {
                    // A raw identifier (`r#type`) is renamed as its name without `r#`.
                    let base = name.trim_start_matches("r#");
                    pat_ident.ident =
                        Ident::new(&format!("__{base}_{count}"), pat_ident.ident.span());
                }
                fresh.insert(name, pat_ident.ident.clone());
            }
            Pat::Type(typed) => self.bind_in(&mut typed.pat, fresh),
            Pat::Tuple(tuple) => tuple.elems.iter_mut().for_each(|p| self.bind_in(p, fresh)),
            Pat::TupleStruct(ts) => ts.elems.iter_mut().for_each(|p| self.bind_in(p, fresh)),
            Pat::Struct(st) => {
                for field in st.fields.iter_mut() {
                    self.bind_in(&mut field.pat, fresh);
                    // `S { x }` with `x` renamed must become `S { x: __x_2 }`.
                    if field.colon_token.is_none() {
                        field.colon_token = Some(Default::default());
                    }
                }
            }
            Pat::Slice(slice) => slice.elems.iter_mut().for_each(|p| self.bind_in(p, fresh)),
            Pat::Reference(reference) => self.bind_in(&mut reference.pat, fresh),
            Pat::Or(or) => or.cases.iter_mut().for_each(|p| self.bind_in(p, fresh)),
            Pat::Paren(paren) => self.bind_in(&mut paren.pat, fresh),
            _ => {}
        }
    }

    fn rename_tokens(&self, tokens: TokenStream) -> TokenStream {
        let mut out = Vec::new();
        let mut after_dot = false;
        for tree in tokens {
            let tree = match tree {
                TokenTree::Ident(ident) if !after_dot => match self.resolve(&ident.to_string()) {
                    Some(renamed) => TokenTree::Ident(at(renamed, ident.span())),
                    None => TokenTree::Ident(ident),
                },
                TokenTree::Group(group) => {
                    let mut renamed =
                        Group::new(group.delimiter(), self.rename_tokens(group.stream()));
                    renamed.set_span(group.span());
                    TokenTree::Group(renamed)
                }
                other => other,
            };
            after_dot = matches!(&tree, TokenTree::Punct(p) if p.as_char() == '.');
            out.push(tree);
        }
        out.into_iter().collect()
    }

    /// A format string with its inline captures (`{x}`, `{x:>w$}`) renamed; `named` are
    /// the macro's own `name = value` arguments, which are not captures.
    fn rename_format(&self, literal: &LitStr, named: &[String]) -> LitStr {
        let text = literal.value();
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            out.push(c);
            if c != '{' {
                continue;
            }
            if chars.peek() == Some(&'{') {
                out.push('{');
                chars.next();
                continue;
            }
            let mut inside = String::new();
            for c in chars.by_ref() {
                if c == '}' {
                    break;
                }
                inside.push(c);
            }
            let (argument, spec) = match inside.split_once(':') {
                Some((argument, spec)) => (argument, Some(spec)),
                None => (inside.as_str(), None),
            };
            out.push_str(&self.rename_name(argument, named));
            if let Some(spec) = spec {
                out.push(':');
                out.push_str(&self.rename_spec(spec, named));
            }
            out.push('}');
        }
        if out == text {
            return literal.clone();
        }
        LitStr::new(&out, literal.span())
    }

    fn rename_name(&self, name: &str, named: &[String]) -> String {
        if named.iter().any(|n| n == name) {
            return name.to_owned();
        }
        let is_ident = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        match self.resolve(name) {
            Some(renamed) if is_ident => renamed.to_string(),
            _ => name.to_owned(),
        }
    }

    /// `>width$.prec$`, `0width$`: the names before a `$` are captures too.
    fn rename_spec(&self, spec: &str, named: &[String]) -> String {
        let mut out = String::new();
        let mut done = 0;
        for range in crate::tool::lower::scope::spec_parameters(spec) {
            out.push_str(&spec[done..range.start]);
            out.push_str(&self.rename_name(&spec[range.clone()], named));
            done = range.end;
        }
        out.push_str(&spec[done..]);
        out
    }
}

/// Which argument of a standard macro is its format string.
fn format_string_position(name: &str) -> Option<usize> {
    match name {
        "format" | "print" | "println" | "eprint" | "eprintln" | "format_args" | "panic"
        | "todo" | "unimplemented" | "unreachable" => Some(0),
        "write" | "writeln" | "assert" | "debug_assert" => Some(1),
        "assert_eq" | "assert_ne" | "debug_assert_eq" | "debug_assert_ne" => Some(2),
        _ => None,
    }
}

impl Renamer {
    /// saga's `join!`, renamed token by token, unless a format string in it captures a
    /// renamed local inline (`format!("{lo}")`): then renamed as the expressions it
    /// holds, as a standard macro's arguments are. Token by token otherwise, because
    /// re-printing its expressions respaces them, and the code of a site named like
    /// another is part of their identity (`emit::tool::site_tags`).
    fn rename_join(&mut self, mac: &mut syn::Macro) {
        let by_tokens = self.rename_tokens(mac.tokens.clone());
        if let Some(mut args) = macro_args::any_args(mac) {
            for value in args.values_mut() {
                self.visit_expr_mut(value);
            }
            let as_expressions = args.tokens();
            if string_literals(&as_expressions) != string_literals(&by_tokens) {
                mac.tokens = as_expressions;
                return;
            }
        }
        mac.tokens = by_tokens;
    }
}

/// The string literals of `tokens`, in order, at any depth.
fn string_literals(tokens: &TokenStream) -> Vec<String> {
    let mut found = Vec::new();
    for tree in tokens.clone() {
        match tree {
            TokenTree::Literal(literal) => {
                let text = literal.to_string();
                if text.ends_with('"') {
                    found.push(text);
                }
            }
            TokenTree::Group(group) => found.extend(string_literals(&group.stream())),
            _ => {}
        }
    }
    found
}

impl VisitMut for Renamer {
    fn visit_block_mut(&mut self, block: &mut Block) {
        self.scoped(|this| {
            for stmt in &mut block.stmts {
                this.visit_stmt_mut(stmt);
            }
        });
    }

    fn visit_local_mut(&mut self, local: &mut syn::Local) {
        if let Some(init) = &mut local.init {
            self.visit_expr_mut(&mut init.expr);
            if let Some((_, diverge)) = &mut init.diverge {
                self.visit_expr_mut(diverge);
            }
        }
        self.bind(&mut local.pat);
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        self.scoped(|this| {
            this.bind(&mut arm.pat);
            if let Some((_, guard)) = &mut arm.guard {
                this.visit_expr_mut(guard);
            }
            this.visit_expr_mut(&mut arm.body);
        });
    }

    fn visit_expr_if_mut(&mut self, expr_if: &mut syn::ExprIf) {
        self.scoped(|this| {
            this.visit_expr_mut(&mut expr_if.cond);
            this.visit_block_mut(&mut expr_if.then_branch);
        });
        if let Some((_, else_branch)) = &mut expr_if.else_branch {
            self.visit_expr_mut(else_branch);
        }
    }

    fn visit_expr_while_mut(&mut self, expr_while: &mut syn::ExprWhile) {
        self.scoped(|this| {
            this.visit_expr_mut(&mut expr_while.cond);
            this.visit_block_mut(&mut expr_while.body);
        });
    }

    fn visit_expr_let_mut(&mut self, expr_let: &mut syn::ExprLet) {
        self.visit_expr_mut(&mut expr_let.expr);
        self.bind(&mut expr_let.pat);
    }

    fn visit_expr_for_loop_mut(&mut self, expr_for: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut expr_for.expr);
        self.scoped(|this| {
            this.bind(&mut expr_for.pat);
            this.visit_block_mut(&mut expr_for.body);
        });
    }

    fn visit_expr_closure_mut(&mut self, closure: &mut syn::ExprClosure) {
        self.scoped(|this| {
            for input in closure.inputs.iter_mut() {
                this.bind(input);
            }
            this.visit_expr_mut(&mut closure.body);
        });
    }

    fn visit_expr_path_mut(&mut self, path: &mut syn::ExprPath) {
        if path.qself.is_none()
            && let Some(ident) = path.path.get_ident()
            && let Some(renamed) = self.resolve(&ident.to_string())
            && renamed != ident
        {
            path.path = at(renamed, ident.span()).into();
        }
    }

    fn visit_field_value_mut(&mut self, field: &mut syn::FieldValue) {
        self.visit_expr_mut(&mut field.expr);
        if field.colon_token.is_none()
            && !matches!(&field.member, syn::Member::Named(name)
                if matches!(&field.expr, Expr::Path(p) if p.path.is_ident(name)))
        {
            // `S { x }` whose `x` was renamed: `S { x: __x_2 }`.
            field.colon_token = Some(Default::default());
        }
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        let name = mac
            .path
            .segments
            .last()
            .map(|segment| segment.ident.to_string())
            .unwrap_or_default();
        if name == "join" {
            self.rename_join(mac);
            return;
        }
        let Some(mut args) = macro_args::std_args(mac) else {
            mac.tokens = self.rename_tokens(mac.tokens.clone());
            return;
        };
        let position = format_string_position(&name);
        let named = args.named();
        for (index, value) in args.values_mut().into_iter().enumerate() {
            if Some(index) == position
                && let Expr::Lit(lit) = value
                && let Lit::Str(format) = &lit.lit
            {
                lit.lit = Lit::Str(self.rename_format(format, &named));
                continue;
            }
            self.visit_expr_mut(value);
        }
        mac.tokens = args.tokens();
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {
        // A nested item cannot see the function's locals.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ir::written;

    /// A message names a local as it was written, a shadowed keyword as the raw identifier
    /// the user wrote.
    #[test]
    fn written_names_a_local_as_written() {
        let ident = |name: &str| Ident::new(name, proc_macro2::Span::call_site());
        assert_eq!(written(&ident("__x_2")), "x");
        assert_eq!(written(&ident("__type_2")), "r#type");
        assert_eq!(written(&ident("plain")), "plain");
        assert_eq!(
            written(&Ident::new_raw("match", proc_macro2::Span::call_site())),
            "r#match"
        );
    }
}
