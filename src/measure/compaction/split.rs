//! Keys found in more than one partition of a compacted topic, and the partitioners behind
//! them.
//!
//! A key's records share a partition only while every writer places keys the same way:
//! librdkafka's default (`consistent_random`) hashes a key with CRC32, the Java client and
//! librdkafka's `murmur2_random` with murmur2. A key written by both lives in two partitions,
//! and no cleaner merges two partitions: the compaction check cannot finish, so it says so at
//! once and names the partitioners, found by placing every split key with each known hash.

use super::{KeyTable, TopicRead};

/// How a client places a keyed record, as librdkafka and the Java client hash keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyHash {
    Crc32,
    Murmur2,
    Fnv1a,
}

impl KeyHash {
    pub const ALL: [KeyHash; 3] = [KeyHash::Crc32, KeyHash::Murmur2, KeyHash::Fnv1a];

    /// The partition of `key` among `partitions`.
    pub fn partition(self, key: &[u8], partitions: i32) -> i32 {
        let n = partitions.max(1) as u32;
        let p = match self {
            KeyHash::Crc32 => crc32(key) % n,
            KeyHash::Murmur2 => (murmur2(key) as u32 & 0x7fff_ffff) % n,
            KeyHash::Fnv1a => fnv1a(key) % n,
        };
        p as i32
    }

    /// Which clients place keys this way.
    pub fn words(self) -> &'static str {
        match self {
            KeyHash::Crc32 => "CRC32 (librdkafka's default partitioner, `consistent_random`)",
            KeyHash::Murmur2 => {
                "murmur2 (the Java client's default; librdkafka's `murmur2_random`)"
            }
            KeyHash::Fnv1a => "FNV-1a (librdkafka's `fnv1a_random`)",
        }
    }
}

/// The keys of one read found in more than one partition.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitKeys {
    pub keys: u64,
    /// The first few, as `key-3 in partitions 0 and 2`.
    pub examples: Vec<String>,
    /// The hash that places every split key where kafkabench last wrote it, and the one that
    /// places all their other records; None when no known hash does.
    pub ours: Option<KeyHash>,
    pub theirs: Option<KeyHash>,
}

/// How many split keys a note names.
const EXAMPLES: usize = 3;

impl SplitKeys {
    /// The split keys of `read`, against the last writes of `table`; None when every key is in
    /// one partition.
    pub fn of(table: &KeyTable, read: &TopicRead, partitions: i32) -> Option<SplitKeys> {
        if read.split.is_empty() {
            return None;
        }
        let latest = table.latest();
        let mut ours = KeyHash::ALL.to_vec();
        let mut theirs = KeyHash::ALL.to_vec();
        let mut examples = Vec::new();
        for (i, parts) in &read.split {
            let key = table.key(*i);
            // -1: a key only the other writer wrote.
            let mine = latest
                .get(*i)
                .filter(|l| l.offset >= 0)
                .map_or(-1, |l| l.partition);
            if mine >= 0 {
                ours.retain(|h| h.partition(&key, partitions) == mine);
            }
            theirs.retain(|h| {
                let p = h.partition(&key, partitions);
                parts.iter().all(|q| *q == mine || *q == p)
            });
            if examples.len() < EXAMPLES {
                let list: Vec<String> = parts.iter().map(i32::to_string).collect();
                let (init, last) = list.split_at(list.len() - 1);
                examples.push(format!(
                    "{} in partitions {} and {}",
                    String::from_utf8_lossy(&key),
                    init.join(", "),
                    last[0]
                ));
            }
        }
        let first = |v: Vec<KeyHash>, not: Option<KeyHash>| v.into_iter().find(|h| Some(*h) != not);
        let ours = first(ours, None);
        Some(SplitKeys {
            keys: read.split.len() as u64,
            examples,
            ours,
            theirs: first(theirs, ours),
        })
    }

    /// What the note says of them.
    pub fn words(&self) -> String {
        let more = if self.keys as usize > self.examples.len() {
            ", …"
        } else {
            ""
        };
        let placed = match (self.ours, self.theirs) {
            (Some(o), Some(t)) => format!(
                "kafkabench wrote them where {} places keys, another writer where {} does",
                o.words(),
                t.words()
            ),
            (Some(o), None) => format!(
                "kafkabench wrote them where {} places keys, another writer elsewhere",
                o.words()
            ),
            (None, _) => {
                "kafkabench's own writes placed them by no key hash (a `random` partitioner?)"
                    .to_string()
            }
        };
        format!(
            "{} key{} in more than one partition ({}{more}): {placed}; no cleaner merges two \
             partitions, so the check stopped at its first read, and these keys are left out \
             of lost, missing and resurrected",
            self.keys,
            if self.keys == 1 { " is" } else { "s are" },
            self.examples.join(", ")
        )
    }
}

/// Kafka's `Utils.murmur2`, as the Java client's default partitioner hashes a key.
fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    let mut h = SEED ^ data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, b) in tail.iter().enumerate().rev() {
            h ^= u32::from(*b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// CRC-32 (IEEE, reflected), as librdkafka's `consistent` partitioners hash a key.
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for b in data {
        c ^= u32::from(*b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// 32-bit FNV-1a, as librdkafka's `fnv1a` partitioners hash a key.
fn fnv1a(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::KeySpec;

    #[test]
    fn the_hashes_match_their_clients() {
        // Kafka's UtilsTest.testMurmur2.
        for (key, want) in [
            (&b"21"[..], -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            (b"abc", 479_470_107),
        ] {
            assert_eq!(murmur2(key), want, "{}", String::from_utf8_lossy(key));
        }
        // The CRC-32 check value, and FNV-1a's published vectors.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn split_keys_name_both_partitioners() {
        // 20 sequence keys over 3 partitions: kafkabench's where CRC32 puts them, and another
        // writer's record of each where murmur2 does.
        let n = 3;
        let mut table = KeyTable::new(&KeySpec::Sequence).unwrap();
        let mut read = TopicRead::new(20);
        for i in 0..20usize {
            let key = format!("key-{i}");
            let ours = KeyHash::Crc32.partition(key.as_bytes(), n);
            let theirs = KeyHash::Murmur2.partition(key.as_bytes(), n);
            table.note(Some(key.as_bytes()), ours, i as i64, false);
            read.record(Some(i), ours, i as i64, false);
            read.record(Some(i), theirs, 100 + i as i64, false);
        }
        let s = SplitKeys::of(&table, &read, n).expect("split keys");
        let both = (0..20)
            .filter(|i| {
                let k = format!("key-{i}");
                KeyHash::Crc32.partition(k.as_bytes(), n)
                    != KeyHash::Murmur2.partition(k.as_bytes(), n)
            })
            .count();
        assert_eq!(s.keys, both as u64);
        assert_eq!(
            (s.ours, s.theirs),
            (Some(KeyHash::Crc32), Some(KeyHash::Murmur2))
        );
        assert_eq!(s.examples.len(), 3);
        let w = s.words();
        assert!(w.contains("kafkabench wrote them where CRC32"), "{w}");
        assert!(w.contains("another writer where murmur2"), "{w}");
        // One partition per key: nothing to say.
        let mut one = TopicRead::new(1);
        one.record(Some(0), 1, 5, false);
        one.record(Some(0), 1, 6, false);
        assert_eq!(SplitKeys::of(&table, &one, n), None);
    }
}
