//! The overall cap on partial-frame bytes: past it, the connection that grew
//! drops what it holds and resynchronises.

use super::{Role, Sessions};
use crate::tcp::ConnId;

impl Sessions {
    /// Partial-frame bytes one connection holds.
    pub(super) fn held(&self, id: ConnId) -> usize {
        self.conns
            .get(&id)
            .map_or(0, |c| c.halves.iter().map(|h| h.buf.len()).sum())
    }

    /// Over the overall cap: the connection that grew gives up what it holds.
    pub(super) fn shed(&mut self, id: ConnId) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        for h in conn.halves.iter_mut().filter(|h| !h.buf.is_empty()) {
            let n = h.buf.len();
            self.stats.shed_bytes += n as u64;
            self.buffered = self.buffered.saturating_sub(n);
            h.buf = Vec::new();
            h.arrivals.clear();
            h.skip = 0;
            h.hunting = true;
            h.notes.push(format!(
                "{n} bytes were dropped before this message: the overall buffer limit was reached"
            ));
        }
        if conn.role == Role::Undecided {
            conn.role = Role::NotKafka;
            self.stats.not_kafka += 1;
        }
    }
}
