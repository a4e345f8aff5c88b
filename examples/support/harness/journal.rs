//! The journal the migrate example writes when `MIGRATE_JOURNAL` names a file (`LABEL
//! began table N`, `LABEL table N`, `LABEL done`): which work ran, and how often, in
//! processes a test kills part-way.

use std::path::PathBuf;

use super::process::Spawn;

/// A journal file in a temporary directory of its own, removed on drop.
pub struct Journal {
    dir: PathBuf,
    file: PathBuf,
}

impl Drop for Journal {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Journal {
    /// A fresh, empty journal in `saga-{name}-{pid}` under the temporary directory.
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("saga-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let file = dir.join("journal");
        let _ = std::fs::remove_file(&file);
        Self { dir, file }
    }

    /// Its path, for `MIGRATE_JOURNAL`.
    pub fn path(&self) -> String {
        self.file.to_string_lossy().into_owned()
    }

    /// The migrate example, with the keys `keys`, writing this journal.
    pub fn migrate(&self, keys: &str) -> Spawn {
        Spawn::new("migrate", keys).env("MIGRATE_JOURNAL", &self.path())
    }

    /// What it holds so far (nothing before the first line is written).
    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.file).unwrap_or_default()
    }

    /// How many tables the migration `label` finished so far, counting repeats.
    pub fn tables_done(&self, label: &str) -> usize {
        let prefix = format!("{label} table ");
        self.text()
            .lines()
            .filter(|line| line.starts_with(&prefix))
            .count()
    }

    /// [`Journal::tables_done`], which must be at least `least`.
    #[track_caller]
    pub fn tables_done_at_least(&self, label: &str, least: usize) -> usize {
        let done = self.tables_done(label);
        assert!(done >= least, "{}", self.text());
        done
    }

    /// After the migration `label` of `tables` tables was resumed from the token of its
    /// checkpoint after table `kept - 1`, when `done_before` tables had been finished:
    /// every table ran, none of the first `kept` (in the token) twice, and no more ran again
    /// than were finished after that checkpoint. How many tables ran again.
    #[track_caller]
    pub fn assert_resumed(
        &self,
        label: &str,
        tables: u32,
        kept: usize,
        done_before: usize,
    ) -> usize {
        let text = self.text();
        let prefix = format!("{label} table ");
        let mut counts = vec![0u32; tables as usize];
        for line in text.lines().filter(|line| line.starts_with(&prefix)) {
            let table: usize = line
                .strip_prefix(&prefix)
                .and_then(|n| n.parse().ok())
                .expect("a journal line");
            counts[table] += 1;
        }
        assert!(counts.iter().all(|&n| n >= 1), "{text}");
        assert!(
            counts[..kept].iter().all(|&n| n == 1),
            "work before the kept checkpoint ran again: {text}"
        );
        let repeated = counts.iter().filter(|&&n| n > 1).count();
        assert!(
            repeated <= done_before - kept,
            "more work redone than was done after the kept checkpoint: {text}"
        );
        eprintln!(
            "{done_before} tables done before the kill, {repeated} done again after it: {counts:?}"
        );
        repeated
    }
}
