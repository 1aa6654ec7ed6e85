//! KRaft's control record values, hand-decoded at schema version 0 (as Kafka
//! reads them): `LeaderChangeMessage`, `SnapshotHeaderRecord`,
//! `SnapshotFooterRecord`, `KRaftVersionRecord` and `VotersRecord`. All five
//! are flexible, so each struct ends with a tagged-field section; unknown tags
//! are skipped. The schema walker can stand in for this through
//! [`DataSchemas`] once it decodes data schemas by name.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::DataSchemas;
use super::wire::{Cur, Fail};
use serde_json::{Map, Value, json};

/// The built-in decoder of the five KRaft control record schemas.
pub struct Kraft;

impl DataSchemas for Kraft {
    fn decode(&self, name: &str, version: i16, data: &[u8]) -> Option<Result<Value, String>> {
        if version != 0 {
            return None;
        }
        let mut c = Cur::new(data, 0);
        let r = match name {
            "LeaderChangeMessage" => leader_change(&mut c),
            "SnapshotHeaderRecord" => (|| {
                let v = c.i16()?;
                let ts = c.i64()?;
                tags(&mut c)?;
                Ok(json!({"Version": v, "LastContainedLogTimestamp": ts}))
            })(),
            "SnapshotFooterRecord" => (|| {
                let v = c.i16()?;
                tags(&mut c)?;
                Ok(json!({"Version": v}))
            })(),
            "KRaftVersionRecord" => (|| {
                let v = c.i16()?;
                let k = c.i16()?;
                tags(&mut c)?;
                Ok(json!({"Version": v, "KRaftVersion": k}))
            })(),
            "VotersRecord" => voters(&mut c),
            _ => return None,
        };
        Some(
            r.and_then(|v| {
                if c.remaining() == 0 {
                    Ok(v)
                } else {
                    Err(Fail::Other(format!("{} bytes after {name}", c.remaining())))
                }
            })
            .map_err(|e| format!("{name}: {e}")),
        )
    }
}

/// Unsigned varint, at most 5 bytes (lengths, counts and tags).
fn uvarint(c: &mut Cur<'_>) -> Result<u32, Fail> {
    let at = c.pos;
    let mut v: u64 = 0;
    for shift in (0..35).step_by(7) {
        let b = c.u8()?;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return u32::try_from(v).map_err(|_| Fail::VarintTooLong { at });
        }
    }
    Err(Fail::VarintTooLong { at })
}

/// A tagged-field section; no tag is defined in these schemas, so all are skipped.
fn tags(c: &mut Cur<'_>) -> Result<(), Fail> {
    let n = uvarint(c)?;
    for _ in 0..n {
        uvarint(c)?;
        let size = uvarint(c)?;
        c.take(size as usize)?;
    }
    Ok(())
}

/// A compact array's element count (null is not allowed here).
fn count(c: &mut Cur<'_>) -> Result<u32, Fail> {
    let at = c.pos;
    match uvarint(c)? {
        0 => Err(Fail::Negative {
            at,
            what: "array length",
            value: -1,
        }),
        // Each element takes a byte at least, so a count cannot outrun the data.
        n if (n - 1) as usize > c.remaining() => Err(Fail::Other(format!(
            "{} elements cannot fit in {} bytes",
            n - 1,
            c.remaining()
        ))),
        n => Ok(n - 1),
    }
}

fn string(c: &mut Cur<'_>) -> Result<String, Fail> {
    let at = c.pos;
    let n = uvarint(c)?;
    let len = n.checked_sub(1).ok_or(Fail::Negative {
        at,
        what: "string length",
        value: -1,
    })?;
    Ok(String::from_utf8_lossy(c.take(len as usize)?).into_owned())
}

fn uuid(c: &mut Cur<'_>) -> Result<String, Fail> {
    let b = c.take(16)?;
    let mut u = [0u8; 16];
    u.copy_from_slice(b);
    Ok(uuid::Uuid::from_bytes(u).hyphenated().to_string())
}

fn leader_change(c: &mut Cur<'_>) -> Result<Value, Fail> {
    let version = c.i16()?;
    let leader = c.i32()?;
    let mut sets = Vec::new();
    for _ in 0..2 {
        let n = count(c)?;
        let mut set = Vec::new();
        for _ in 0..n {
            let id = c.i32()?;
            tags(c)?;
            set.push(json!({"VoterId": id}));
        }
        sets.push(Value::Array(set));
    }
    tags(c)?;
    let granting = sets.pop().unwrap_or_default();
    let voters = sets.pop().unwrap_or_default();
    Ok(
        json!({"Version": version, "LeaderId": leader, "Voters": voters, "GrantingVoters": granting}),
    )
}

