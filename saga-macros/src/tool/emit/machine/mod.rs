//! The state machine: for each suspension point, the code that runs when its answer
//! arrives (its continuation), and the locals it must save.
//!
//! A continuation is built along the path from the function body to its suspension
//! (`path`), from the inside out (`continuation`), peeling the loops on the way (`peel`)
//! and rebinding, at each level, the locals it reads from the saved state (`restore`);
//! every other suspension it meets ends the transition there (`exit`).
//!
//! Which locals a continuation reads depends on what the other suspensions reachable from
//! it save, so the saved sets are computed here, to a fixed point. The start is followed
//! by a check that no saved local is a borrow (`borrow_check`).

mod borrow_check;
mod continuation;
mod exit;
mod path;
mod peel;
mod restore;

use syn::{Block, Expr};

use self::borrow_check::with_borrow_check;
use self::continuation::continuation;
use self::exit::{Built, Exits};
use self::path::{Into, Level, find};
use crate::tool::ir::{Binding, Carrier, Chosen, Machine, Rebound, Saved, Site};
use crate::tool::lower::places::Refs;
use crate::tool::lower::site_id;

/// `carrier`: how the step's code is enclosed (see `lower::rewrite::enclose`), and so how its
/// exits return.
pub fn build(body: &Block, sites: &[Site], params: &[Binding], carrier: Carrier) -> Machine {
    let built = Built::default();
    let mut saved: Vec<Vec<Saved>> = vec![Vec::new(); sites.len()];
    let mut rebound: Vec<Vec<Rebound>> = vec![Vec::new(); sites.len()];
    let refs = Refs::of(
        body,
        params
            .iter()
            .filter(|param| param.mutable)
            .map(|param| param.ident.to_string()),
    );
    let paths: Vec<Vec<Level<'_>>> = sites
        .iter()
        .map(|site| find(body, site.id, (params.to_vec(), Vec::new()), &refs).unwrap_or_default())
        .collect();
    // Each pass can only add locals; the sets are bounded by what is in scope. A site's
    // set depends mostly on the sites after it, so visiting them last-first and using
    // each new set at once settles straight-line code in one pass.
    let mut conts: Vec<Option<Block>> = vec![None; sites.len()];
    // A continuation reads the saved sets of its own site and of the sites it reaches;
    // it is built again only when one of those changed since it was last built (building
    // is most of the macro's time).
    let reads: Vec<Vec<usize>> = sites
        .iter()
        .zip(&paths)
        .map(|(site, path)| sites_reached(site.id, path))
        .collect();
    let mut versions: Vec<usize> = vec![0; sites.len()];
    let mut built_at: Vec<Option<Vec<usize>>> = vec![None; sites.len()];
    loop {
        let mut changed = false;
        for (index, (site, path)) in sites.iter().zip(&paths).enumerate().rev() {
            let inputs: Vec<usize> = reads[index].iter().map(|&j| versions[j]).collect();
            if built_at[index].as_ref() == Some(&inputs) {
                continue;
            }
            let exits = Exits {
                sites,
                saved: &saved,
                rebound: &rebound,
                refs: &refs,
                built: &built,
                carrier,
            };
            let (cont, site_saved, site_rebound) = continuation(site, path, &exits, false);
            built_at[index] = Some(inputs);
            if site_saved != saved[index] || site_rebound != rebound[index] {
                saved[index] = site_saved;
                rebound[index] = site_rebound;
                versions[index] += 1;
                changed = true;
            }
            conts[index] = Some(cont);
        }
        if !changed {
            let exits = Exits {
                sites,
                saved: &saved,
                rebound: &rebound,
                refs: &refs,
                built: &built,
                carrier,
            };
            let start = exits.block(body.clone());
            let mut restated = vec![false; sites.len()];
            for (index, (site, path)) in sites.iter().zip(&paths).enumerate() {
                if !crate::tool::emit::restate::restatable(site, &saved[index], &rebound[index]) {
                    continue;
                }
                // The guard reads only locals saved anyway, so the saved set stays as it
                // is; should it not, the site keeps its requests in the token instead.
                let (cont, site_saved, site_rebound) = continuation(site, path, &exits, true);
                if site_saved == saved[index] && site_rebound == rebound[index] {
                    conts[index] = Some(cont);
                    restated[index] = true;
                }
            }
            let conts: Vec<Block> = conts
                .into_iter()
                .zip(sites.iter().zip(&saved))
                .map(|(cont, (site, site_saved))| {
                    let mut cont = cont.unwrap_or_else(|| syn::parse_quote!({}));
                    self::restore::among(&mut cont, site, site_saved);
                    cont
                })
                .collect();
            let locates = crate::tool::emit::keep::locates(sites, &saved);
            let start = with_borrow_check(start, sites, &saved, locates);
            // What each continuation makes again rather than reads from the state: the
            // borrows' paths, and the literals a saved `&'static str` is taken back among
            // (a build with other literals refuses the token, where `Literal::pick` would
            // find none).
            let borrows = rebound
                .iter()
                .zip(&saved)
                .map(|(each, site_saved)| {
                    let mut made: Vec<String> =
                        each.iter().filter_map(|r| r.path.clone()).collect();
                    made.extend(site_saved.iter().filter_map(|s| {
                        let field = &s.field;
                        Some(match s.chosen.as_ref()? {
                            Chosen::Literals(choices) => {
                                quote::quote!(#field among #(#choices),*).to_string()
                            }
                            Chosen::Constants(_, choices) => {
                                quote::quote!(#field among constants #(#choices),*).to_string()
                            }
                        })
                    }));
                    made.sort_unstable();
                    made.dedup();
                    made.join("\n")
                })
                .collect();
            let texts = saved.iter().flatten().any(|s| s.text);
            let literals = texts.then(|| string_literals(body));
            return Machine {
                borrows,
                carrier,
                start,
                resumes: saved.into_iter().zip(conts).collect(),
                restated,
                locates,
                literals,
            };
        }
    }
}

/// The string literals of `body`, macros' arguments included, each once, in the order
/// they are written.
fn string_literals(body: &Block) -> Vec<String> {
    fn collect(tokens: proc_macro2::TokenStream, found: &mut Vec<String>) {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Group(group) => collect(group.stream(), found),
                proc_macro2::TokenTree::Literal(literal) => {
                    if let Ok(text) = syn::parse_str::<syn::LitStr>(&literal.to_string())
                        && !found.contains(&text.value())
                    {
                        found.push(text.value());
                    }
                }
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    collect(quote::ToTokens::to_token_stream(body), &mut found);
    found
}

/// The sites whose saved sets the continuation of `site` may read: its own, and every
/// site in the code that follows it on its path (a loop's whole body, for a loop it is
/// in).
fn sites_reached(site: usize, path: &[Level<'_>]) -> Vec<usize> {
    struct Sites(Vec<usize>);
    impl<'ast> syn::visit::Visit<'ast> for Sites {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match site_id(expr) {
                Some(id) => self.0.push(id),
                None => syn::visit::visit_expr(self, expr),
            }
        }
    }
    let mut found = Sites(vec![site]);
    for level in path {
        for stmt in &level.block.stmts[level.index..] {
            syn::visit::Visit::visit_stmt(&mut found, stmt);
        }
        if let Some(Into::Loop(expr_loop)) = &level.into {
            syn::visit::Visit::visit_expr_loop(&mut found, expr_loop);
        }
    }
    found.0.sort_unstable();
    found.0.dedup();
    found.0
}
