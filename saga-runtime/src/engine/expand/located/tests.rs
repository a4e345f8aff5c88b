use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::*;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Member {
    name: String,
    skill: u32,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Team {
    name: String,
    members: Vec<Member>,
}

fn teams() -> Vec<Team> {
    (0..3)
        .map(|t| Team {
            name: format!("team{t}"),
            members: (0..4)
                .map(|m| Member {
                    name: format!("m{t}{m}"),
                    skill: m,
                })
                .collect(),
        })
        .collect()
}

/// Saves `value` among `roots`, round-trips the field through postcard, and binds it again
/// among `again`.
fn round_trip<'r, T: Locate>(
    value: &T,
    roots: &[Root<'_>],
    again: &[Root<'r>],
) -> <T::Erased as Bind>::Bound<'r> {
    let field = located(value, roots, "value");
    let bytes = postcard::to_allocvec(&field).expect("a located value serializes");
    let field: Located<T::Erased> = postcard::from_bytes(&bytes).expect("and reads back");
    bound(field, again, "value")
}

#[test]
fn borrows_into_nested_vectors_are_found_again_in_a_copy() {
    let teams = teams();
    let picked: Vec<&Member> = vec![&teams[2].members[3], &teams[0].members[1]];
    let copy = teams.clone();
    let again = round_trip(&picked, &[root(&teams)], &[root(&copy)]);
    assert_eq!(again, picked);
    // Pointing into the copy, not the original.
    assert!(std::ptr::eq(again[0], &copy[2].members[3]));
    assert!(std::ptr::eq(again[1], &copy[0].members[1]));
}

#[test]
fn options_tuples_slices_and_owned_values_beside_them() {
    let teams = teams();
    let weights = vec![1u32, 2, 3];
    let best: Option<(&Team, u32)> = Some((&teams[1], 7));
    let none: Option<&Team> = None;
    let run: &[Member] = &teams[0].members[1..3];
    let empty: &[Member] = &teams[0].members[..0];
    let whole: &Vec<u32> = &weights;
    let (teams2, weights2) = (teams.clone(), weights.clone());
    let roots = [root(&teams), root(&weights)];
    let again = [root(&teams2), root(&weights2)];
    assert_eq!(round_trip(&best, &roots, &again), best);
    assert_eq!(round_trip(&none, &roots, &again), None);
    let run2 = round_trip(&run, &roots, &again);
    assert_eq!(run2, run);
    assert!(std::ptr::eq(run2.as_ptr(), teams2[0].members[1..].as_ptr()));
    assert_eq!(round_trip(&empty, &roots, &again), empty);
    let whole2 = round_trip(&whole, &roots, &again);
    assert!(
        std::ptr::eq(whole2, &weights2),
        "the root itself, at the empty path"
    );
}

#[test]
fn a_borrow_of_a_map_entry_is_found_in_an_ordered_map() {
    let map: BTreeMap<String, Member> = teams()
        .remove(0)
        .members
        .into_iter()
        .map(|m| (m.name.clone(), m))
        .collect();
    let picked: &Member = &map["m02"];
    let copy = map.clone();
    let again = round_trip(&picked, &[root(&map)], &[root(&copy)]);
    assert!(std::ptr::eq(again, &copy["m02"]));
}

#[test]
fn a_borrow_of_what_no_root_holds_is_refused_when_saved() {
    let teams = teams();
    let elsewhere = Member {
        name: "x".into(),
        skill: 0,
    };
    let value: Option<&Member> = Some(&elsewhere);
    let field = located(&value, &[root(&teams)], "best");
    let Err(reason) = &field.pieces else {
        panic!("a borrow of no root is not located");
    };
    assert!(reason.contains("`best`"), "{reason}");
    postcard::to_allocvec(&field).expect_err("a state with it does not serialize");
}

#[test]
fn the_content_of_a_box_is_not_walked_into() {
    // A `Box`'s `Serialize` passes its content straight on, which the walk cannot tell
    // from a value computed there: a borrow of it is not found, never guessed.
    #[derive(Serialize)]
    struct Boxed {
        inner: Box<Member>,
    }
    let boxed = Boxed {
        inner: Box::new(Member {
            name: "b".into(),
            skill: 1,
        }),
    };
    let value: &String = &boxed.inner.name;
    assert!(located(&value, &[root(&boxed)], "b").pieces.is_err());
}

#[test]
fn another_value_at_the_same_path_is_refused_not_read() {
    let teams = teams();
    let picked: &Member = &teams[1].members[2];
    let field = located(&picked, &[root(&teams)], "picked");
    let mut changed = teams.clone();
    changed[1].members[2].skill = 99;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = bound(field, &[root(&changed)], "picked");
    }));
    assert!(result.is_err(), "another value at the path is refused");
}

