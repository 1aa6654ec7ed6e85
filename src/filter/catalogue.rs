//! The field catalogue from Kafka's message schemas.

use super::{Catalogue, FieldType};
use crate::codec::{Field, FieldType as Shape, MessageSchema, Prim};

/// The keys of a decoded record batch (contract: "Record batches").
const BATCH: [(&str, FieldType); 19] = [
    ("BaseOffset", FieldType::Int),
    ("BatchLength", FieldType::Int),
    ("PartitionLeaderEpoch", FieldType::Int),
    ("Magic", FieldType::Int),
    ("Crc", FieldType::Int),
    ("CrcValid", FieldType::Bool),
    ("Attributes", FieldType::Int),
    ("Compression", FieldType::Text),
    ("TimestampType", FieldType::Text),
    ("IsTransactional", FieldType::Bool),
    ("IsControl", FieldType::Bool),
    ("LastOffsetDelta", FieldType::Int),
    ("BaseTimestamp", FieldType::Int),
    ("MaxTimestamp", FieldType::Int),
    ("ProducerId", FieldType::Int),
    ("ProducerEpoch", FieldType::Int),
    ("BaseSequence", FieldType::Int),
    ("RecordCount", FieldType::Int),
    ("Records", FieldType::Struct),
];

/// The keys of a magic 0 or 1 message, and of a batch that is cut or undecodable.
const LEGACY: [(&str, FieldType); 9] = [
    ("Offset", FieldType::Int),
    ("MessageSize", FieldType::Int),
    ("Timestamp", FieldType::Int),
    ("Key", FieldType::Bytes),
    ("Value", FieldType::Bytes),
    ("Messages", FieldType::Struct),
    ("Partial", FieldType::Bool),
    ("Bytes", FieldType::Int),
    ("Error", FieldType::Text),
];

/// The keys of one record in a batch.
const RECORD: [(&str, FieldType); 7] = [
    ("Attributes", FieldType::Int),
    ("TimestampDelta", FieldType::Int),
    ("OffsetDelta", FieldType::Int),
    ("Key", FieldType::Bytes),
    ("Value", FieldType::Bytes),
    ("Headers", FieldType::Struct),
    ("Timestamp", FieldType::Int),
];

impl Catalogue {
    /// Adds every field of these message schemas.
    pub fn add_schemas<'s>(&mut self, schemas: impl IntoIterator<Item = &'s MessageSchema>) {
        for s in schemas {
            let mut path = Vec::new();
            self.add_fields(&mut path, &s.fields);
        }
    }

    fn add_fields(&mut self, path: &mut Vec<String>, fields: &[Field]) {
        for f in fields {
            path.push(f.name.clone());
            match &f.ty {
                Shape::Prim(Prim::Records) | Shape::ArrayOfPrim(Prim::Records) => {
                    self.add_records(path)
                }
                Shape::Prim(p) | Shape::ArrayOfPrim(p) => self.add_field(path, prim(*p)),
                Shape::Struct(inner) | Shape::ArrayOfStruct(inner) => {
                    self.add_field(path, FieldType::Struct);
                    self.add_fields(path, inner);
                }
            }
            path.pop();
        }
    }

    /// A `records` field: batches, their records and the records' headers.
    fn add_records(&mut self, path: &mut Vec<String>) {
        self.add_field(path, FieldType::Struct);
        for (name, ty) in BATCH.iter().chain(&LEGACY) {
            path.push(name.to_string());
            self.add_field(path, *ty);
            path.pop();
        }
        // The inner messages of a compressed magic 0 or 1 wrapper.
        path.push("Messages".to_string());
        for (name, ty) in BATCH.iter().chain(&LEGACY).filter(|(n, _)| {
            matches!(
                *n,
                "Offset"
                    | "MessageSize"
                    | "Crc"
                    | "CrcValid"
                    | "Magic"
                    | "Attributes"
                    | "Compression"
                    | "Timestamp"
                    | "Key"
                    | "Value"
            )
        }) {
            path.push(name.to_string());
            self.add_field(path, *ty);
            path.pop();
        }
        path.pop();
        path.push("Records".to_string());
        for (name, ty) in RECORD {
            path.push(name.to_string());
            self.add_field(path, ty);
            path.pop();
        }
        for (name, ty) in [("Key", FieldType::Text), ("Value", FieldType::Bytes)] {
            path.extend(["Headers".to_string(), name.to_string()]);
            self.add_field(path, ty);
            path.truncate(path.len() - 2);
        }
        path.pop();
    }
}

fn prim(p: Prim) -> FieldType {
    match p {
        Prim::Bool => FieldType::Bool,
        Prim::Int8 | Prim::Int16 | Prim::Int32 | Prim::Int64 | Prim::Uint16 => FieldType::Int,
        Prim::Float64 => FieldType::Float,
        Prim::String => FieldType::Text,
        Prim::Bytes => FieldType::Bytes,
        Prim::Uuid => FieldType::Uuid,
        Prim::Records => FieldType::Struct,
    }
}
