// SPDX-License-Identifier: MIT
//! The binding's README says what is so: its complete program is
//! examples/wait.rs as it is, and the figures it quotes are lines of the
//! kept run in results/rust/.

use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e))
}

#[test]
fn readme_program_is_the_example() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = read(&here.join("../README.md"));
    let start = readme.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let len = readme[start..].find("```\n").expect("the block's end");
    assert_eq!(
        &readme[start..start + len],
        read(&here.join("examples/wait.rs"))
    );
}

#[test]
fn readme_figures_are_the_kept_run() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = read(&here.join("../README.md"));
    let kept = read(&here.join("../../../results/rust/concurrent_waits.txt"));
    let quoted: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("median ") || l.starts_with("# cw/blocking"))
        .collect();
    assert!(quoted.len() >= 8, "{} quoted lines", quoted.len());
    for line in quoted {
        assert!(
            kept.lines().any(|k| k == line),
            "not in the kept run: {}",
            line
        );
    }
}
