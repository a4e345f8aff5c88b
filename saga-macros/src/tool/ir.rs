//! The macro's intermediate representation: what one stage hands the next. `parse` reads
//! the signature and classifies each suspension ([`Suspension`]); `lower` finds the sites
//! ([`Site`]) and builds the state machine ([`Machine`]) with the locals it saves
//! ([`Saved`]); `check` and `emit` read them. Between stages the body itself stays syn
//! code, each suspension a `__saga_site!(N)` marker (`lower::site_id`) naming its
//! [`Site`].
//!
//! Only the types live here; the functions that make and read them live in their stages.

use proc_macro2::Span;
use syn::{Block, Expr, Ident, ItemFn};

use crate::tool::parse::sig;

// The compiled function, what the stages hand to `emit`.

/// What the state machine of a saga (tool or helper) is made of.
pub struct Compiled {
    pub item: ItemFn,
    pub sig: sig::Signature,
    pub sites: Vec<Site>,
    pub machine: Machine,
    /// The items declared in the body, hoisted to the top of `step`.
    pub items: Vec<syn::Item>,
}

// Parse: a suspension as written.

/// A suspension point as written.
#[derive(Clone)]
pub enum Suspension {
    /// `REQUEST.await`: one request (or a checkpoint) in its own round.
    Await { request: Expr, kind: RequestKind },
    /// `join!(REQUEST, …)`: several requests in one round.
    Join { requests: Vec<(Expr, RequestKind)> },
    /// `f(..).await`: a call that may be of a `#[saga_fn]` (which suspends as often as it
    /// needs) or of an ordinary `async fn` (awaited in place). The types decide; see the
    /// runtime's `saga_fn` module.
    Call { call: Expr, name: String },
}

/// The kinds of request, one per function of the runtime's prelude that makes one.
/// Adding a kind: a variant here and its row in `RequestKind::ALL` (`parse/suspend.rs`),
/// which says all the macros need to know of it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RequestKind {
    Elicit,
    ElicitUrl,
    Sample,
    /// `sample_messages(history)`: a sample of a conversation, often with tools.
    SampleMessages,
    ListRoots,
    /// Asks nothing: ends the round so that the state is saved.
    Checkpoint,
    /// `join_all(requests)`: any number of requests of one kind, in a round of their own.
    JoinAll,
}

/// A request function's arguments, as the diagram reads them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Args {
    /// Nothing worth showing.
    None,
    /// The message first; the answer's type, when named, in the turbofish
    /// (`elicit::<T>(message)`).
    Message { typed: bool },
    /// `(url, message)`.
    UrlThenMessage,
}

// Lower: the sites the lowering finds, and what `?` unwraps.

/// One suspension point.
pub struct Site {
    pub id: usize,
    /// The local holding the answer in the continuation: `__aN`.
    pub answer: Ident,
    pub suspension: Suspension,
    /// The state variant's name, e.g. `AfterElicitTarget`.
    pub variant: Ident,
    /// The name before a number made it unique (`AfterCheckpoint` for `AfterCheckpoint2`):
    /// sites that share it are told apart by their code (see `emit::tool::state_enum`).
    pub base: String,
    /// The statement as written, for the variant's doc comment.
    pub source: String,
    pub span: Span,
    /// The `for` loops whose items are saved: checked by `for_items` at the loop's
    /// collection rather than one by one.
    pub for_loops: Vec<ForLoop>,
}

/// A `for` loop that saves the items it has still to visit, collected in a local.
#[derive(Clone)]
pub struct ForLoop {
    /// The local holding them (`__restN`), spanned at the loop's collection.
    pub rest: Ident,
    /// The bindings of the item the loop is at.
    pub bindings: Vec<String>,
}

/// What `?` unwraps in the function: the type its output is written with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// `Result<…>`, or an alias of it named `Result` (`anyhow::Result<T>`).
    Result,
    /// `Option<…>`.
    Option,
    /// Any other type (a helper returning `bool`): `?` in it is a type error, as in the
    /// function.
    Other,
}

// Lower: the machine, and the locals it keeps.

/// The state machine: the body up to each suspension, and each site's continuation.
pub struct Machine {
    /// The body with every suspension ending the transition.
    pub start: Block,
    /// Per site: what it saves, and its continuation.
    pub resumes: Vec<(Vec<Saved>, Block)>,
    /// Per site: whether its continuation can state its requests again (see `restate`),
    /// so that its token keeps none of them.
    pub restated: Vec<bool>,
    /// How the step's code is enclosed (`lower::rewrite::enclose`), and so how its exits return.
    pub carrier: Carrier,
    /// Per site, for its identity, what its continuation makes again rather than reads
    /// from the state: the code that finds its borrows again (`Rebound::path`) and the
    /// literals its `&'static str`s are taken back among (`Saved::literal`); empty when
    /// there are none.
    pub borrows: Vec<String>,
    /// Whether a local is saved as where its borrows point, at any site (see
    /// `emit::keep::locates`).
    pub locates: bool,
    /// The string literals of the body (perhaps none), when a local holding a `&str` is
    /// saved as where it points (see `emit::keep::LITERALS`): such a `&str` may be one of
    /// them. `None` otherwise.
    pub literals: Option<Vec<String>>,
}

