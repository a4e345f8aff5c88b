//! The layout file: the suspension points a build can resume, one per line, which a
//! deploy check compares with the next build's (saga-runtime's `deploy`) and
//! `saga inspect` reads to name a token's point.

use std::collections::BTreeSet;

use crate::keyring::hex;
use crate::point::{point_key, tagged_point_key};

mod shown;

/// One suspension point a [`Resumable`] build has, as [`LayoutFile::of`] records it.
#[derive(Debug, Clone, Copy)]
pub struct ResumablePoint<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The tool's version.
    pub version: u16,
    /// The point's name.
    pub point: &'a str,
    /// What it saves, as the runtime traces it.
    pub traced: &'a str,
    /// Whether the point has a tagged twin (a state sealed with each local's encoding
    /// named).
    pub twin: bool,
}

/// A build whose suspension points a [`LayoutFile`] records: saga-runtime's `SagaTools`.
pub trait Resumable {
    /// Calls `each` with every point the build can resume.
    fn each_point(&self, each: &mut dyn FnMut(ResumablePoint<'_>));
}

// `LayoutFile::of(&tools)` took `&SagaTools` and so auto-dereferenced a `&&SagaTools`,
// an `Arc` or a `Box`; a generic argument does not, so these say the same.
impl<T: Resumable + ?Sized> Resumable for &T {
    fn each_point(&self, each: &mut dyn FnMut(ResumablePoint<'_>)) {
        (**self).each_point(each);
    }
}

impl<T: Resumable + ?Sized> Resumable for Box<T> {
    fn each_point(&self, each: &mut dyn FnMut(ResumablePoint<'_>)) {
        (**self).each_point(each);
    }
}

impl<T: Resumable + ?Sized> Resumable for std::sync::Arc<T> {
    fn each_point(&self, each: &mut dyn FnMut(ResumablePoint<'_>)) {
        (**self).each_point(each);
    }
}

const HEADER: &str = "# saga layout file: the suspension points in-flight tokens and tasks may name.\n\
# Checked by saga_runtime::deploy::assert_layout; rewrite with `SAGA_LAYOUT=overwrite cargo test`.\n\
# tool\tversion\tpoint\theader\ttagged\tidentity\tlayout\n";

/// What the `tagged` column holds for a point that has no tagged twin (a hand-written
/// tool's).
const NO_TWIN: &str = "-";

/// One line of the file: a suspension point a build could resume.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    /// The tool's name.
    pub tool: String,
    /// The tool's version.
    pub version: u16,
    /// The point's name.
    pub point: String,
    /// The point's 8 header bytes, in hex.
    pub header: String,
    /// The header of the point's tagged twin (a state sealed with each local's encoding
    /// named), in hex; `-` for a point that has none.
    pub tagged: String,
    /// The first 8 bytes of the point's identity, in hex: two entries are the same point
    /// exactly when these (and the tool, version and point) are equal.
    pub identity: String,
    /// What the point saves, as a person reads it: the locals named as the code names
    /// them. Not compared: `identity` is.
    pub layout: String,
}

impl Entry {
    /// The entry of a point whose layout, as the runtime traces it, is `traced`; `twin`
    /// when the point has a tagged twin (every `#[saga_tool]`'s does).
    fn traced(tool: &str, version: u16, point: &str, traced: &str, twin: bool) -> Entry {
        let key = point_key(tool, version, point, traced);
        Entry {
            tool: tool.to_owned(),
            version,
            point: point.to_owned(),
            header: hex(&key.header),
            tagged: if twin {
                hex(&tagged_point_key(tool, version, point, traced).header)
            } else {
                NO_TWIN.to_owned()
            },
            identity: hex(&key.identity[..8]),
            layout: shown::shown(traced),
        }
    }

    fn line(&self) -> String {
        format!(
            "{}\tv{}\t{}\t{}\t{}\t{}\t{}\n",
            self.tool,
            self.version,
            self.point,
            self.header,
            self.tagged,
            self.identity,
            self.layout
        )
    }

    fn parse(line: &str) -> Option<Entry> {
        let mut fields = line.splitn(7, '\t');
        let tool = fields.next()?.to_owned();
        let version = fields.next()?.strip_prefix('v')?.parse().ok()?;
        let point = fields.next()?.to_owned();
        let header = fields.next()?.trim().to_owned();
        let rest: Vec<&str> = fields.collect();
        let hex16 = |text: &str| text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit());
        match rest.as_slice() {
            [tagged, identity, layout @ ..]
                if (hex16(tagged) || *tagged == NO_TWIN) && hex16(identity.trim()) =>
            {
                Some(Entry {
                    tool,
                    version,
                    point,
                    header,
                    tagged: (*tagged).to_owned(),
                    identity: identity.trim().to_owned(),
                    // A point that saves nothing shows `{}`, or nothing when an editor
                    // trimmed the line's last tab.
                    layout: layout.first().copied().unwrap_or_default().to_owned(),
                })
            }
            // The file's first form, five columns, whose last was the layout as traced:
            // the identity is computed from it, so an older file compares as it did.
            _ => {
                let traced = rest.join("\t");
                let entry = Entry::traced(&tool, version, &point, &traced, true);
                Some(Entry { header, ..entry })
            }
        }
    }

    /// Whether `other` is the same point with the same identity.
    fn same(&self, other: &Entry) -> bool {
        (&self.tool, self.version, &self.point, &self.identity)
            == (&other.tool, other.version, &other.point, &other.identity)
    }
}

/// The layout file's entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayoutFile {
    /// One per point, sorted.
    pub entries: Vec<Entry>,
}

impl LayoutFile {
    /// Every point `build` can resume: with saga-runtime, its `SagaTools`' tools and
    /// their retired builds' (`LayoutFile::of(&tools)`).
    pub fn of(build: &(impl Resumable + ?Sized)) -> Self {
        let mut entries: BTreeSet<Entry> = BTreeSet::new();
        build.each_point(&mut |point| {
            entries.insert(Entry::traced(
                point.tool,
                point.version,
                point.point,
                point.traced,
                point.twin,
            ));
        });
        LayoutFile {
            entries: entries.into_iter().collect(),
        }
    }

    /// Reads a layout file's text; lines that are not entries (comments) are skipped.
    pub fn parse(text: &str) -> Self {
        LayoutFile {
            entries: text
                .lines()
                .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
                .filter_map(Entry::parse)
                .collect(),
        }
    }

    /// The file's text.
    pub fn render(&self) -> String {
        let mut text = HEADER.to_owned();
        for entry in &self.entries {
            text.push_str(&entry.line());
        }
        text
    }

    /// The entry whose header is `header` (16 hex digits), for `saga inspect`: a point's,
    /// or its tagged twin's (a state whose saved locals each say their encoding, which
    /// the runtime seals when one did not read back as postcard).
    pub fn find(&self, header: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| {
            entry.header.eq_ignore_ascii_case(header) || entry.tagged.eq_ignore_ascii_case(header)
        })
    }

    /// What this build (`self`) does to the calls in flight at the points `recorded`
    /// records.
    pub fn compare(&self, recorded: &LayoutFile) -> Comparison {
        let mut comparison = Comparison::default();
        for old in &recorded.entries {
            if self.entries.iter().any(|new| new.same(old)) {
                continue;
            }
            let now = self
                .entries
                .iter()
                .find(|new| new.tool == old.tool && new.point == old.point);
            let bumped = self
                .entries
                .iter()
                .filter(|new| new.tool == old.tool)
                .any(|new| new.version > old.version);
            let change = match now {
                Some(new) if new.version != old.version => {
                    format!("its version went from {} to {}", old.version, new.version)
                }
                Some(new) => format!(
                    "what it saves changed: {}",
                    describe_change(&old.layout, &new.layout)
                ),
                None if self.entries.iter().any(|new| new.tool == old.tool) => {
                    "this build has no such point".to_owned()
                }
                None => "this build has no such tool".to_owned(),
            };
            let dropped = Dropped {
                tool: old.tool.clone(),
                point: old.point.clone(),
                version: old.version,
                change,
            };
            if bumped {
                comparison.acknowledged.push(dropped);
            } else {
                comparison.stranded.push(dropped);
            }
        }
        comparison.added = self
            .entries
            .iter()
            .filter(|new| !recorded.entries.iter().any(|old| old.same(new)))
            .map(|new| {
                // Said as a change, not as a line of the file: a point whose name the file
                // already has (with another layout) would otherwise read as that line.
                let recorded_as = recorded
                    .entries
                    .iter()
                    .find(|old| old.tool == new.tool && old.point == new.point);
                let what = match recorded_as {
                    Some(old) if old.version != new.version => format!(
                        "recorded at version {}, now version {}",
                        old.version, new.version
                    ),
                    Some(old) => format!(
                        "recorded with another layout: {}",
                        describe_change(&old.layout, &new.layout)
                    ),
                    None => format!("not recorded yet; saves {}", new.layout),
                };
                format!(
                    "tool `{}`, point `{}` (version {}): {what}",
                    new.tool, new.point, new.version
                )
            })
            .collect();
        comparison
    }
}

/// A point of the file this build cannot resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The tool.
    pub tool: String,
    /// The point.
    pub point: String,
    /// The version the file records.
    pub version: u16,
    /// What changed.
    pub change: String,
}

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool `{}`, point `{}` (version {}): {}",
            self.tool, self.point, self.version, self.change
        )
    }
}

