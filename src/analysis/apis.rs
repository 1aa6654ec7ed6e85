//! Per-API counts, latencies and error codes.

use crate::codec::{Kind, Role, Value};
use crate::dissect::Record;
use std::collections::BTreeMap;

/// Latencies kept exactly per API; past this, percentiles come from the histogram.
const MAX_SAMPLES: usize = 8_192;
/// Histogram buckets: 4 per power of two of µs, from 1 µs to 2^40 µs.
const SUB: u32 = 4;
const BUCKETS: usize = 1 + 41 * SUB as usize;

/// Latencies of paired responses: exact up to a cap, then a log-scale histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Latency {
    pub count: u64,
    pub max_us: i64,
    samples: Vec<i64>,
    buckets: Vec<u64>,
}

/// Nearest-rank percentiles, in µs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Percentiles {
    pub p50: i64,
    pub p90: i64,
    pub p99: i64,
    pub max: i64,
    /// False once there were more samples than kept: the percentiles are then
    /// bucket upper bounds (at most 25% above the true value).
    pub exact: bool,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            count: 0,
            max_us: 0,
            samples: Vec::new(),
            buckets: vec![0; BUCKETS],
        }
    }
}

/// The bucket of a latency in µs.
fn bucket(us: i64) -> usize {
    let Ok(us) = u64::try_from(us) else { return 0 };
    if us == 0 {
        return 0;
    }
    let lg = 63 - us.leading_zeros();
    let sub = if lg >= 2 {
        (us >> (lg - 2)) & 3
    } else {
        (us << (2 - lg)) & 3
    };
    (1 + lg as usize * SUB as usize + sub as usize).min(BUCKETS - 1)
}

/// The exclusive upper bound, in µs, of a bucket.
fn bucket_top(i: usize) -> i64 {
    if i == 0 {
        return 1;
    }
    let lg = ((i - 1) / SUB as usize) as u32;
    let sub = ((i - 1) % SUB as usize) as i64;
    // Below 4 µs a quarter octave is less than 1 µs: round the bound up.
    (((4 + sub + 1) << lg) + 3) / 4
}

impl Latency {
    fn add(&mut self, us: i64) {
        self.count += 1;
        self.max_us = self.max_us.max(us);
        if self.samples.len() < MAX_SAMPLES {
            self.samples.push(us);
        }
        if let Some(b) = self.buckets.get_mut(bucket(us)) {
            *b += 1;
        }
    }

    pub fn percentiles(&self) -> Option<Percentiles> {
        if self.count == 0 {
            return None;
        }
        let exact = self.count as usize == self.samples.len();
        let pick = |p: u64| -> i64 {
            // Nearest rank: the smallest value with at least p% of samples at or below it.
            let rank = (self.count * p).div_ceil(100).max(1);
            if exact {
                let mut s = self.samples.clone();
                s.sort_unstable();
                return s.get(rank as usize - 1).copied().unwrap_or(self.max_us);
            }
            let mut seen = 0;
            for (i, n) in self.buckets.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    return (bucket_top(i) - 1).min(self.max_us);
                }
            }
            self.max_us
        };
        Some(Percentiles {
            p50: pick(50),
            p90: pick(90),
            p99: pick(99),
            max: self.max_us,
            exact,
        })
    }

    /// Counts per power of two of µs: `(lower bound µs, upper bound µs, count)`,
    /// from the lowest to the highest non-empty range, for drawing.
    pub fn octaves(&self) -> Vec<(i64, i64, u64)> {
        let mut out: Vec<(i64, i64, u64)> = Vec::new();
        let mut n0 = self.buckets.first().copied().unwrap_or(0);
        out.push((0, 1, n0));
        for lg in 0..41u32 {
            let from = 1 + lg as usize * SUB as usize;
            n0 = self.buckets.iter().skip(from).take(SUB as usize).sum();
            out.push((1 << lg, 2 << lg, n0));
        }
        let first = out.iter().position(|o| o.2 > 0).unwrap_or(0);
        let last = out.iter().rposition(|o| o.2 > 0).unwrap_or(0);
        out.into_iter().skip(first).take(last + 1 - first).collect()
    }
}

