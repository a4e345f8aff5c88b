//! The README's comparison table quotes BENCHMARKS.md: each figure it gives must be in
//! BENCHMARKS.md's rows of today, so that the table cannot keep figures the benchmarks no
//! longer give (it named rmcp 3.9, 1.5× and 94 / 108 characters long after they changed).

#[test]
fn the_comparison_table_quotes_benchmarks_rows() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README.md");
    let benchmarks =
        std::fs::read_to_string(format!("{root}/BENCHMARKS.md")).expect("BENCHMARKS.md");
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|line| !line.starts_with("## How saga compares"))
        .take_while(|line| !line.starts_with("## Read more"))
        .filter(|line| line.starts_with('|'))
        .collect();
    assert!(table.len() > 3, "the comparison table is gone");
    let row = |name: &str| {
        table
            .iter()
            .find(|line| line.contains(name))
            .unwrap_or_else(|| panic!("no row {name:?} in the README's table"))
    };
    let cpu = row("server CPU per deploy saga");
    for quoted in ["0.455×", "28.8×"] {
        assert!(cpu.contains(quoted), "{cpu}");
        assert!(
            benchmarks.contains(quoted),
            "BENCHMARKS.md no longer gives {quoted}"
        );
    }
    let tokens = row("tokens");
    assert!(
        tokens.contains("79 / 94") && tokens.contains("94 / 124"),
        "{tokens}"
    );
    assert!(benchmarks.contains("79 + 94") && benchmarks.contains("94 + 124"));
    let versions = table[0];
    let rmcp = benchmarks
        .split("rmcp across the workspace | ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("BENCHMARKS.md's rmcp row");
    let minor = rmcp.rsplit_once('.').map_or(rmcp, |(minor, _)| minor);
    assert!(
        versions.contains(&format!("rmcp {minor}")),
        "{versions} (BENCHMARKS: {rmcp})"
    );
}