/// What a build does to the points of a layout file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Points whose calls would be refused, with no `version` bump to say so.
    pub stranded: Vec<Dropped>,
    /// Points dropped with a `version` bump of their tool.
    pub acknowledged: Vec<Dropped>,
    /// Points the file does not record yet.
    pub added: Vec<String>,
}

impl Comparison {
    /// Whether the file records exactly this build's points.
    pub fn up_to_date(&self) -> bool {
        self.stranded.is_empty() && self.acknowledged.is_empty() && self.added.is_empty()
    }
}

/// Says which fields of a layout changed, in words: the first difference of the two
/// texts, with what is around it.
fn describe_change(old: &str, new: &str) -> String {
    if old == new {
        return format!(
            "something the macro keeps for itself changed (a shadowed local, a `for` loop, a \
             #[saga_fn]'s call), though what it shows is the same: {new}"
        );
    }
    // What lies between the common start and the common end: a field added or removed
    // leaves one side empty there, and is named as such (the first differing character
    // alone would show the field before it on both sides).
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((at, _), _)| at);
    let suffix = old[prefix..]
        .chars()
        .rev()
        .zip(new[prefix..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    let (old_mid, new_mid) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let trimmed = |text: &str| text.trim_matches([',', ' ']).to_owned();
    let what = if old_mid.trim_matches([',', ' ']).is_empty() {
        format!("`{}` was added", trimmed(new_mid))
    } else if new_mid.trim_matches([',', ' ']).is_empty() {
        format!("`{}` was removed", trimmed(old_mid))
    } else {
        let start = old[..prefix]
            .rfind(['{', ',', '(', '<', '['])
            .map_or(0, |at| at + 1);
        let excerpt = |text: &str| {
            let end = text[prefix..]
                .find([',', '}', ')', '>', ']'])
                .map_or(text.len(), |at| prefix + at);
            text.get(start..end).unwrap_or(text).trim().to_owned()
        };
        format!("`{}` became `{}`", excerpt(old), excerpt(new))
    };
    format!("{what} (was: {old}; now: {new})")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build of two points of one tool.
    struct Build;

    impl Resumable for Build {
        fn each_point(&self, each: &mut dyn FnMut(ResumablePoint<'_>)) {
            for (point, traced) in [("AfterB", "{ b: u8 }"), ("AfterA", "{ a: str }")] {
                each(ResumablePoint {
                    tool: "pay",
                    version: 2,
                    point,
                    traced,
                    twin: true,
                });
            }
        }
    }

    #[test]
    fn a_build_is_recorded_sorted_through_any_pointer_to_it() {
        let file = LayoutFile::of(&Build);
        let points: Vec<&str> = file.entries.iter().map(|e| e.point.as_str()).collect();
        assert_eq!(points, ["AfterA", "AfterB"]);
        assert_eq!(file.entries[0], entry("pay", 2, "AfterA", "{ a: str }"));
        // What `LayoutFile::of(&tools)` accepted when it took `&SagaTools`.
        let by_ref: &Build = &Build;
        assert_eq!(LayoutFile::of(&by_ref), file);
        assert_eq!(LayoutFile::of(&std::sync::Arc::new(Build)), file);
        assert_eq!(LayoutFile::of(&Box::new(Build)), file);
        let erased: &dyn Resumable = &Build;
        assert_eq!(LayoutFile::of(erased), file);
    }

    #[test]
    fn a_tagged_twins_header_names_its_point() {
        let point = point_key("pay", 3, "AfterConfirm", "{ a: str }");
        let file = LayoutFile::parse(&format!(
            "pay\tv3\tAfterConfirm\t{}\t{{ a: str }}\n",
            hex(&point.header)
        ));
        let twin = hex(&tagged_point_key("pay", 3, "AfterConfirm", "{ a: str }").header);
        assert_ne!(twin, hex(&point.header));
        assert_eq!(
            file.find(&twin).map(|e| e.point.as_str()),
            Some("AfterConfirm")
        );
        assert!(file.find("0000000000000000").is_none());
    }

    fn entry(tool: &str, version: u16, point: &str, layout: &str) -> Entry {
        Entry::traced(tool, version, point, layout, true)
    }

    #[test]
    fn a_file_round_trips_through_its_text() {
        let file = LayoutFile {
            entries: vec![entry("pay", 1, "AfterConfirm", "{ to: str, cents: u64 }")],
        };
        assert_eq!(LayoutFile::parse(&file.render()), file);
    }

    #[test]
    fn the_file_names_locals_as_written_and_compares_identities() {
        let traced = "{ __label_2: str, __m0: \"PhantomData\" }";
        let file = LayoutFile {
            entries: vec![entry("pay", 0, "AfterAsk", traced)],
        };
        let text = file.render();
        assert!(text.contains("\t{ label: str }\n"), "{text}");
        assert!(!text.contains("__"), "{text}");
        assert_eq!(LayoutFile::parse(&text), file);
        // The file's first form (the layout as traced) is the same point.
        let older = LayoutFile::parse(&format!(
            "pay\tv0\tAfterAsk\t{}\t{traced}\n",
            file.entries[0].header
        ));
        assert_eq!(older, file);
        assert!(file.compare(&older).up_to_date());
        // Two layouts shown alike are still two identities: `__label_3` is another local.
        let other = LayoutFile {
            entries: vec![entry(
                "pay",
                0,
                "AfterAsk",
                "{ __label_3: str, __m0: \"PhantomData\" }",
            )],
        };
        assert_eq!(other.entries[0].layout, file.entries[0].layout);
        assert_eq!(other.compare(&file).stranded.len(), 1);
    }

    #[test]
    fn a_changed_layout_strands_and_names_the_field() {
        let old = LayoutFile {
            entries: vec![entry("pay", 0, "AfterConfirm", "{ from: str, to: str }")],
        };
        let new = LayoutFile {
            entries: vec![entry("pay", 0, "AfterConfirm", "{ to: str, from: str }")],
        };
        let comparison = new.compare(&old);
        assert_eq!(comparison.stranded.len(), 1);
        let text = comparison.stranded[0].to_string();
        assert!(text.contains("tool `pay`, point `AfterConfirm`"), "{text}");
        assert!(text.contains("`from: str` became `to: str`"), "{text}");
        let added = describe_change(
            "{ review: \"R\" { amount: u64, note: str }, n: u8 }",
            "{ review: \"R\" { amount: u64, note: str, category: str }, n: u8 }",
        );
        assert!(added.starts_with("`category: str` was added"), "{added}");
        let removed = describe_change("{ a: u8, b: u8 }", "{ a: u8 }");
        assert!(removed.starts_with("`b: u8` was removed"), "{removed}");
        // The point the file lacks is said as a change, not as a line like the file's.
        assert_eq!(comparison.added.len(), 1);
        let added = &comparison.added[0];
        assert!(
            added.starts_with(
                "tool `pay`, point `AfterConfirm` (version 0): recorded with another layout"
            ),
            "{added}"
        );
    }

    #[test]
    fn a_version_bump_acknowledges_and_a_retired_copy_keeps() {
        let old = LayoutFile {
            entries: vec![entry("pay", 0, "AfterConfirm", "{ a: str }")],
        };
        let bumped = LayoutFile {
            entries: vec![entry("pay", 1, "AfterConfirm", "{ a: u8 }")],
        };
        let comparison = bumped.compare(&old);
        assert!(comparison.stranded.is_empty());
        assert_eq!(comparison.acknowledged.len(), 1);
        let kept = LayoutFile {
            entries: vec![
                entry("pay", 0, "AfterConfirm", "{ a: str }"),
                entry("pay", 0, "AfterConfirm2", "{ a: u8 }"),
            ],
        };
        let comparison = kept.compare(&old);
        assert!(comparison.stranded.is_empty() && comparison.acknowledged.is_empty());
        assert_eq!(comparison.added.len(), 1);
    }
}
