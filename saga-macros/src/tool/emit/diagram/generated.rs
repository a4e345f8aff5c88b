//! What a saga's expansion gains from its diagram: the section of its rustdoc that
//! shows it, a tool's `_meta` entry, and the `diagram()` method. Apart from the diagram
//! itself because this is where it meets the expansion (and the runtime's names).

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use crate::shared::private_path;
use crate::tool::emit::diagram::{Whose, build, param_names};
use crate::tool::ir::Site;
use crate::tool::parse::sig::Signature;

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
