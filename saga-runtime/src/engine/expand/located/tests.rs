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
