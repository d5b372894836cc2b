//! Bounds on what a response can make us allocate, checked in its bytes before kafka-protocol
//! decodes them.
//!
//! kafka-protocol 0.18's generated decoders trust the lengths they read: an array of `n`
//! elements (an `INT32`, or a compact array's unsigned varint `n + 1`) becomes
//! `Vec::with_capacity(n)` before a single element is read, so five hostile bytes can ask for
//! 2^32 elements of a 96-byte struct (384 GiB) and the process aborts: an allocation failure is
//! not a panic that `catch_unwind` could stop. Strings and bytes are slices of the frame,
//! bounds-checked by the crate (`try_get_bytes`), so they allocate nothing; unknown tagged
//! fields (a varint count, then tag, size and bytes) each add a `BTreeMap` entry; a known
//! tagged field is decoded in place, whatever size it claims.
//!
//! Chosen: a walker that reads a response's bytes the way the crate's decoder of that type and
//! version will, and refuses it before the crate sees it when
//! - an array claims more elements than there are bytes left (every element takes at least
//!   one), a string or bytes more than the bytes left, or a tagged-field section more fields
//!   than half the bytes left (tag and size take two at least);
//! - the Vecs and maps the decoder would reserve, counted from the crate's own type sizes
//!   (`size_of`) as the walk finds their lengths, pass [`MAX_DECODED`];
//! - anything is cut short, or a known tagged field does not fill the size it claims.
//!
//! Because the walk reaches every element before the decoder runs, each `with_capacity` the
//! decoder then makes is for elements that are there: what decoding allocates is at most what
//! the walk counted (the fuzz test measures it with a counting allocator). With the frame
//! capped by `Limits::max_response` (64 MiB) before it is read, a response costs at most its
//! frame plus `MAX_DECODED`.
//!
//! Why not the alternatives: a `[patch]`ed fork means carrying the crate's 3.7 MB of generated
//! code, and the fix proposed upstream (a count may not pass the bytes left; open pull
//! requests) still lets a 64 MiB frame claim 64 Mi elements and reserve 64 Mi × a struct's size
//! before reading the first; decoders of our own would duplicate the crate for fourteen response
//! types. The walker is one function per response type (`responses.rs`) that mirrors the
//! crate's decode functions, and `Conn` only decodes types that have one
//! (`R::Response: Bounded`), so a new request cannot skip it. A test walks every version of
//! every type, encoded by the crate, to its last byte: a walk that drifts from the decoder
//! fails it.

mod responses;

use bytes::Bytes;

/// The most the Vecs and maps of one decoded response may take (beyond its frame, whose
/// strings and bytes it borrows). A real answer to what kafkabench asks takes far less: a
/// broker's DescribeLogDirs for 10,000 replicas reserves about 0.5 MB.
pub(crate) const MAX_DECODED: usize = 64 << 20;

/// What one unknown tagged field may cost in its `BTreeMap<i32, Bytes>`: a whole B-tree leaf
/// (11 keys and values and the node's header), as a lone entry takes.
pub(crate) const TAG_ENTRY: usize =
    11 * (std::mem::size_of::<i32>() + std::mem::size_of::<Bytes>()) + 16;

/// A response type whose bytes can be walked, for each version its decoder accepts.
pub(crate) trait Bounded {
    fn walk(w: &mut Walk<'_>, version: i16) -> Step;
}

pub(crate) type Step = Result<(), String>;

/// How a length is encoded (recorded where it sits, for the fuzz test to aim at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prefix {
    I16,
    I32,
    UVarint,
}

/// A cursor over a response's bytes that reads lengths as kafka-protocol reads them.
pub(crate) struct Walk<'a> {
    b: &'a [u8],
    at: usize,
    /// Bytes the decoder will reserve, as found so far.
    pub(crate) heap: usize,
    max_heap: usize,
    /// Every length prefix read, by offset, when recording (the fuzz test's aim).
    #[cfg(test)]
    pub(crate) prefixes: Option<Vec<(usize, Prefix)>>,
}