/// A local the runtime saves at a suspension.
#[derive(Clone, PartialEq, Eq)]
pub struct Saved {
    pub ident: Ident,
    pub mutable: bool,
    /// The state variant's field holding it: the local's name, made unique.
    pub field: Ident,
    /// For a local chosen among values the continuation can name again, the values it
    /// may hold: the field saves which one, and the continuation takes it back from them.
    pub chosen: Option<Chosen>,
    /// The locals it is made from (`lower::sources`): those kept with it, not `mut` and
    /// declared before it, are its roots, which a value that holds borrows of them is
    /// saved among (see [`Saved::roots`]).
    pub sources: Vec<String>,
    /// Whether what it is made from is out of sight (`lower::sources::Sources::unseen`):
    /// then any local kept with it may be a root.
    pub unseen: bool,
    /// Whether its written type holds a `&str` (`lower::sources::Sources::holds_text`):
    /// saved among roots, it is wrapped so that rustc saves it as where its texts point.
    pub text: bool,
}

impl Saved {
    /// The locals kept with it at `site` (`saved`) that a value of it holding borrows may
    /// point into, in the order they are declared: those it is made from
    /// ([`Saved::sources`]) that are not `mut` (whose borrows would keep them from
    /// changing), declared before it, and saved as they are. A local of the expansion's
    /// own, a loop's item and a choice among literals or constants is never one.
    pub fn roots<'a>(&self, site: &Site, saved: &'a [Saved]) -> Vec<&'a Saved> {
        let position = |ident: &Ident| {
            let start = ident.span().start();
            (start.line, start.column)
        };
        if written(&self.ident).starts_with("__") {
            return Vec::new();
        }
        let at = position(&self.ident);
        let mut roots: Vec<&Saved> = saved
            .iter()
            .filter(|root| {
                let name = root.ident.to_string();
                root.ident != self.ident
                    && !root.mutable
                    && root.chosen.is_none()
                    && may_be_root(&root.ident)
                    && !site.is_for_item(&name)
                    && !site.is_rest_of_items(&name)
                    && (self.unseen || self.sources.contains(&name))
                    && position(&root.ident) < at
            })
            .collect();
        roots.sort_by_key(|root| position(&root.ident));
        roots
    }
}

/// The values a saved local is chosen among ([`Saved::chosen`]).
#[derive(Clone, PartialEq, Eq)]
pub enum Chosen {
    /// A `&'static str` among literals (and constants): the field saves its text (see
    /// `lower::places::literal_choices`).
    Literals(Vec<Expr>),
    /// A reference among constants, with its written type: the field saves its value's
    /// fingerprint, and each candidate is bound to that type to be fingerprinted again
    /// (see `lower::places::constant_choices`).
    Constants(Box<syn::Type>, Vec<Expr>),
}

/// A borrow of a place that a continuation binds again instead of saving it (see
/// `lower::places`).
#[derive(Clone, PartialEq, Eq)]
pub struct Rebound {
    pub ident: Ident,
    /// The code that finds the place again, for the point's identity: a build that finds
    /// it elsewhere refuses the token. `None` for a `for` loop's own item and collection,
    /// whose loop is found by its saved position as before.
    pub path: Option<String>,
    /// Whether the continuation's own code reads it, not only another binding's path:
    /// such a borrow is used at the suspension (`emit::keep::keep_alive`). One read only
    /// to find another (`let first = v.get_mut(0); if let Some(c) = first`) may have been
    /// moved into it; the other's use keeps the owner borrowed.
    pub alive: bool,
    /// A value the build makes again exactly (`places::restated_let`), not a borrow: a
    /// request may read it and still be stated again.
    pub restated: bool,
}

/// A local in scope: its name and whether it was declared `mut`.
#[derive(Clone)]
pub struct Binding {
    pub ident: Ident,
    pub mutable: bool,
}

/// One binding of the body: its (α-renamed) name and where it is written. The name alone
/// is not enough: the renamer keeps a capitalised binding as written (it may be a
/// constant's pattern), so two bindings may share one.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BindingKey {
    pub name: String,
    pub line: usize,
    pub column: usize,
}

impl BindingKey {
    /// The binding `ident` names, where it is written.
    pub fn of(ident: &Ident) -> Self {
        let start = ident.span().start();
        BindingKey {
            name: ident.to_string(),
            line: start.line,
            column: start.column,
        }
    }
}

/// Whether a local may be a root a kept borrow points into: the user's own locals, and a
/// helper's owned copy of a borrowed parameter (`__saga_owned_p`, which the parameter
/// borrows from the helper's start: see `check::helper::owned_params`); not the
/// expansion's other locals (an answer, a loop's position).
pub fn may_be_root(ident: &Ident) -> bool {
    let name = ident.to_string();
    name.starts_with("__saga_owned_") || !written(ident).starts_with("__")
}

/// The name a local was written with, before `lower::rename` renamed it: `__x_2` → `x`, `__type_2` → `r#type`, for messages.
pub fn written(ident: &Ident) -> String {
    let name = ident.to_string();
    let renamed = name
        .strip_prefix("__")
        .and_then(|rest| rest.rsplit_once('_'))
        .filter(|(base, n)| !base.is_empty() && n.parse::<usize>().is_ok());
    match renamed {
        // A keyword was written as a raw identifier (`r#type` → `__type_2`).
        Some((base, _)) if syn::parse_str::<Ident>(base).is_err() => format!("r#{base}"),
        Some((base, _)) => base.to_owned(),
        None => name,
    }
}
