//! One module per subcommand.

pub mod bench;
pub mod check;
pub mod cuda_stub;
pub mod demo;
pub mod probe;