#[test]
fn a_borrow_into_a_hash_map_is_refused_when_saved_always() {
    // Read back, a `HashMap` walks in another order: a position in it would name another
    // entry at random, so such a borrow is refused where it is saved, every time.
    let map: HashMap<String, Member> = (0..32)
        .map(|i| {
            (
                format!("k{i}"),
                Member {
                    name: format!("n{i}"),
                    skill: i,
                },
            )
        })
        .collect();
    let picked: &Member = &map["k17"];
    let field = located(&picked, &[root(&map)], "picked");
    let Err(reason) = &field.pieces else {
        panic!("a borrow into a HashMap is not located");
    };
    assert!(
        reason.contains("`picked`") && reason.contains("BTreeMap"),
        "{reason}"
    );
}

#[test]
fn a_slice_past_its_roots_end_is_refused() {
    let teams = teams();
    let run: &[Member] = &teams[0].members[2..4];
    let field = located(&run, &[root(&teams)], "run");
    let mut shorter = teams.clone();
    shorter[0].members.truncate(3);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = bound(field, &[root(&shorter)], "run");
    }));
    assert!(result.is_err());
}

/// A document that parses lazily, and serializes its parsed form, computed on the spot
/// when its cache is empty (as once read back, the cache being skipped).
#[derive(Deserialize)]
struct Doc {
    raw: String,
    #[serde(skip)]
    parsed: std::cell::OnceCell<Member>,
}

impl Doc {
    fn parsed(&self) -> &Member {
        self.parsed.get_or_init(|| Member {
            name: self.raw.clone(),
            skill: 1,
        })
    }
}

/// Through a proxy of references: the parsed form is a `&Member` the proxy hands out.
impl Serialize for Doc {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Repr<'a> {
            raw: &'a str,
            parsed: &'a Member,
        }
        let fresh;
        let parsed = match self.parsed.get() {
            Some(parsed) => parsed,
            None => {
                fresh = Member {
                    name: self.raw.clone(),
                    skill: 1,
                };
                &fresh
            }
        };
        Repr {
            raw: &self.raw,
            parsed,
        }
        .serialize(serializer)
    }
}

/// The same, handing out the computed value itself.
#[derive(Deserialize)]
struct Sheet {
    raw: String,
    #[serde(skip)]
    parsed: std::cell::OnceCell<Member>,
}

impl Serialize for Sheet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let fresh;
        let parsed = match self.parsed.get() {
            Some(parsed) => parsed,
            None => {
                fresh = Member {
                    name: self.raw.clone(),
                    skill: 1,
                };
                &fresh
            }
        };
        let mut state = serializer.serialize_struct("Sheet", 2)?;
        state.serialize_field("raw", &self.raw)?;
        state.serialize_field("parsed", parsed)?;
        state.end()
    }
}

#[test]
fn a_reference_a_users_serialize_hands_out_is_not_believed() {
    // Saved with the cache full, the proxy's `&Member` points into the document; read back,
    // the cache is empty and the same position would be a value already dropped. A
    // reference is believed only from a standard collection: this borrow is not found.
    let doc = Doc {
        raw: "x".into(),
        parsed: Default::default(),
    };
    let member: &Member = doc.parsed();
    assert!(located(&member, &[root(&doc)], "member").pieces.is_err());
}

