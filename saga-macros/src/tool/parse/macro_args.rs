//! The arguments of the standard macros whose arguments are ordinary expressions, each
//! evaluated once, in order: the formatting macros (a format string, then its arguments,
//! `name = value` included), the assertions and `vec!`. Saga reads (and may rewrite)
//! these; any other macro's body is the macro's own business.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Macro, Token};

/// The macros whose arguments saga reads.
pub const STD_MACROS: &[&str] = &[
    "format",
    "write",
    "writeln",
    "print",
    "println",
    "eprint",
    "eprintln",
    "format_args",
    "panic",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "vec",
    "todo",
    "unimplemented",
    "unreachable",
    "dbg",
    "matches",
];

/// How many leading arguments of the standard macro `name` are always evaluated, when
/// not all are: an assertion's message only when it fails, a `debug_` assertion's
/// arguments only in debug builds.
pub fn always_evaluated(name: &str) -> Option<usize> {
    match name {
        "assert" => Some(1),
        "assert_eq" | "assert_ne" => Some(2),
        "debug_assert" | "debug_assert_eq" | "debug_assert_ne" => Some(0),
        // The scrutinee; the guard runs only when the pattern matches.
        "matches" => Some(1),
        _ => None,
    }
}

/// The index of the first argument a formatting macro formats (after its format string,
/// and `write!`'s destination); `None` for the others, whose values are used as values.
pub fn formatted_from(mac: &Macro) -> Option<usize> {
    let name = mac.path.segments.last()?.ident.to_string();
    match name.as_str() {
        "format" | "print" | "println" | "eprint" | "eprintln" | "format_args" | "panic"
        | "todo" | "unimplemented" | "unreachable" => Some(1),
        "write" | "writeln" => Some(2),
        _ => None,
    }
}

/// The arguments of a standard macro, as written.
pub enum Args {
    /// `a, b, name = c`: a `name = c` argument is an `Expr::Assign` whose right side is
    /// the value.
    List(Punctuated<Expr, Token![,]>),
    /// `vec![value; count]`.
    Repeat(Box<Expr>, Token![;], Box<Expr>),
    /// `matches!(scrutinee, pattern)` or `matches!(scrutinee, pattern if guard)`: the
    /// scrutinee is evaluated once, first, as a `match`'s; the guard only when the pattern
    /// matches.
    Matches {
        scrutinee: Box<Expr>,
        comma: Token![,],
        pattern: Box<syn::Pat>,
        guard: Option<(Token![if], Box<Expr>)>,
        trailing: Option<Token![,]>,
    },
}

impl Args {
    /// The values the macro evaluates, in order (a named argument's value, not its name).
    pub fn values_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Args::List(list) => list
                .iter_mut()
                .map(|arg| {
                    if matches!(arg, Expr::Assign(assign) if is_name(&assign.left))
                        && let Expr::Assign(assign) = arg
                    {
                        return &mut *assign.right;
                    }
                    arg
                })
                .collect(),
            Args::Repeat(value, _, count) => vec![&mut **value, &mut **count],
            Args::Matches {
                scrutinee, guard, ..
            } => std::iter::once(&mut **scrutinee)
                .chain(guard.iter_mut().map(|(_, guard)| &mut **guard))
                .collect(),
        }
    }

    /// The values, read only.
    pub fn values(&self) -> Vec<&Expr> {
        match self {
            Args::List(list) => list
                .iter()
                .map(|arg| match arg {
                    Expr::Assign(assign) if is_name(&assign.left) => &*assign.right,
                    other => other,
                })
                .collect(),
            Args::Repeat(value, _, count) => vec![&**value, &**count],
            Args::Matches {
                scrutinee, guard, ..
            } => std::iter::once(&**scrutinee)
                .chain(guard.iter().map(|(_, guard)| &**guard))
                .collect(),
        }
    }

    /// The names of the `name = value` arguments.
    pub fn named(&self) -> Vec<String> {
        match self {
            Args::List(list) => list
                .iter()
                .filter_map(|arg| match arg {
                    Expr::Assign(assign) => match &*assign.left {
                        Expr::Path(path) => path.path.get_ident().map(|i| i.to_string()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect(),
            Args::Repeat(..) | Args::Matches { .. } => Vec::new(),
        }
    }

    pub fn tokens(&self) -> TokenStream {
        match self {
            Args::List(list) => quote!(#list),
            Args::Repeat(value, semi, count) => quote!(#value #semi #count),
            Args::Matches {
                scrutinee,
                comma,
                pattern,
                guard,
                trailing,
            } => {
                let guard = guard
                    .as_ref()
                    .map(|(if_token, guard)| quote!(#if_token #guard));
                quote!(#scrutinee #comma #pattern #guard #trailing)
            }
        }
    }
}

fn is_name(expr: &Expr) -> bool {
    matches!(expr, Expr::Path(path) if path.path.get_ident().is_some())
}

/// Whether `mac` is one of [`STD_MACROS`] (by its last path segment).
pub fn is_std(mac: &Macro) -> bool {
    mac.path
        .segments
        .last()
        .is_some_and(|segment| STD_MACROS.contains(&segment.ident.to_string().as_str()))
}

/// The arguments of a standard macro; `None` for other macros, or when they do not parse.
pub fn std_args(mac: &Macro) -> Option<Args> {
    if !is_std(mac) {
        return None;
    }
    if mac
        .path
        .segments
        .last()
        .is_some_and(|last| last.ident == "matches")
    {
        return matches_args(mac);
    }
    any_args(mac)
}

/// `matches!`'s arguments: an expression, then a pattern (not an expression) with an
/// optional guard.
pub fn matches_args(mac: &Macro) -> Option<Args> {
    let parse = |input: syn::parse::ParseStream| -> syn::Result<Args> {
        let scrutinee: Expr = input.parse()?;
        let comma: Token![,] = input.parse()?;
        let pattern = syn::Pat::parse_multi_with_leading_vert(input)?;
        let guard = if input.peek(Token![if]) {
            let if_token: Token![if] = input.parse()?;
            Some((if_token, Box::new(input.parse::<Expr>()?)))
        } else {
            None
        };
        let trailing: Option<Token![,]> = input.parse()?;
        Ok(Args::Matches {
            scrutinee: Box::new(scrutinee),
            comma,
            pattern: Box::new(pattern),
            guard,
            trailing,
        })
    };
    parse.parse2(mac.tokens.clone()).ok()
}

/// The arguments of any macro whose body reads as expressions separated by commas.
pub fn any_args(mac: &Macro) -> Option<Args> {
    if let Ok(list) = mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
        return Some(Args::List(list));
    }
    let repeat = |input: syn::parse::ParseStream| -> syn::Result<Args> {
        let value: Expr = input.parse()?;
        let semi: Token![;] = input.parse()?;
        let count: Expr = input.parse()?;
        Ok(Args::Repeat(Box::new(value), semi, Box::new(count)))
    };
    repeat.parse2(mac.tokens.clone()).ok()
}
