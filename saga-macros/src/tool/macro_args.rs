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
];

/// How many leading arguments of the standard macro `name` are always evaluated, when
/// not all are: an assertion's message only when it fails, a `debug_` assertion's
/// arguments only in debug builds.
pub fn always_evaluated(name: &str) -> Option<usize> {
    match name {
        "assert" => Some(1),
        "assert_eq" | "assert_ne" => Some(2),
        "debug_assert" | "debug_assert_eq" | "debug_assert_ne" => Some(0),
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
            Args::Repeat(..) => Vec::new(),
        }
    }

    pub fn tokens(&self) -> TokenStream {
        match self {
            Args::List(list) => quote!(#list),
            Args::Repeat(value, semi, count) => quote!(#value #semi #count),
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
    any_args(mac)
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
