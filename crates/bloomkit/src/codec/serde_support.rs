//! serde support (feature `serde`): every in-memory filter serializes as its native-format
//! bytes, so serde output carries the same version, checksum and validation as a file.
//!
//! Filters with a keyed or custom hash cannot be deserialized this way (the key is never
//! written); deserializing one fails with a message naming the hash. Use
//! [`native::from_bytes`](super::native::from_bytes) with the key instead.

use super::native;
use crate::{
    AnyFilter, BlockedBloomFilter, BloomFilter, CountingBloomFilter, DLeftCountingFilter, Kind,
    ScalableBloomFilter,
};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

fn serialize_any<S: Serializer>(f: AnyFilter, s: S) -> Result<S::Ok, S::Error> {
    let bytes = native::to_bytes(&f, None).map_err(serde::ser::Error::custom)?;
    s.serialize_bytes(&bytes)
}

fn deserialize_any<'de, D: Deserializer<'de>>(d: D) -> Result<AnyFilter, D::Error> {
    let bytes: Vec<u8> = Deserialize::deserialize(d)?;
    native::from_bytes(&bytes, &[])
        .map(|decoded| decoded.filter)
        .map_err(D::Error::custom)
}

impl Serialize for AnyFilter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_any(self.clone(), s)
    }
}

impl<'de> Deserialize<'de> for AnyFilter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_any(d)
    }
}

macro_rules! via_any {
    ($t:ty, $variant:ident) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serialize_any(AnyFilter::$variant(self.clone()), s)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                match deserialize_any(d)? {
                    AnyFilter::$variant(f) => Ok(f),
                    other => Err(D::Error::custom(format!(
                        "expected a {} filter, found a {} filter",
                        Kind::$variant,
                        crate::Filter::kind(&other)
                    ))),
                }
            }
        }
    };
}

via_any!(BloomFilter, Classic);
via_any!(BlockedBloomFilter, Blocked);
via_any!(CountingBloomFilter, Counting);
via_any!(ScalableBloomFilter, Scalable);
via_any!(DLeftCountingFilter, DLeft);
