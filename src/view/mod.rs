//! Views: text renderings of decoded messages.

pub mod escape;
pub mod filter;
pub mod json;
pub mod summary;
pub mod tree;