fn voters(c: &mut Cur<'_>) -> Result<Value, Fail> {
    let version = c.i16()?;
    let n = count(c)?;
    let mut list = Vec::new();
    for _ in 0..n {
        let mut v = Map::new();
        v.insert("VoterId".into(), json!(c.i32()?));
        v.insert("VoterDirectoryId".into(), json!(uuid(c)?));
        let e = count(c)?;
        let mut eps = Vec::new();
        for _ in 0..e {
            let name = string(c)?;
            let host = string(c)?;
            let port = u16::from_be_bytes([c.u8()?, c.u8()?]);
            tags(c)?;
            eps.push(json!({"Name": name, "Host": host, "Port": port}));
        }
        v.insert("Endpoints".into(), Value::Array(eps));
        let min = c.i16()?;
        let max = c.i16()?;
        tags(c)?;
        v.insert(
            "KRaftVersionFeature".into(),
            json!({"MinSupportedVersion": min, "MaxSupportedVersion": max}),
        );
        tags(c)?;
        list.push(Value::Object(v));
    }
    tags(c)?;
    Ok(json!({"Version": version, "Voters": list}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leader_change_as_the_captures_hold_it() {
        // From kraft-initial-election.pcap (Kafka's ControlRecordUtils reads the same):
        // leader 2, voters 1 2 3, granted by 1 and 2.
        let hex = "00000000000204000000010000000002000000000300030000000100000000020000";
        let b: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let v = Kraft.decode("LeaderChangeMessage", 0, &b).unwrap().unwrap();
        assert_eq!(v["LeaderId"], 2);
        assert_eq!(
            v["Voters"],
            json!([{"VoterId": 1}, {"VoterId": 2}, {"VoterId": 3}])
        );
        assert_eq!(v["GrantingVoters"], json!([{"VoterId": 1}, {"VoterId": 2}]));
        // Cut anywhere: an error, never a panic.
        for n in 0..b.len() {
            assert!(
                Kraft
                    .decode("LeaderChangeMessage", 0, &b[..n])
                    .unwrap()
                    .is_err()
            );
        }
        assert!(Kraft.decode("LeaderChangeMessage", 1, &b).is_none());
        assert!(Kraft.decode("Nope", 0, &b).is_none());
    }

    #[test]
    fn the_small_records() {
        let v = Kraft
            .decode("KRaftVersionRecord", 0, &[0, 0, 0, 1, 0])
            .unwrap()
            .unwrap();
        assert_eq!(v, json!({"Version": 0, "KRaftVersion": 1}));
        let v = Kraft
            .decode("SnapshotFooterRecord", 0, &[0, 0, 0])
            .unwrap()
            .unwrap();
        assert_eq!(v, json!({"Version": 0}));
        let mut h = vec![0, 0];
        h.extend_from_slice(&5i64.to_be_bytes());
        h.push(0);
        let v = Kraft
            .decode("SnapshotHeaderRecord", 0, &h)
            .unwrap()
            .unwrap();
        assert_eq!(v, json!({"Version": 0, "LastContainedLogTimestamp": 5}));
        // VotersRecord: one voter with one endpoint.
        let mut r = vec![0, 0, 2];
        r.extend_from_slice(&1i32.to_be_bytes());
        r.extend_from_slice(&[7; 16]);
        r.push(2);
        r.extend_from_slice(&[11]);
        r.extend_from_slice(b"CONTROLLER");
        r.extend_from_slice(&[10]);
        r.extend_from_slice(b"127.0.0.1");
        r.extend_from_slice(&19301u16.to_be_bytes());
        r.push(0);
        r.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0]);
        let v = Kraft.decode("VotersRecord", 0, &r).unwrap().unwrap();
        assert_eq!(
            v["Voters"][0]["Endpoints"][0],
            json!({"Name": "CONTROLLER", "Host": "127.0.0.1", "Port": 19301})
        );
        assert_eq!(
            v["Voters"][0]["KRaftVersionFeature"]["MaxSupportedVersion"],
            1
        );
        for n in 0..r.len() {
            assert!(Kraft.decode("VotersRecord", 0, &r[..n]).unwrap().is_err());
        }
    }
}
