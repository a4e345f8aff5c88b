//! The snapshot check every test of the workspace uses: the macro's expansions, the sagas'
//! diagrams and the golden files. A value that differs from its file, or has none, fails;
//! with `SAGA_SNAPSHOTS=overwrite` in the environment the file is written instead (read
//! the diff, then commit it).

use std::path::Path;

/// The variable that turns checking into writing.
pub const VAR: &str = "SAGA_SNAPSHOTS";

/// Whether snapshots are written rather than checked: `SAGA_SNAPSHOTS=overwrite`.
pub fn overwrite() -> bool {
    std::env::var_os(VAR).is_some_and(|v| v == "overwrite")
}

/// Checks `actual` (the snapshot of `what`) against the file at `path`; with
/// `SAGA_SNAPSHOTS=overwrite`, writes it there instead. A failure names the first line
/// that differs and shows both texts.
///
/// # Panics
///
/// When the file is missing or differs (and snapshots are not being written), or cannot
/// be written.
#[track_caller]
pub fn assert_snapshot(path: &Path, what: &str, actual: &str) {
    check(path, what, actual, overwrite());
}

#[track_caller]
fn check(path: &Path, what: &str, actual: &str, overwrite: bool) {
    if overwrite {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|error| panic!("{}: {error}", parent.display()));
        }
        std::fs::write(path, actual).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|error| {
        panic!(
            "{what}: no snapshot at {} ({error}); write it with {VAR}=overwrite, read it, and \
             commit it",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(want, got)| want != got)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    panic!(
        "{what} differs from {} from line {}; if the change is meant, rerun with \
         {VAR}=overwrite and read the diff.\n--- expected\n{expected}\n--- got\n{actual}",
        path.display(),
        line + 1,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: Option<&str>) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("saga-snapshot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        match text {
            Some(text) => std::fs::write(&path, text).unwrap(),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
        path
    }

    #[test]
    fn the_same_text_passes() {
        check(&file("same", Some("a\nb\n")), "same", "a\nb\n", false);
    }

    #[test]
    #[should_panic(expected = "other differs from")]
    fn another_text_fails() {
        check(&file("other", Some("a\nb\n")), "other", "a\nc\n", false);
    }

    #[test]
    fn a_failure_names_the_first_line_that_differs() {
        let path = file("line", Some("a\nb\nc\n"));
        let message = std::panic::catch_unwind(|| check(&path, "line", "a\nb\nx\n", false))
            .expect_err("differs");
        let message = message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains("from line 3;"), "{message}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "a\nb\nc\n",
            "a check wrote"
        );
    }

    #[test]
    #[should_panic(expected = "no snapshot at")]
    fn a_missing_file_fails_and_is_not_written() {
        let path = file("missing", None);
        let result = std::panic::catch_unwind(|| check(&path, "missing", "a\n", false));
        assert!(!path.exists(), "a failing check wrote {}", path.display());
        std::panic::resume_unwind(result.expect_err("missing"));
    }

    #[test]
    fn overwriting_writes_the_file() {
        let path = file("written", None);
        check(&path, "written", "new\n", true);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
    }
}
