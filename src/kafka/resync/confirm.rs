//! The caller's schema check for hunted candidates.

use crate::proto::Kind;
use std::sync::Arc;

/// Says whether a whole frame (from its size prefix) decodes completely, with
/// nothing left over, as a message of this kind, API key and version. The caller
/// supplies it (the schemas live above this module).
#[derive(Clone)]
pub struct Confirm(pub(super) Arc<ConfirmFn>);

type ConfirmFn = dyn Fn(Kind, (i16, i16), &[u8]) -> bool + Send + Sync;

impl Confirm {
    pub fn new(f: impl Fn(Kind, (i16, i16), &[u8]) -> bool + Send + Sync + 'static) -> Self {
        Confirm(Arc::new(f))
    }
}

impl std::fmt::Debug for Confirm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Confirm(..)")
    }
}
