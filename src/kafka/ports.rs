//! TCP connections per server port, for saying where the traffic was when none of it
//! was Kafka. Bounded: at most [`MAX_PORTS`] distinct ports are counted.

use rustc_hash::FxHashMap as HashMap;
use std::net::SocketAddr;

/// Distinct ports counted; connections to ports beyond them are only totalled.
pub const MAX_PORTS: usize = 1024;

#[derive(Clone, Debug, Default)]
pub struct PortCounts {
    counts: HashMap<u16, u64>,
    /// Connections to ports first seen after [`MAX_PORTS`] distinct ones.
    pub not_kept: u64,
}

impl PortCounts {
    /// Counts a connection under its server's port: the SYN's destination when the
    /// handshake was seen (`b`), otherwise the lower port, as services rarely use
    /// ephemeral ports.
    pub fn add(&mut self, a: SocketAddr, b: SocketAddr, syn_seen: bool) {
        let port = if syn_seen {
            b.port()
        } else {
            a.port().min(b.port())
        };
        if let Some(c) = self.counts.get_mut(&port) {
            *c += 1;
        } else if self.counts.len() < MAX_PORTS {
            self.counts.insert(port, 1);
        } else {
            self.not_kept += 1;
        }
    }

    /// The `n` ports with the most connections, most first (ties: lower port first).
    pub fn top(&self, n: usize) -> Vec<(u16, u64)> {
        let mut all: Vec<(u16, u64)> = self.counts.iter().map(|(p, c)| (*p, *c)).collect();
        all.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        all.truncate(n);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(port: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], port))
    }

    #[test]
    fn server_port_and_order() {
        let mut p = PortCounts::default();
        p.add(sa(50000), sa(9094), true);
        p.add(sa(50001), sa(9094), true);
        p.add(sa(443), sa(50002), false);
        p.add(sa(50003), sa(80), false);
        assert_eq!(p.top(2), vec![(9094, 2), (80, 1)]);
        assert_eq!(p.top(9).len(), 3);
    }

    #[test]
    fn distinct_ports_are_capped() {
        let mut p = PortCounts::default();
        for port in 0..(MAX_PORTS as u16 + 10) {
            p.add(sa(60000), sa(port), true);
        }
        p.add(sa(60000), sa(0), true);
        assert_eq!(p.counts.len(), MAX_PORTS);
        assert_eq!(p.not_kept, 10);
        assert_eq!(p.top(1), vec![(0, 2)]);
    }
}
