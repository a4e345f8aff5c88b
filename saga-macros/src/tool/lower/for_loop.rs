//! `for` over a suspension: a `loop` whose iteration state is saved, since an iterator
//! cannot be. A borrowed collection keeps its position and is borrowed again after each
//! suspension, a range keeps what is left of it, and anything else is collected into a
//! `Vec` of the items still to visit. Apart from the expressions because it is the one
//! lowering that adds state of its own (a position, a range, the items), which the
//! machine saves and the check of saved locals treats apart (`Site::for_loops`).

use quote::format_ident;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Stmt};

use crate::shared::private_path;
use crate::tool::lower::Lower;
use crate::tool::lower::places::{LOOP_ADAPTERS, LOOP_METHODS, listed, place_root, shim, zip_call};
use crate::tool::lower::scope::pattern_bindings;

impl Lower<'_> {
    /// A `for` loop's collection that can be borrowed again at each iteration: `&v`,
    /// `&mut v`, `v.iter()`, `v.iter().enumerate()`, `m.keys()`, `s.chars()`, … of a place
    /// (adapters' arguments are evaluated once, into temporaries). `Err` gives back any
    /// other expression.
    fn reborrow(
        &mut self,
        expr: Box<Expr>,
        walk: &Ident,
        out: &mut Vec<Stmt>,
    ) -> Result<Reborrow, Box<Expr>> {
        let private = private_path();
        // `zip(&a, &b)` is `a.iter().zip(&b)`.
        let expr = match zip_call(&expr) {
            Some(chain) => Box::new(chain),
            None => expr,
        };
        if let Expr::Reference(reference) = &*expr
            && is_place(&reference.expr)
        {
            let place = &reference.expr;
            let span = expr.span();
            let mutable = reference.mutability.is_some();
            bind_walk(
                walk,
                &match mutable {
                    true => syn::parse_quote_spanned!(span=> #private::ordered_mut(&mut #place)),
                    false => syn::parse_quote_spanned!(span=> #private::ordered(&#place)),
                },
                out,
            );
            return Ok(Reborrow {
                mutable,
                calls: Vec::new(),
                from_range: false,
            });
        }
        // A local that borrows a collection (the item of an outer loop, a binding of a
        // pattern over one): borrowed again through it.
        if let Expr::Path(path) = &*expr
            && let Some(ident) = path.path.get_ident()
            && let Some(mutable) = self.refs.borrow(&ident.to_string())
        {
            let span = expr.span();
            bind_walk(
                walk,
                &match mutable {
                    true => syn::parse_quote_spanned!(span=> #private::ordered_mut(&mut *#ident)),
                    false => syn::parse_quote_spanned!(span=> #private::ordered(&*#ident)),
                },
                out,
            );
            return Ok(Reborrow {
                mutable,
                calls: Vec::new(),
                from_range: false,
            });
        }
        // The method calls, outermost first, down to the collection.
        let mut calls: Vec<&syn::ExprMethodCall> = Vec::new();
        let mut root = &*expr;
        while let Expr::MethodCall(call) = root {
            calls.push(call);
            root = &call.receiver;
        }
        let Some((first, adapters)) = calls.split_last() else {
            return Err(expr);
        };
        let name = |call: &syn::ExprMethodCall| call.method.to_string();
        // `(1..).zip(&items)`: a range zipped with a borrow. The range is saved as it began
        // and the loop counts its position in the zip, made again from a copy of it.
        if let Some(range) = integer_range(root)
            && name(first) == "zip"
            && first.args.len() == 1
            && self.zips(&first.args[0])
            && adapters
                .iter()
                .all(|call| listed(LOOP_ADAPTERS, &name(call), None))
        {
            let span = root.span();
            self.hoisted += 1;
            let start = Ident::new(&format!("__range{}", self.hoisted), span);
            out.push(syn::parse_quote_spanned!(span=> let #start = #range;));
            bind_walk(walk, &syn::parse_quote_spanned!(span=> &#start), out);
            let mut calls: Vec<syn::ExprMethodCall> = calls.into_iter().rev().cloned().collect();
            for call in &mut calls {
                self.evaluate_once(call, out);
            }
            return Ok(Reborrow {
                mutable: false,
                calls,
                from_range: true,
            });
        }
        if !is_place(root)
            || !listed(LOOP_METHODS, &name(first), None)
            || !adapters.iter().enumerate().all(|(i, call)| {
                listed(LOOP_ADAPTERS, &name(call), None)
                    || (name(call) == "zip" && call.args.len() == 1 && self.zips(&call.args[0]))
                    // `x.tool_uses().iter()`: what the method gives, iterated by reference.
                    || (name(first) == "tool_uses" && i + 1 == adapters.len() && name(call) == "iter")
            })
        {
            return Err(expr);
        }
        let span = root.span();
        let mutable = name(first).ends_with("_mut");
        // `x.tool_uses()` (saga's `Turn::tool_uses`, or a getter of the user's own type so
        // named): what it gives is borrowed once, as an accessor's borrow (`x.first()`),
        // checked to be a borrow of `x` (`borrowed_items`), and called again on `x` read back
        // only after a suspension; the loop resumes in it by its order (`ordered`: a
        // position, or the keys still to visit of a hash-ordered one). A method that
        // computes a value is refused where it is called, with the fix.
        if name(first) == "tool_uses" {
            let mut calls: Vec<syn::ExprMethodCall> = calls.into_iter().rev().cloned().collect();
            let mut getter = calls.remove(0);
            *getter.receiver = self.through_borrow(root.clone(), span);
            let check = Ident::new(
                shim("borrowed_items").unwrap_or("borrowed_items"),
                crate::shared::at_call_site(getter.method.span()),
            );
            bind_walk(
                walk,
                &syn::parse_quote_spanned!(span=> #private::ordered(#check(#getter))),
                out,
            );
            for call in &mut calls {
                self.evaluate_once(call, out);
            }
            return Ok(Reborrow {
                mutable: false,
                calls,
                from_range: false,
            });
        }
        // A local that is itself a borrow of the collection (an outer loop's item): the
        // collection is what it points to.
        let root = self.through_borrow(root.clone(), span);
        let collection: Expr = if mutable {
            syn::parse_quote_spanned!(span=> #private::ordered_mut(&mut #root))
        } else {
            syn::parse_quote_spanned!(span=> #private::ordered(&#root))
        };
        // The collection first, then what its adapters take, in the order the loop as
        // written evaluates them.
        bind_walk(walk, &collection, out);
        let calls: Vec<syn::ExprMethodCall> = calls.into_iter().rev().cloned().collect();
        let mut kept = Vec::with_capacity(calls.len());
        for mut call in calls {
            self.evaluate_once(&mut call, out);
            kept.push(call);
        }
        Ok(Reborrow {
            mutable,
            calls: kept,
            from_range: false,
        })
    }
    /// Whether `expr` names a constant or a static, `STEPS` or `tables::STEPS`: a path
    /// without generics whose last segment is written in upper case (as Rust names
    /// them), and no binding of the function's.
    fn names_constant(&self, expr: &Expr) -> bool {
        let Expr::Path(path) = expr else {
            return false;
        };
        let Some(last) = path.path.segments.last() else {
            return false;
        };
        let name = last.ident.to_string();
        path.qself.is_none()
            && path
                .path
                .segments
                .iter()
                .all(|segment| segment.arguments.is_none())
            && name.chars().any(|c| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            && (path.path.segments.len() > 1 || !self.bound.contains(&name))
    }

    /// A loop's collection as a place: a local that is itself a borrow of one (an outer
    /// loop's item) stands for what it points to.
    fn through_borrow(&self, root: Expr, span: proc_macro2::Span) -> Expr {
        match &root {
            Expr::Path(path)
                if path
                    .path
                    .get_ident()
                    .is_some_and(|ident| self.refs.borrow(&ident.to_string()).is_some()) =>
            {
                syn::parse_quote_spanned!(span=> (*#root))
            }
            _ => root,
        }
    }

    /// An adapter's arguments evaluated once, when the loop begins, as the loop as written
    /// evaluates them: into temporaries (a literal stays), a `.zip(..)`'s as its partner.
    fn evaluate_once(&mut self, call: &mut syn::ExprMethodCall, out: &mut Vec<Stmt>) {
        let zip = call.method == "zip";
        call.args = std::mem::take(&mut call.args)
            .into_iter()
            .map(|arg| match arg {
                Expr::Lit(_) => arg,
                other if zip => self.zip_partner(other, out),
                other => self.temporary(other, out),
            })
            .collect();
    }

    /// Whether a `.zip(..)`'s argument is found again, item for item, by position: a
    /// borrow of a place (`&prices`, `prices.iter()`, `scores.iter_mut().skip(1)`, a local
    /// holding one) or an integer range (`1..`).
    fn zips(&self, arg: &Expr) -> bool {
        if integer_range(arg).is_some() || self.partner_root(arg).is_some() {
            return true;
        }
        let mut root = arg;
        let mut calls = Vec::new();
        while let Expr::MethodCall(call) = root {
            calls.push(call.method.to_string());
            root = &call.receiver;
        }
        let Some((first, adapters)) = calls.split_last() else {
            return false;
        };
        is_place(root)
            && listed(LOOP_METHODS, first, None)
            && adapters
                .iter()
                .all(|each| listed(LOOP_ADAPTERS, each, None))
    }

    /// `&place`, `&mut place` or a local holding a borrow: the place and whether mutably.
    fn partner_root(&self, arg: &Expr) -> Option<(Expr, bool)> {
        match arg {
            Expr::Reference(reference) if is_place(&reference.expr) => {
                Some(((*reference.expr).clone(), reference.mutability.is_some()))
            }
            Expr::Path(path) => {
                let ident = path.path.get_ident()?;
                let mutable = self.refs.borrow(&ident.to_string())?;
                Some((syn::parse_quote!((*#ident)), mutable))
            }
            _ => None,
        }
    }

    /// A `.zip(..)`'s argument, evaluated once when the loop begins as the loop as written
    /// evaluates it: a borrowed collection is borrowed for the whole loop into a local
    /// that is borrowed again after a suspension, as the loop's own collection is (it
    /// must keep its order once read back: `zipped`), and a range is saved as it began.
    /// Each item is then found again at the loop's position ([`Self::reborrow`]).
    fn zip_partner(&mut self, arg: Expr, out: &mut Vec<Stmt>) -> Expr {
        let private = private_path();
        let span = arg.span();
        self.hoisted += 1;
        let partner = Ident::new(&format!("__zip{}", self.hoisted), span);
        if let Some(range) = integer_range(&arg) {
            out.push(syn::parse_quote_spanned!(span=> let #partner = #range;));
            return syn::parse_quote_spanned!(span=> ::core::clone::Clone::clone(&#partner));
        }
        if let Some((place, mutable)) = self.partner_root(&arg) {
            return match mutable {
                true => {
                    out.push(syn::parse_quote_spanned!(span=> let #partner = #private::zipped_mut(&mut #place);));
                    out.push(zips_by_position(&partner, place.span()));
                    syn::parse_quote_spanned!(span=> &mut *#partner)
                }
                false => {
                    out.push(
                        syn::parse_quote_spanned!(span=> let #partner = #private::zipped(&#place);),
                    );
                    out.push(zips_by_position(&partner, place.span()));
                    syn::parse_quote_spanned!(span=> #partner)
                }
            };
        }
        // A chain of calls down to a place: the place borrowed once, the calls made again.
        let mut calls: Vec<syn::ExprMethodCall> = Vec::new();
        let mut root = arg;
        while let Expr::MethodCall(call) = root {
            root = (*call.receiver).clone();
            calls.push(call);
        }
        let mutable = calls
            .last()
            .is_some_and(|first| first.method.to_string().ends_with("_mut"));
        let root = self.through_borrow(root, span);
        match mutable {
            true => out.push(
                syn::parse_quote_spanned!(span=> let #partner = #private::zipped_mut(&mut #root);),
            ),
            false => {
                out.push(syn::parse_quote_spanned!(span=> let #partner = #private::zipped(&#root);))
            }
        }
        out.push(zips_by_position(&partner, root.span()));
        let mut items: Expr = syn::parse_quote_spanned!(span=> #partner);
        for mut call in calls.into_iter().rev() {
            self.evaluate_once(&mut call, out);
            *call.receiver = items;
            items = Expr::MethodCall(call);
        }
        items
    }

    /// `for` over a suspension: a `loop` over a saved `Vec` of the remaining items.
    pub(super) fn lower_for(
        &mut self,
        expr_for: syn::ExprForLoop,
        hint: &str,
        out: &mut Vec<Stmt>,
        depth: usize,
    ) -> Expr {
        let syn::ExprForLoop {
            attrs,
            label,
            for_token,
            pat,
            expr,
            body,
            ..
        } = expr_for;
        // The loop at the user's `for`: rustc's notes on a value moved in it ("inside of
        // this loop", where to hoist it) name the loop as written.
        let loop_token = syn::Token![loop](for_token.span);
        self.hoisted += 1;
        let span = expr.span();
        // A constant or a static walked by value (`for (label, question) in STEPS`): named
        // again for each item and after a suspension, as the loop as written names it
        // once; only the position is saved, and the item's bindings are bound again from
        // it (`restore`), so that items that cannot be read back (`&'static str`) need
        // not be saved. A binding declared `mut` may change: such a loop saves its items.
        if self.names_constant(&expr) && crate::tool::lower::places::binds_immutably(&pat) {
            // The current item's fingerprint (`seen`), which its rebinding checks after a
            // suspension: a build whose constant differs there is refused, never read.
            let (position, item, seen) = self.positioned(span, out);
            let private = private_path();
            // At the constant: where items that cannot be bound again are reported.
            let at = crate::shared::private_path_at(span);
            let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
                #(#attrs)* #label #loop_token {
                    let #item = #private::advance(&mut #position);
                    let ::core::option::Option::Some(#pat) = #at::constant_item_at(
                        &#item,
                        &mut #seen,
                        #expr,
                        |__each| {
                            // One of the two is picked, by the item's type.
                            #[allow(unused_imports)]
                            use #private::{FingerprintOf as _, NoFingerprint as _};
                            (&&#private::Fingerprint(__each)).fingerprint()
                        },
                    ) else { break; };
                    #body
                }
            };
            return self.head(Expr::Loop(desugared), hint, out, depth);
        }
        // At the collection: rustc names the loop's borrow there.
        let walk = Ident::new(&format!("__walk{}", self.hoisted), span);
        let walks_again = crate::tool::lower::places::binds_immutably(&pat)
            && (crate::tool::lower::recompute::walks_again(&expr, &self.mutable)
                // A chosen reference walked as it is (`for q in bank`): a copy of it.
                || self.names_a_reference(&expr));
        // A constant's or a chosen reference's iterator (`HARD.iter()`, `bank.iter()`):
        // no place to borrow again by position, so a new iterator of it (below).
        let reborrowed = if walks_again && self.walks_a_reference(&expr) {
            Err(expr)
        } else {
            self.reborrow(expr, &walk, out)
        };
        let expr = match reborrowed {
            // A borrowed collection: the loop saves where it is (a position, or the keys
            // still to visit in a hash-ordered one), and finds its item again there after
            // a suspension (see `item_at`). The collection is borrowed once, for the whole
            // loop, as the loop as written borrows it: rustc refuses a change to it inside.
            Ok(Reborrow {
                mutable,
                calls,
                from_range,
            }) => {
                let position = format_ident!("__pos{}", self.hoisted);
                let item = Ident::new(&format!("__item{}", self.hoisted), span);
                let private = private_path();
                out.push(match from_range {
                    // A position in what the method gives, whatever the receiver's type.
                    true => syn::parse_quote_spanned! {span=>
                        let mut #position: usize = 0;
                    },
                    false => syn::parse_quote_spanned! {span=>
                        let mut #position = #private::cursor(&*#walk);
                    },
                });
                let mut items: Expr = match (mutable, from_range) {
                    (_, true) => {
                        syn::parse_quote_spanned!(span=> ::core::clone::Clone::clone(#walk))
                    }
                    (true, false) => syn::parse_quote_spanned!(span=> &mut *#walk),
                    (false, false) => syn::parse_quote_spanned!(span=> #walk),
                };
                for mut call in calls {
                    *call.receiver = items;
                    items = Expr::MethodCall(call);
                }
                // At the collection: where an iterator that cannot resume is reported. (Not
                // through a shim of the expansion's, as `borrowed` is: rustc then reports the
                // shim's return type, a projection of the unmet bound, a second time.)
                let at = crate::shared::private_path_at(span);
                let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
                    #(#attrs)* #label #loop_token {
                        let #item = #private::advance(&mut #position);
                        let ::core::option::Option::Some(#pat) = #at::item_at(&#item, #items) else { break; };
                        #body
                    }
                };
                return self.head(Expr::Loop(desugared), hint, out, depth);
            }
            Err(expr) => expr,
        };
        // Any other iterator chain over borrowed data (`tables.iter().filter(..)`), and a
        // constant's or a chosen reference's: made again after a restore and advanced to
        // the saved position.
        if walks_again && integer_range(&expr).is_none() {
            return self.lower_live(
                syn::ExprForLoop {
                    attrs,
                    label,
                    for_token,
                    pat,
                    in_token: Default::default(),
                    expr,
                    body,
                },
                &walk,
                hint,
                out,
                depth,
            );
        }
        let rest = Ident::new(&format!("__rest{}", self.hoisted), span);
        if let Some(range) = integer_range(&expr) {
            // A range is its own small state (`1..` may not end, `0..n` may be large):
            // saved as the range still to visit, not collected.
            let private = private_path();
            out.push(syn::parse_quote_spanned! {span=>
                let mut #rest = #private::RangeRest::from(#range);
            });
            let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
                #(#attrs)* #label #loop_token {
                    let ::core::option::Option::Some(#pat) = #rest.next() else { break; };
                    #body
                }
            };
            return self.head(Expr::Loop(desugared), hint, out, depth);
        }
        // The items still to visit, last first: a Vec survives a suspension where
        // an iterator could not.
        out.push(syn::parse_quote_spanned! {span=>
            let mut #rest: ::std::vec::Vec<_> = ::core::iter::IntoIterator::into_iter(#expr).collect();
        });
        out.push(syn::parse_quote_spanned! {span=> #rest.reverse(); });
        // Its items are checked where they are saved, at each suspension that keeps them
        // (`keep::fields`), not here too: the check would only repeat that one.
        let mut bindings = Vec::new();
        pattern_bindings(&pat, &mut |ident, _| bindings.push(ident.to_string()));
        self.for_loops.push(crate::tool::ir::ForLoop {
            rest: rest.clone(),
            bindings,
        });
        let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
            #(#attrs)* #label #loop_token {
                let ::core::option::Option::Some(#pat) = #rest.pop() else { break; };
                #body
            }
        };
        self.head(Expr::Loop(desugared), hint, out, depth)
    }
}

impl Lower<'_> {
    /// The locals of a loop walked by position, declared (`let mut __posN: usize = 0;
    /// let mut __seenN: u64 = 0;`): its position, the local its item's position is read
    /// into, and its current item's fingerprint.
    fn positioned(&self, span: proc_macro2::Span, out: &mut Vec<Stmt>) -> (Ident, Ident, Ident) {
        let position = format_ident!("__pos{}", self.hoisted);
        let item = Ident::new(&format!("__item{}", self.hoisted), span);
        let seen = format_ident!("__seen{}", self.hoisted);
        out.push(syn::parse_quote_spanned! {span=>
            let mut #position: usize = 0;
        });
        out.push(syn::parse_quote_spanned! {span=>
            let mut #seen: u64 = 0;
        });
        (position, item, seen)
    }

    /// Whether a loop's chain starts from a constant or from a local written with a
    /// reference's type (chosen among constants): saved as a choice, not a place.
    fn walks_a_reference(&self, expr: &Expr) -> bool {
        let mut root = expr;
        while let Expr::MethodCall(call) = root {
            root = &call.receiver;
        }
        self.names_constant(root) || self.names_a_reference(root)
    }

    /// Whether `expr` is a local written with a shared reference's type and not `mut`
    /// (`let bank: &[&str] = …`): walking it walks a copy of the reference.
    fn names_a_reference(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Path(path)
        if path.path.get_ident().is_some_and(|ident| {
            let name = ident.to_string();
            self.references.contains(&name) && !self.mutable.contains(&name)
        }))
    }

    /// `for` over an iterator recomputed after a restore (`recompute`): the iterator is
    /// made once when the loop begins, as the loop as written makes it, and walked; at a
    /// suspension its position and its item's fingerprint are saved; after a restore a
    /// new iterator is made from the same expression and advanced to the position, where
    /// the item must fingerprint alike (`live_item_again`), or the round is refused.
    fn lower_live(
        &mut self,
        expr_for: syn::ExprForLoop,
        walk: &Ident,
        hint: &str,
        out: &mut Vec<Stmt>,
        depth: usize,
    ) -> Expr {
        let syn::ExprForLoop {
            attrs,
            label,
            for_token,
            pat,
            expr,
            body,
            ..
        } = expr_for;
        let loop_token = syn::Token![loop](for_token.span);
        let span = expr.span();
        // The loop as written, which a refusal after a restore names.
        let written = {
            let text = super::source_of(&syn::parse_quote!(for #pat in #expr {}));
            // A chain prettyplease broke over lines, joined again as written.
            text.strip_suffix(" {}").unwrap_or(&text).replace(" .", ".")
        };
        let (position, item, seen) = self.positioned(span, out);
        let private = private_path();
        out.push(syn::parse_quote_spanned! {span=>
            let mut #walk = #private::live(#expr);
        });
        let desugared: syn::ExprLoop = syn::parse_quote_spanned! {span=>
            #(#attrs)* #label #loop_token {
                let #item = #private::advance(&mut #position);
                // The iterator dropped when it ends: its type may be opaque (`flat_map` of a
                // function returning `impl Iterator`), whose drop at the end of the block
                // rustc takes to use the borrow, so that a later suspension, moving the
                // collection into the state, would be refused.
                let ::core::option::Option::Some(#pat) = #private::live_item_at(
                    &#item,
                    &mut #seen,
                    &mut #walk,
                    #written,
                ) else {
                    ::core::mem::drop(#walk);
                    break;
                };
                #body
            }
        };
        self.head(Expr::Loop(desugared), hint, out, depth)
    }
}

/// The check that what a loop zips with keeps its order once read back (`Zipped`),
/// through a function of the expansion's own: where it does not, rustc's note on the
/// bound shows the user's `#[saga_tool]`, not saga-runtime's sources.
/// Run on the partner's local (a borrow made once), so that its place is evaluated once.
fn zips_by_position(partner: &Ident, span: proc_macro2::Span) -> Stmt {
    let private = private_path();
    let check = Ident::new("saga_zips_by_position", crate::shared::at_call_site(span));
    let declared = Ident::new("saga_zips_by_position", proc_macro2::Span::call_site());
    // The check's argument at the zipped place (`span`), where the error is shown.
    let partner = Ident::new(&partner.to_string(), partner.span().located_at(span));
    syn::parse_quote_spanned! {span=> {
        #[allow(dead_code)]
        fn #declared<C: #private::Zipped + ?::core::marker::Sized>(_: &C) {}
        #check(&*#partner);
    }}
}

/// `a..b`, `a..=b` or `a..` (parenthesised or not), iterated by a `for`.
fn integer_range(expr: &Expr) -> Option<&Expr> {
    match expr {
        Expr::Paren(paren) => integer_range(&paren.expr),
        Expr::Range(range) if range.start.is_some() => Some(expr),
        _ => None,
    }
}

/// `let __walkN = collection;`: a `for` loop's collection borrowed for the whole loop.
fn bind_walk(walk: &Ident, collection: &Expr, out: &mut Vec<Stmt>) {
    let span = walk.span();
    out.push(syn::parse_quote_spanned!(span=> let #walk = #collection;));
}

/// A `for` loop's collection, bound (`let __walkN = ordered(&v);`, [`bind_walk`]): whether
/// mutably, and the method calls that make its items (`.iter().enumerate()`).
struct Reborrow {
    mutable: bool,
    calls: Vec<syn::ExprMethodCall>,
    /// Whether `collection` borrows a saved range (`(1..).zip(&items)`): the calls then
    /// start from a copy of it, and the position counts the items from 0.
    from_range: bool,
}

/// A place by its shape (see `places::place_root`). An index that could change is taken
/// when the loop begins (see `places::hoist`).
fn is_place(expr: &Expr) -> bool {
    place_root(expr).is_some()
}
