//! The scopes an operation needs, and what a token's scopes grant: a scope implies the
//! narrower ones the deployment declares under it (`tools:admin` ⊇ `tools:deploy`),
//! transitively.

use std::collections::{BTreeMap, BTreeSet};

/// What each operation needs, and the hierarchy of scopes.
#[derive(Debug, Clone, Default)]
pub(super) struct Scopes {
    /// Needed by every request.
    pub(super) everywhere: BTreeSet<String>,
    /// Needed by a `tools/call` (or `tools/callSaga`) of the tool, `prompts/get` of the
    /// prompt, `resources/read` of the URI, by name.
    pub(super) tools: BTreeMap<String, BTreeSet<String>>,
    pub(super) prompts: BTreeMap<String, BTreeSet<String>>,
    pub(super) resources: BTreeMap<String, BTreeSet<String>>,
    /// `scope` → the narrower scopes it implies.
    pub(super) implies: BTreeMap<String, BTreeSet<String>>,
}

/// An operation a request names, as far as scopes go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Operation {
    Tool(String),
    /// A request that goes on with some tool's call without naming it: every tool's.
    AnyTool,
    /// A request that goes on with any operation (a tool's call, a prompt, a resource
    /// read) without naming it: every one's.
    Anything,
    Prompt(String),
    Resource(String),
    Other,
}

impl Scopes {
    /// Whether a tool, prompt or resource needs a scope (else the operation is not read).
    pub(super) fn per_operation(&self) -> bool {
        !self.tools.is_empty() || !self.prompts.is_empty() || !self.resources.is_empty()
    }

    /// Every scope `operation` needs.
    pub(super) fn needed(&self, operation: &Operation) -> BTreeSet<String> {
        let own: Vec<&BTreeSet<String>> = match operation {
            Operation::Tool(name) => self.tools.get(name).into_iter().collect(),
            Operation::AnyTool => self.tools.values().collect(),
            Operation::Anything => self
                .tools
                .values()
                .chain(self.prompts.values())
                .chain(self.resources.values())
                .collect(),
            Operation::Prompt(name) => self.prompts.get(name).into_iter().collect(),
            Operation::Resource(uri) => self.resources.get(uri).into_iter().collect(),
            Operation::Other => Vec::new(),
        };
        self.everywhere
            .iter()
            .chain(own.into_iter().flatten())
            .cloned()
            .collect()
    }

    /// `held`, with every scope they imply.
    pub(super) fn granted(&self, held: &BTreeSet<String>) -> BTreeSet<String> {
        let mut granted = held.clone();
        let mut next: Vec<&String> = held.iter().collect();
        while let Some(scope) = next.pop() {
            for narrower in self.implies.get(scope).into_iter().flatten() {
                if granted.insert(narrower.clone()) {
                    next.push(narrower);
                }
            }
        }
        granted
    }

    /// The scopes of `needed` that `held` (with what they imply) lacks.
    pub(super) fn missing(
        &self,
        needed: &BTreeSet<String>,
        held: &BTreeSet<String>,
    ) -> BTreeSet<String> {
        let granted = self.granted(held);
        needed.difference(&granted).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(scopes: &[&str]) -> BTreeSet<String> {
        scopes.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_broader_scope_grants_the_narrower_ones_transitively() {
        let mut scopes = Scopes::default();
        scopes.implies.insert("admin".into(), set(&["tools:write"]));
        scopes
            .implies
            .insert("tools:write".into(), set(&["tools:read"]));
        scopes
            .tools
            .insert("deploy".into(), set(&["tools:read", "deploy"]));
        let needed = scopes.needed(&Operation::Tool("deploy".into()));
        assert_eq!(scopes.missing(&needed, &set(&["admin"])), set(&["deploy"]));
        assert!(
            scopes
                .missing(&needed, &set(&["admin", "deploy"]))
                .is_empty()
        );
        assert_eq!(
            scopes.missing(&needed, &set(&[])),
            set(&["deploy", "tools:read"]),
            "every needed scope, in one answer"
        );
    }

    /// `requests/resume` may go on with a prompt or a resource read, not only a tool's
    /// call: it needs every operation's scopes; `tasks/update` (always a tool's task)
    /// every tool's.
    #[test]
    fn a_resume_needs_every_operations_scopes() {
        let mut scopes = Scopes::default();
        scopes.tools.insert("deploy".into(), set(&["tools:deploy"]));
        scopes
            .prompts
            .insert("review".into(), set(&["prompts:review"]));
        scopes
            .resources
            .insert("saga://report".into(), set(&["resources:report"]));
        assert_eq!(
            scopes.needed(&Operation::Anything),
            set(&["tools:deploy", "prompts:review", "resources:report"])
        );
        assert_eq!(scopes.needed(&Operation::AnyTool), set(&["tools:deploy"]));
    }
}