#[test]
fn a_part_of_an_element_is_found_again_only_at_the_same_offset() {
    // In a `Vec`, an element's size is not known to the walk: a part of it is saved with
    // its offset from the element's start. Read back, the sheet's parsed form is computed on
    // the spot, elsewhere than in the element: refused, never read where it was dropped.
    let sheets = vec![Sheet {
        raw: "y".into(),
        parsed: Default::default(),
    }];
    let member: &Member = sheets[0].parsed.get_or_init(|| Member {
        name: "y".into(),
        skill: 1,
    });
    let field = located(&member, &[root(&sheets)], "member");
    assert!(field.pieces.is_ok(), "found in the element, at its offset");
    let copy: Vec<Sheet> =
        postcard::from_bytes(&postcard::to_allocvec(&sheets).expect("writes")).expect("reads");
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = bound(field, &[root(&copy)], "member");
    }));
    assert!(
        result.is_err(),
        "refused: the computed value is not at the saved offset"
    );
}

#[test]
fn what_a_ref_cell_guards_is_not_taken() {
    #[derive(Serialize)]
    struct Cached {
        inner: std::cell::RefCell<Member>,
    }
    let cached = Cached {
        inner: std::cell::RefCell::new(Member {
            name: "c".into(),
            skill: 2,
        }),
    };
    // A borrow of the guarded value's field, obtained here through the guard's pointer:
    // the walk must not hand it out again without a guard.
    let guard = cached.inner.borrow();
    let name: &String = &guard.name;
    let found = located(&name, &[root(&cached)], "name");
    drop(guard);
    assert!(found.pieces.is_err());
}

/// A `Vec<&T>` of n borrows into a `Vec<T>` of n is bound again in one walk of its root,
/// not one walk per borrow: each walk to element i visited the i before it, so binding
/// 2,000 borrows visited about two million parts (n²/2), and 20,000 took seconds at every
/// resume. Counted, not timed: the parts the walks visit.
#[test]
fn binding_many_borrows_walks_their_root_once() {
    let n = 2_000;
    let members: Vec<Member> = (0..n)
        .map(|m| Member {
            name: format!("m{m}"),
            skill: m,
        })
        .collect();
    // Every other one, last first, and one twice: any order, any repeats.
    let mut picked: Vec<&Member> = members.iter().rev().step_by(2).collect();
    picked.push(&members[7]);
    let copy = members.clone();
    let field = located(&picked, &[root(&members)], "picked");
    let bytes = postcard::to_allocvec(&field).expect("a located value serializes");
    let field: Located<<Vec<&Member> as Locate>::Erased> =
        postcard::from_bytes(&bytes).expect("and reads back");
    let before = walk::VISITED.with(|visited| visited.get());
    let again = bound(field, &[root(&copy)], "picked");
    let visited = walk::VISITED.with(|visited| visited.get()) - before;
    assert_eq!(again, picked);
    assert!(std::ptr::eq(again[0], &copy[n as usize - 1]));
    assert!(std::ptr::eq(again[picked.len() - 1], &copy[7]));
    assert!(
        visited <= 2 * n as usize,
        "binding {} borrows visited {visited} parts of a root of {n}",
        picked.len()
    );
}

/// Borrows at several depths and into several roots, bound in the one walk per root: each
/// found where it was, and a path that no longer leads to its part refused.
#[test]
fn one_walk_finds_borrows_at_every_depth_of_every_root() {
    let teams = teams();
    let weights = vec![5u32, 6, 7];
    let picked: Vec<(&Team, &Member, &u32)> = vec![
        (&teams[2], &teams[2].members[0], &weights[1]),
        (&teams[0], &teams[0].members[3], &weights[0]),
        (&teams[2], &teams[1].members[2], &weights[2]),
    ];
    let (teams2, weights2) = (teams.clone(), weights.clone());
    let again = round_trip(
        &picked,
        &[root(&teams), root(&weights)],
        &[root(&teams2), root(&weights2)],
    );
    assert_eq!(again, picked);
    assert!(std::ptr::eq(again[2].1, &teams2[1].members[2]));
    assert!(std::ptr::eq(again[1].2, &weights2[0]));
    // A root that lost the element a borrow pointed at: refused, never another value.
    let mut fewer = teams.clone();
    fewer[2].members.clear();
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        round_trip(
            &picked,
            &[root(&teams), root(&weights)],
            &[root(&fewer), root(&weights2)],
        )
        .len()
    }));
    assert!(
        refused.is_err(),
        "a borrow its root no longer has is refused"
    );
}

