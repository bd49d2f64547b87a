//! `pcw`: the pcw-rs command line.
fn main() {}
