//! A compacted topic checked after the run (`compaction = verify`): what the producers wrote
//! last of every key ([`KeyTable`], from their delivery reports), what a read of the whole
//! topic found after the forced compaction ([`TopicRead`]), and the figures that compare them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::KeySpec;

mod split;

pub use split::{KeyHash, SplitKeys};

/// Keys of a pattern are `key-N`: N is the key's index.
const KEY_PREFIX: &[u8] = b"key-";

/// One key's last acknowledged write: where it is, and whether it was a tombstone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latest {
    /// -1: never acknowledged.
    pub offset: i64,
    pub partition: i32,
    pub tombstone: bool,
}

const NEVER: Latest = Latest {
    offset: -1,
    partition: -1,
    tombstone: false,
};

/// Every key's last acknowledged write, by key index, as one producer's delivery reports told
/// it; producers' tables absorb each other. A key's records all go to one partition, so its
/// highest offset is its last write, whichever producer wrote it.
#[derive(Clone, Debug)]
pub struct KeyTable {
    /// A fixed key is the one key, index 0.
    fixed: Option<Vec<u8>>,
    latest: Vec<Latest>,
}

impl KeyTable {
    /// The table for a key pattern, sized for its keys (a sequence grows with the run); None
    /// for keys it cannot tell apart (none, a schema's).
    pub fn new(spec: &KeySpec) -> Option<KeyTable> {
        let (fixed, n) = match spec {
            KeySpec::Uniform(n) | KeySpec::Zipf { n, .. } => (None, *n as usize),
            KeySpec::Sequence => (None, 0),
            KeySpec::Fixed(s) => (Some(s.as_bytes().to_vec()), 1),
            KeySpec::None | KeySpec::Schema(_) => return None,
        };
        Some(KeyTable {
            fixed,
            latest: vec![NEVER; n],
        })
    }

    /// The index of a key the pattern writes; None for any other key.
    pub fn index(&self, key: &[u8]) -> Option<usize> {
        if let Some(f) = &self.fixed {
            return (key == f.as_slice()).then_some(0);
        }
        let digits = key.strip_prefix(KEY_PREFIX)?;
        if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        // No leading zeros: `key-007` is not a key the pattern writes.
        if digits.len() > 1 && digits[0] == b'0' {
            return None;
        }
        Some(
            digits
                .iter()
                .fold(0usize, |n, d| n * 10 + usize::from(d - b'0')),
        )
    }

    /// An acknowledged write of `key` at `partition`/`offset`. Per delivery report: no
    /// allocation, except a sequence's table growing (amortised).
    #[inline]
    pub fn note(&mut self, key: Option<&[u8]>, partition: i32, offset: i64, tombstone: bool) {
        let Some(i) = key.and_then(|k| self.index(k)) else {
            return;
        };
        if i >= self.latest.len() {
            if self.fixed.is_some() {
                return;
            }
            self.latest
                .resize((i + 1).max(self.latest.len() * 2), NEVER);
        }
        let l = &mut self.latest[i];
        if offset > l.offset {
            *l = Latest {
                offset,
                partition,
                tombstone,
            };
        }
    }

