//! Writes each fuzz target's seed corpus: `seed <dir>` puts real frames, handles and headers
//! (from `polycompute_pool::fuzzing::seeds`) in `<dir>/<target>/seed-<n>`.

fn main() -> std::io::Result<()> {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "seeds".into()));
    let mut n = std::collections::HashMap::new();
    for (target, bytes) in polycompute_pool::fuzzing::seeds()? {
        let k = n.entry(target).or_insert(0);
        std::fs::create_dir_all(dir.join(target))?;
        std::fs::write(dir.join(target).join(format!("seed-{k}")), bytes)?;
        *k += 1;
    }
    println!("{} seeds in {}", n.values().sum::<i32>(), dir.display());
    Ok(())
}