#[test]
fn texts_are_found_again_in_the_strings_that_hold_them_whole_or_in_part() {
    let teams = teams();
    let map: BTreeMap<String, u32> = [("alpha".to_owned(), 1), ("beta".to_owned(), 2)].into();
    let label = "héllo wörld".to_owned();
    let picked: Vec<&str> = vec![
        teams[1].name.as_str(),
        &teams[2].members[3].name[1..],
        "",
        map.keys().nth(1).map(String::as_str).unwrap_or_default(),
        &label[7..],
    ];
    let (teams2, map2, label2) = (teams.clone(), map.clone(), label.clone());
    let again = round_trip(
        &picked,
        &[root(&teams), root(&map), root(&label)],
        &[root(&teams2), root(&map2), root(&label2)],
    );
    assert_eq!(again, picked);
    // Pointing into the copies, not the originals.
    assert!(std::ptr::eq(again[0].as_ptr(), teams2[1].name.as_ptr()));
    assert!(std::ptr::eq(
        again[1].as_ptr(),
        teams2[2].members[3].name[1..].as_ptr()
    ));
    assert!(std::ptr::eq(again[4].as_ptr(), label2[7..].as_ptr()));
    // Beside owned values, in an option and a tuple.
    let best: Option<(&str, u32)> = Some((&teams[0].members[2].name, 7));
    assert_eq!(round_trip(&best, &[root(&teams)], &[root(&teams2)]), best);
}

#[test]
fn a_text_whose_string_changed_is_refused_not_read() {
    let teams = teams();
    // "12" of "m12".
    let name: &str = &teams[1].members[2].name[1..];
    let cases: [fn(&mut Vec<Team>); 3] = [
        // Another text of the same length at the same place.
        |teams| teams[1].members[2].name = "zzz".to_owned(),
        // Shorter than the part saved.
        |teams| teams[1].members[2].name.truncate(1),
        // The part no longer between two characters ('é' is two bytes).
        |teams| teams[1].members[2].name = "é1".to_owned(),
    ];
    for change in cases {
        let field = located(&name, &[root(&teams)], "name");
        let mut changed = teams.clone();
        change(&mut changed);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = bound(field, &[root(&changed)], "name");
        }));
        assert!(result.is_err(), "a changed text is refused");
    }
}

#[test]
fn a_text_no_string_of_the_roots_holds_is_refused_when_saved() {
    let teams = teams();
    // Its own `String`, not a root's; a literal; a text in a `HashMap`'s key.
    let own = "m12".to_owned();
    let hashed: HashMap<String, u32> = [("k".to_owned(), 1)].into();
    let key: &str = hashed.keys().next().map(String::as_str).unwrap_or_default();
    for (text, roots) in [
        (own.as_str(), vec![root(&teams)]),
        ("literal", vec![root(&teams)]),
        (key, vec![root(&hashed)]),
    ] {
        let field = located(&text, &roots, "text");
        let Err(reason) = &field.pieces else {
            panic!("{text:?} is not located");
        };
        assert!(reason.contains("`text`"), "{reason}");
    }
}

#[test]
fn a_text_no_string_holds_is_taken_back_as_the_literal_of_the_same_text() {
    static LITERALS: [&str; 3] = ["none", "unnamed", "x"];
    let teams = teams();
    // Made at run time, so not where the literal lies: the same text is the same value.
    let made = String::from("unnamed");
    let picked: Vec<&str> = vec![&teams[0].name, made.as_str(), "none"];
    let copy = teams.clone();
    let again = round_trip(
        &picked,
        &[root(&teams), literals(&LITERALS)],
        &[root(&copy), literals(&LITERALS)],
    );
    assert_eq!(again, picked);
    assert!(std::ptr::eq(again[1].as_ptr(), LITERALS[1].as_ptr()));
    // A build whose literals differ at that place refuses the state.
    static OTHERS: [&str; 3] = ["none", "renamed", "x"];
    let field = located(&picked, &[root(&teams), literals(&LITERALS)], "picked");
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = bound(field, &[root(&copy), literals(&OTHERS)], "picked");
    }));
    assert!(result.is_err(), "another literal is refused");
    // Not a literal, nor in a root: refused when saved.
    let other = String::from("elsewhere");
    let value: Option<&str> = Some(&other);
    let field = located(&value, &[root(&teams), literals(&LITERALS)], "value");
    assert!(field.pieces.is_err());
}
