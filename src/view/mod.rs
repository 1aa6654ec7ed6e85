//! Views: text renderings of decoded messages.

pub mod escape;
pub mod json;
pub mod tree;
