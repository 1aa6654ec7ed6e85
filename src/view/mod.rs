//! Views: text renderings of decoded messages.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod escape;
pub mod json;
pub mod labels;
pub mod printer;
pub mod records;
pub mod report;
pub mod summary;
pub mod tree;