    /// Another producer's table: per key, the later write.
    pub fn absorb(&mut self, other: &KeyTable) {
        if other.latest.len() > self.latest.len() {
            self.latest.resize(other.latest.len(), NEVER);
        }
        for (l, o) in self.latest.iter_mut().zip(&other.latest) {
            if o.offset > l.offset {
                *l = *o;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.latest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.latest.iter().all(|l| l.offset < 0)
    }

    pub fn latest(&self) -> &[Latest] {
        &self.latest
    }

    /// The key of index `i`, as the pattern writes it.
    pub fn key(&self, i: usize) -> Vec<u8> {
        match &self.fixed {
            Some(f) => f.clone(),
            None => format!("key-{i}").into_bytes(),
        }
    }
}

/// What one read of the whole topic found, by key index: where the latest value and the
/// latest tombstone of every key are (partition, offset; offset -1: none), and the records of
/// keys kafkabench did not write.
#[derive(Clone, Debug, Default)]
pub struct TopicRead {
    pub value_at: Vec<(i32, i64)>,
    pub tombstone_at: Vec<(i32, i64)>,
    /// Records of keys the pattern does not write (written behind kafkabench's back).
    pub foreign: u64,
    pub records: u64,
    /// Records of a key read after another of the same key: the cleaner has not been through
    /// them yet (or the key is in two partitions, which no cleaner mends).
    pub repeated: u64,
    /// Per key index, the partition it was first read in (-1: not read).
    home: Vec<i32>,
    /// The keys read in more than one partition, with every partition they were read in.
    pub split: BTreeMap<usize, BTreeSet<i32>>,
}

impl TopicRead {
    pub fn new(keys: usize) -> TopicRead {
        TopicRead {
            value_at: vec![(-1, -1); keys],
            tombstone_at: vec![(-1, -1); keys],
            home: vec![-1; keys],
            ..TopicRead::default()
        }
    }

    /// A record read: key index `i` (None: not kafkabench's), at `partition`/`offset`.
    pub fn record(&mut self, i: Option<usize>, partition: i32, offset: i64, tombstone: bool) {
        self.records += 1;
        let Some(i) = i.filter(|i| *i < self.value_at.len()) else {
            self.foreign += 1;
            return;
        };
        // A cleaned log holds one record of a key: its value or its tombstone.
        if self.value_at[i].1 >= 0 || self.tombstone_at[i].1 >= 0 {
            self.repeated += 1;
        }
        match self.home[i] {
            -1 => self.home[i] = partition,
            h if h != partition => {
                self.split
                    .entry(i)
                    .or_insert_with(|| [h].into())
                    .insert(partition);
            }
            _ => {}
        }
        let at = if tombstone {
            &mut self.tombstone_at[i]
        } else {
            &mut self.value_at[i]
        };
        if offset > at.1 {
            *at = (partition, offset);
        }
    }
}

/// The check's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompactionFigures {
    /// Distinct keys written (acknowledged).
    pub keys: u64,
    /// Of those, the keys whose last write was a value: each must survive with it.
    pub live: u64,
    /// Keys read back with a value.
    pub surviving: u64,
    /// Live keys whose last value is not the value the topic holds for them (another value,
    /// or none).
    pub lost: u64,
    /// Of `lost`, the live keys the topic holds no value of at all.
    pub missing: u64,
    /// Keys whose last write was a tombstone, read back with a value.
    pub resurrected: u64,
    /// Keys whose last write was a tombstone, whose tombstone is still there.
    pub tombstones_left: u64,
    /// Records of keys kafkabench did not write.
    pub foreign: u64,
    /// Records the topic held after the check.
    pub records: u64,
    /// On-disk bytes before the check and after it (None when they could not be asked).
    pub bytes_before: Option<u64>,
    pub bytes_after: Option<u64>,
    /// How long the cleaner took: from the roll until a read found every key once.
    pub cleaner_secs: Option<f64>,
    /// Whether the cleaner finished within the bound (tombstones removed too).
    pub finished: bool,
    /// Keys found in more than one partition (another writer placed them with another
    /// partitioner): the check stops at once, and leaves them out of `lost`, `missing` and
    /// `resurrected`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub split_keys: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl CompactionFigures {
    /// Compares what was written last with what was read.
    pub fn derive(table: &KeyTable, read: &TopicRead) -> CompactionFigures {
        let mut f = CompactionFigures {
            foreign: read.foreign,
            records: read.records,
            ..CompactionFigures::default()
        };
        f.split_keys = read.split.len() as u64;
        for (i, l) in table.latest().iter().enumerate() {
            let none = (-1, -1);
            let value_at = read.value_at.get(i).copied().unwrap_or(none);
            let tombstone_at = read.tombstone_at.get(i).copied().unwrap_or(none);
            let written = (l.partition, l.offset);
            if value_at.1 >= 0 {
                f.surviving += 1;
            }
            if l.offset < 0 {
                continue;
            }
            f.keys += 1;
            // Two partitions' records of a key have no order: it is neither kept nor lost.
            if read.split.contains_key(&i) {
                continue;
            }
            if l.tombstone {
                // An older value the tombstone still follows is deleted to a reader, cleaned or
                // not; a value after it, or one left once it is gone, came back.
                let shadowed = tombstone_at == written && value_at.1 < written.1;
                f.resurrected += u64::from(value_at.1 >= 0 && !shadowed);
                f.tombstones_left += u64::from(tombstone_at == written);
            } else {
                f.live += 1;
                f.lost += u64::from(value_at != written);
                f.missing += u64::from(value_at.1 < 0);
            }
        }
        f
    }

    /// Log bytes before the check over bytes after it.
    pub fn ratio(&self) -> Option<f64> {
        match (self.bytes_before, self.bytes_after) {
            (Some(b), Some(a)) if a > 0 => Some(b as f64 / a as f64),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(n: u64) -> KeyTable {
        KeyTable::new(&KeySpec::Uniform(n)).unwrap()
    }

    #[test]
    fn a_key_is_read_back_only_in_the_patterns_own_spelling() {
        let t = table(10);
        assert_eq!(t.index(b"key-7"), Some(7));
        assert_eq!(t.index(b"key-0"), Some(0));
        for other in [
            &b"key-"[..],
            b"key-07",
            b"key-1x",
            b"kex-1",
            b"",
            b"key-99999999999999999999",
        ] {
            assert_eq!(t.index(other), None, "{other:?}");
        }
        let f = KeyTable::new(&KeySpec::Fixed("store-42".into())).unwrap();
        assert_eq!((f.index(b"store-42"), f.index(b"key-0")), (Some(0), None));
        assert!(KeyTable::new(&KeySpec::None).is_none());
    }

    #[test]
    fn the_last_write_of_a_key_is_its_highest_offset_whichever_producer_wrote_it() {
        let (mut a, mut b) = (table(4), table(4));
        a.note(Some(b"key-1"), 0, 10, false);
        b.note(Some(b"key-1"), 0, 12, true);
        a.note(Some(b"key-1"), 0, 11, false);
        b.note(Some(b"key-2"), 1, 3, false);
        a.note(None, 0, 99, false);
        a.absorb(&b);
        let l = a.latest();
        assert_eq!((l[1].offset, l[1].tombstone), (12, true));
        assert_eq!(l[2].offset, 3);
        assert_eq!(l[0].offset, -1);
        let mut s = KeyTable::new(&KeySpec::Sequence).unwrap();
        s.note(Some(b"key-5"), 0, 5, false);
        assert_eq!(s.latest()[5].offset, 5);
    }

    #[test]
    fn each_figure_counts_what_it_names() {
        // Keys 0..6: 0 kept, 1 lost to an older value, 2 missing, 3 deleted and gone,
        // 4 deleted with its tombstone left, 5 deleted and resurrected; 6 never written.
        let mut t = table(7);
        for (k, off, tomb) in [
            (0, 10, false),
            (1, 11, false),
            (2, 12, false),
            (3, 13, true),
            (4, 14, true),
            (5, 15, true),
        ] {
            t.note(Some(format!("key-{k}").as_bytes()), 0, off, tomb);
        }
        let mut r = TopicRead::new(t.len());
        r.record(Some(0), 0, 10, false);
        r.record(Some(1), 0, 20, false);
        r.record(Some(4), 0, 14, true);
        r.record(Some(5), 0, 21, false);
        r.record(None, 0, 22, false);
        let f = CompactionFigures::derive(&t, &r);
        assert_eq!(
            (f.keys, f.live, f.surviving, f.lost, f.missing),
            (6, 3, 3, 2, 1)
        );
        assert_eq!(
            (f.resurrected, f.tombstones_left, f.foreign, f.records),
            (1, 1, 1, 5)
        );
        assert_eq!(r.repeated, 0);
    }

    #[test]
    fn a_value_at_the_same_offset_of_another_partition_is_another_record() {
        let mut t = table(1);
        t.note(Some(b"key-0"), 2, 10, false);
        let mut r = TopicRead::new(1);
        r.record(Some(0), 1, 10, false);
        let f = CompactionFigures::derive(&t, &r);
        assert_eq!((f.lost, f.missing), (1, 0));
        // Read again, the key is repeated: not yet cleaned.
        r.record(Some(0), 2, 10, false);
        assert_eq!(r.repeated, 1);
    }
}