/// What was seen of one API.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiStats {
    /// None for responses whose API could not be told.
    pub api_key: Option<i16>,
    /// Requests per version.
    pub requests: BTreeMap<i16, u64>,
    pub responses: u64,
    /// Responses paired with their captured request.
    pub paired: u64,
    /// Responses whose request was not captured.
    pub unpaired_responses: u64,
    pub latency: Latency,
    /// Non-zero `…ErrorCode` fields of decoded responses, by code.
    pub errors: BTreeMap<i16, u64>,
    /// Responses whose body kwire decoded (errors are known only for these).
    pub decoded_responses: u64,
    /// Messages that failed to decode.
    pub malformed: u64,
}

impl ApiStats {
    pub fn total_requests(&self) -> u64 {
        self.requests.values().sum()
    }
    /// Requests with no paired response (yet).
    pub fn unanswered(&self) -> u64 {
        self.total_requests().saturating_sub(self.paired)
    }
}

#[derive(Default)]
pub(super) struct Apis {
    by_key: BTreeMap<Option<i16>, ApiStats>,
}

impl Apis {
    pub(super) fn record(&mut self, r: &Record<'_>) {
        let m = &r.msg;
        let s = self.by_key.entry(m.api_key).or_insert_with(|| ApiStats {
            api_key: m.api_key,
            ..ApiStats::default()
        });
        s.malformed += u64::from(m.error.is_some());
        match m.kind {
            Kind::Request => {
                *s.requests.entry(m.api_version.unwrap_or(-1)).or_default() += 1;
            }
            Kind::Response => {
                s.responses += 1;
                if r.request_packet.is_some() {
                    s.paired += 1;
                } else {
                    s.unpaired_responses += 1;
                }
                if let Some(ns) = r.latency_ns {
                    s.latency.add(ns / 1000);
                }
                if m.body.is_some() && m.error.is_none() {
                    s.decoded_responses += 1;
                    for n in &m.tree.nodes {
                        if let (Role::Field, Value::Int(v)) = (n.role, n.value) {
                            if v != 0 && n.name().ends_with("ErrorCode") {
                                let code = i16::try_from(v).unwrap_or(i16::MAX);
                                *s.errors.entry(code).or_default() += 1;
                            }
                        }
                    }
                }
            }
        }
    }

    pub(super) fn build(&self) -> Vec<ApiStats> {
        self.by_key.values().cloned().collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn buckets_bound_their_values() {
        for us in [1i64, 2, 3, 4, 5, 7, 8, 100, 999, 1000, 12_345, 1 << 30] {
            let b = bucket(us);
            assert!(us < bucket_top(b), "{us} in {b}");
            assert!(b == 0 || us >= bucket_top(b - 1), "{us} in {b}");
        }
    }

    #[test]
    fn percentiles_are_exact_then_bounded() {
        let mut l = Latency::default();
        for us in 1..=100 {
            l.add(us);
        }
        let p = l.percentiles().unwrap();
        assert_eq!(
            (p.p50, p.p90, p.p99, p.max, p.exact),
            (50, 90, 99, 100, true)
        );
        let mut l = Latency::default();
        for i in 0..(MAX_SAMPLES as i64 * 2) {
            l.add(1000 + i % 100);
        }
        let p = l.percentiles().unwrap();
        assert!(!p.exact);
        assert!(p.p50 >= 1049 && p.p50 <= 1099, "{p:?}");
        assert_eq!(p.max, 1099);
        let o = l.octaves();
        assert_eq!(o.len(), 2, "{o:?}");
        assert_eq!((o[0].0, o[0].1, o[1].0, o[1].1), (512, 1024, 1024, 2048));
        assert_eq!(o[0].2 + o[1].2, l.count);
    }
}
