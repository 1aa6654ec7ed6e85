//! Control records: transaction markers and KRaft's `__cluster_metadata` records.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::wire::{Cur, Fail};

/// Decodes a Kafka data schema (`LeaderChangeMessage`, `VotersRecord`, ...) by name.
///
/// kwire's schema walker implements it; kept as a trait so that this module
/// carries no schema files. `None` means the schema is not known.
pub trait DataSchemas {
    fn decode(
        &self,
        name: &str,
        version: i16,
        data: &[u8],
    ) -> Option<Result<serde_json::Value, String>>;
}

impl<F> DataSchemas for F
where
    F: Fn(&str, i16, &[u8]) -> Option<Result<serde_json::Value, String>>,
{
    fn decode(
        &self,
        name: &str,
        version: i16,
        data: &[u8],
    ) -> Option<Result<serde_json::Value, String>> {
        self(name, version, data)
    }
}

/// What a control record's value holds.
#[derive(Clone, Debug, PartialEq)]
pub enum ControlBody {
    /// COMMIT or ABORT: the EndTxnMarker value.
    Marker {
        version: i16,
        coordinator_epoch: i32,
    },
    /// A KRaft record decoded by the caller's schemas.
    Data(serde_json::Value),
    /// No schema was given for this type, or the type is unknown.
    Undecoded,
    Error(String),
}

/// A control record's key (version, type) and decoded value.
#[derive(Clone, Debug, PartialEq)]
pub struct Control {
    pub key_version: i16,
    pub type_id: i16,
    pub body: ControlBody,
}

/// Kafka's ControlRecordType names.
pub fn type_name(type_id: i16) -> &'static str {
    match type_id {
        0 => "ABORT",
        1 => "COMMIT",
        2 => "LEADER_CHANGE",
        3 => "SNAPSHOT_HEADER",
        4 => "SNAPSHOT_FOOTER",
        5 => "KRAFT_VERSION",
        6 => "KRAFT_VOTERS",
        _ => "UNKNOWN",
    }
}

/// The data schema holding a KRaft control record's value.
pub fn schema_name(type_id: i16) -> Option<&'static str> {
    Some(match type_id {
        2 => "LeaderChangeMessage",
        3 => "SnapshotHeaderRecord",
        4 => "SnapshotFooterRecord",
        5 => "KRaftVersionRecord",
        6 => "VotersRecord",
        _ => return None,
    })
}

/// Decodes a control record as Kafka's ControlRecordType and EndTransactionMarker
/// do; `None` when the key is not a control key at all.
pub fn decode(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    schemas: Option<&dyn DataSchemas>,
) -> Result<Control, Fail> {
    let key = key.ok_or_else(|| Fail::Other("control record without a key".into()))?;
    let mut c = Cur::new(key, 0);
    let key_version = c.i16()?;
    if key_version < 0 {
        return Err(Fail::Other(format!(
            "invalid control record key version {key_version}"
        )));
    }
    let type_id = c.i16()?;
    let body = match (type_id, value) {
        (0 | 1, Some(v)) => {
            let mut c = Cur::new(v, 0);
            let version = c.i16()?;
            if version < 0 {
                ControlBody::Error(format!("invalid end transaction marker version {version}"))
            } else {
                // Kafka reads every version as version 0.
                ControlBody::Marker {
                    version,
                    coordinator_epoch: c.i32()?,
                }
            }
        }
        (0 | 1, None) => ControlBody::Error("transaction marker without a value".into()),
        (t, Some(v)) => match (schema_name(t), schemas) {
            // Kafka reads these at schema version 0 (ControlRecordUtils).
            (Some(name), Some(s)) => match s.decode(name, 0, v) {
                Some(Ok(j)) => ControlBody::Data(j),
                Some(Err(e)) => ControlBody::Error(e),
                None => ControlBody::Undecoded,
            },
            _ => ControlBody::Undecoded,
        },
        (_, None) => ControlBody::Undecoded,
    };
    Ok(Control {
        key_version,
        type_id,
        body,
    })
}