/// Check the `header_version` response header and then a `T` of `version` in `body` (a frame
/// after its length); the bytes the decoder will reserve for them, or why not.
pub(crate) fn check<T: Bounded>(
    body: &[u8],
    header_version: i16,
    version: i16,
) -> Result<usize, String> {
    let mut w = Walk::new(body, MAX_DECODED);
    w.header(header_version)?;
    T::walk(&mut w, version)?;
    Ok(w.heap)
}

impl<'a> Walk<'a> {
    pub(crate) fn new(b: &'a [u8], max_heap: usize) -> Walk<'a> {
        Walk {
            b,
            at: 0,
            heap: 0,
            max_heap,
            #[cfg(test)]
            prefixes: None,
        }
    }

    /// A walk that records where each length prefix is.
    #[cfg(test)]
    pub(crate) fn recording(b: &'a [u8], max_heap: usize) -> Walk<'a> {
        Walk {
            prefixes: Some(Vec::new()),
            ..Walk::new(b, max_heap)
        }
    }

    /// How far the walk has read.
    #[cfg(test)]
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    fn left(&self) -> usize {
        self.b.len() - self.at
    }

    /// The response header: a correlation id, then (v1) tagged fields.
    pub(crate) fn header(&mut self, version: i16) -> Step {
        self.i32()?;
        self.tags(version >= 1)
    }

    fn skip(&mut self, n: usize, what: &str) -> Step {
        if n > self.left() {
            return Err(format!(
                "{what} of {n} bytes at byte {} with {} left",
                self.at,
                self.left()
            ));
        }
        self.at += n;
        Ok(())
    }

    fn mark(&mut self, prefix: Prefix) {
        #[cfg(test)]
        if let Some(p) = &mut self.prefixes {
            p.push((self.at, prefix));
        }
        #[cfg(not(test))]
        let _ = prefix;
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let at = self.at;
        self.skip(N, "a field")?;
        let mut a = [0; N];
        a.copy_from_slice(&self.b[at..at + N]);
        Ok(a)
    }

    pub(crate) fn boolean(&mut self) -> Step {
        self.skip(1, "a boolean")
    }
    pub(crate) fn i8(&mut self) -> Result<i8, String> {
        Ok(self.take::<1>()?[0] as i8)
    }
    pub(crate) fn i16(&mut self) -> Step {
        self.skip(2, "an INT16")
    }
    pub(crate) fn i32(&mut self) -> Step {
        self.skip(4, "an INT32")
    }
    pub(crate) fn i64(&mut self) -> Step {
        self.skip(8, "an INT64")
    }
    pub(crate) fn uuid(&mut self) -> Step {
        self.skip(16, "a UUID")
    }

    /// An unsigned varint exactly as kafka-protocol reads one: at most five bytes, the fifth
    /// ending it whatever its top bit, high bits past 32 dropped.
    fn uvarint(&mut self) -> Result<u32, String> {
        let mut v = 0u32;
        for i in 0..5 {
            let b = u32::from(self.take::<1>()?[0]);
            v |= (b & 0x7f) << (i * 7);
            if b < 0x80 {
                break;
            }
        }
        Ok(v)
    }

    /// A length `n` (or null) for `what`, then `n` bytes: the crate borrows them.
    fn prefixed(&mut self, compact: bool, wide: bool, what: &str) -> Step {
        let n = if compact {
            self.mark(Prefix::UVarint);
            match self.uvarint()? {
                0 => return Ok(()), // null
                n => (n - 1) as usize,
            }
        } else {
            let n = if wide {
                self.mark(Prefix::I32);
                i32::from_be_bytes(self.take()?)
            } else {
                self.mark(Prefix::I16);
                i32::from(i16::from_be_bytes(self.take()?))
            };
            match n {
                -1 => return Ok(()),
                n if n < 0 => return Err(format!("{what} of length {n} at byte {}", self.at)),
                n => n as usize,
            }
        };
        self.skip(n, what)
    }

    /// A STRING (INT16 length) or COMPACT_STRING, nullable or not.
    pub(crate) fn string(&mut self, compact: bool) -> Step {
        self.prefixed(compact, false, "a string")
    }

    /// BYTES (INT32 length) or COMPACT_BYTES, nullable or not.
    pub(crate) fn bytes(&mut self, compact: bool) -> Step {
        self.prefixed(compact, true, "bytes")
    }

    /// Reserve `bytes` on the decoder's behalf, within the cap; `what` names them (only
    /// formatted on refusal: the walk allocates nothing while it accepts).
    fn reserve(&mut self, bytes: usize, what: impl FnOnce() -> String) -> Step {
        self.heap = self.heap.saturating_add(bytes);
        if self.heap > self.max_heap {
            return Err(format!(
                "{} would take the decoded response past {} bytes",
                what(),
                self.max_heap
            ));
        }
        Ok(())
    }

    /// An ARRAY (INT32 count) or COMPACT_ARRAY of elements of `size` bytes in memory, each
    /// walked by `each`; nullable or not.
    pub(crate) fn array(
        &mut self,
        compact: bool,
        size: usize,
        mut each: impl FnMut(&mut Self) -> Step,
    ) -> Step {
        let start = self.at;
        let n = if compact {
            self.mark(Prefix::UVarint);
            match self.uvarint()? {
                0 => return Ok(()),
                n => (n - 1) as usize,
            }
        } else {
            self.mark(Prefix::I32);
            match i32::from_be_bytes(self.take()?) {
                -1 => return Ok(()),
                n if n < 0 => return Err(format!("an array of {n} elements at byte {start}")),
                n => n as usize,
            }
        };
        if n > self.left() {
            return Err(format!(
                "an array of {n} elements at byte {start} with {} bytes left",
                self.left()
            ));
        }
        self.reserve(n.saturating_mul(size), || {
            format!("an array of {n} elements at byte {start}")
        })?;
        for _ in 0..n {
            each(self)?;
        }
        Ok(())
    }

    /// An array of INT32.
    pub(crate) fn ints(&mut self, compact: bool) -> Step {
        self.array(compact, 4, Walk::i32)
    }

    /// An optional struct: an INT8, 1 when the struct follows.
    pub(crate) fn option(&mut self, each: impl FnOnce(&mut Self) -> Step) -> Step {
        if self.i8()? == 1 {
            each(self)?;
        }
        Ok(())
    }

    /// A tagged-field section (when `flexible`), none of whose tags the decoder knows.
    pub(crate) fn tags(&mut self, flexible: bool) -> Step {
        self.tags_known(flexible, |_, _| None)
    }

    /// A tagged-field section whose known tags `known` walks (Some), as the decoder reads them:
    /// in place. Each unknown one costs the decoder a map entry.
    pub(crate) fn tags_known(
        &mut self,
        flexible: bool,
        mut known: impl FnMut(u32, &mut Self) -> Option<Step>,
    ) -> Step {
        if !flexible {
            return Ok(());
        }
        let start = self.at;
        self.mark(Prefix::UVarint);
        let n = self.uvarint()? as usize;
        if n > self.left() / 2 {
            return Err(format!(
                "{n} tagged fields at byte {start} with {} bytes left",
                self.left()
            ));
        }
        for _ in 0..n {
            let tag = self.uvarint()?;
            self.mark(Prefix::UVarint);
            let size = self.uvarint()? as usize;
            let from = self.at;
            match known(tag, self) {
                Some(r) => {
                    r?;
                    if self.at - from != size {
                        return Err(format!(
                            "tagged field {tag} at byte {from} claims {size} bytes and holds {}",
                            self.at - from
                        ));
                    }
                }
                None => {
                    self.skip(size, "a tagged field")?;
                    self.reserve(TAG_ENTRY, || format!("tagged field {tag} at byte {from}"))?;
                }
            }
        }
        Ok(())
    }
}
