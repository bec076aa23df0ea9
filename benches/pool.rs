//! Pool overheads (written below).
fn main() {
    polycompute::worker_main(&polycompute::Tasks::new());
}
