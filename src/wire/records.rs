//! A lean reader of record batches (magic v2): it walks records where they lie, in the
//! response or in one reused decompression buffer, so consuming allocates nothing per record
//! (kafka-protocol's decoder builds a struct and copies per record). Batches come compressed
//! with any codec. Every length is checked: a garbled batch is an error, never a panic. Nothing
//! is reserved from a count read off the wire (kafka-protocol's `RecordBatchDecoder` reserves
//! the claimed record count; the client does not use it): a record count is only a loop bound,
//! each record's lengths are checked against the bytes left, and decompression stops at
//! `max_decompressed`.

use std::io::Read;

/// One record, borrowed from the batch it came in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rec<'a> {
    pub offset: i64,
    pub timestamp_ms: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The headers as they are encoded (count, then key/value pairs), read on demand.
    pub headers: &'a [u8],
}

/// Reads batches; keeps its decompression buffer (and zstd context) between calls.
pub(crate) struct BatchReader {
    scratch: Vec<u8>,
    /// Made once: a fresh zstd context per batch allocates (and faults in) its whole window,
    /// which cost more than the decompression itself.
    zstd: Option<zstd::stream::raw::Decoder<'static>>,
    /// Bound on one batch's decompressed size (a decompression bomb is an error).
    max_decompressed: usize,
    pub(crate) check_crc: bool,
}

const HEADER: usize = 61;

impl BatchReader {
    pub(crate) fn new(max_decompressed: usize) -> BatchReader {
        BatchReader {
            scratch: Vec::new(),
            zstd: None,
            max_decompressed,
            check_crc: true,
        }
    }

    /// Call `f` for every data record in `data` (control batches are skipped, so their offsets
    /// read as gaps). A batch cut short at the end (the broker's size limit) ends the walk.
    pub(crate) fn for_each(
        &mut self,
        mut data: &[u8],
        mut f: impl FnMut(&Rec<'_>),
    ) -> Result<(), String> {
        while data.len() >= 12 {
            let base_offset = be_i64(data, 0);
            let batch_len = be_i32(data, 8);
            if batch_len < (HEADER - 12) as i32 {
                return Err(format!(
                    "batch at offset {base_offset} has length {batch_len}"
                ));
            }
            let total = 12 + batch_len as usize;
            if data.len() < total {
                break;
            }
            let (batch, rest) = data.split_at(total);
            data = rest;
            let magic = batch[16] as i8;
            if magic != 2 {
                return Err(format!(
                    "batch at offset {base_offset} is message format v{magic}; only v2 is read"
                ));
            }
            if self.check_crc {
                let want = u32::from_be_bytes([batch[17], batch[18], batch[19], batch[20]]);
                let got = crc32c::crc32c(&batch[21..]);
                if want != got {
                    return Err(format!(
                        "batch at offset {base_offset} fails its CRC ({got:08x}, expected {want:08x})"
                    ));
                }
            }
            let attributes = be_i16(batch, 21);
            if attributes & 0x20 != 0 {
                continue; // control batch (transaction marker): no data records
            }
            let log_append_time = attributes & 0x08 != 0;
            let base_ts = be_i64(batch, 27);
            let max_ts = be_i64(batch, 35);
            let count = be_i32(batch, 57);
            if count < 0 {
                return Err(format!(
                    "batch at offset {base_offset} counts {count} records"
                ));
            }
            let body = &batch[HEADER..];
            let records: &[u8] = match attributes & 0x07 {
                0 => body,
                codec => {
                    self.decompress(codec, body)
                        .map_err(|e| format!("batch at offset {base_offset}: {e}"))?;
                    &self.scratch
                }
            };
            let mut c = Cursor { b: records, at: 0 };
            for _ in 0..count {
                let rec = read_record(&mut c, base_offset, base_ts, max_ts, log_append_time)
                    .ok_or_else(|| {
                        format!("batch at offset {base_offset} holds a garbled record")
                    })?;
                f(&rec);
            }
        }
        Ok(())
    }

    fn decompress(&mut self, codec: i16, body: &[u8]) -> Result<(), String> {
        self.scratch.clear();
        let limit = self.max_decompressed as u64 + 1;
        let read = match codec {
            1 => flate2::read::GzDecoder::new(body)
                .take(limit)
                .read_to_end(&mut self.scratch)
                .map(drop)
                .map_err(|e| format!("gzip: {e}")),
            2 => return snappy(body, &mut self.scratch, self.max_decompressed),
            3 => lz4::Decoder::new(body)
                .and_then(|d| d.take(limit).read_to_end(&mut self.scratch))
                .map(drop)
                .map_err(|e| format!("lz4: {e}")),
            4 => self.zstd(body).map_err(|e| format!("zstd: {e}")),
            c => return Err(format!("unknown compression codec {c}")),
        };
        read?;
        if self.scratch.len() > self.max_decompressed {
            return Err(format!(
                "decompresses to more than {} bytes",
                self.max_decompressed
            ));
        }
        Ok(())
    }
}

impl std::fmt::Debug for BatchReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchReader")
            .field("max_decompressed", &self.max_decompressed)
            .finish()
    }
}

impl BatchReader {
    /// Decompress zstd frames (one or more) into `scratch` with the reused context.
    fn zstd(&mut self, body: &[u8]) -> std::io::Result<()> {
        use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};
        let d = match self.zstd.take() {
            Some(d) => d,
            None => Decoder::new()?,
        };
        let d = self.zstd.insert(d);
        d.reinit()?;
        let mut input = InBuffer::around(body);
        loop {
            if self.scratch.len() > self.max_decompressed {
                return Ok(()); // the caller reports the bound
            }
            if self.scratch.capacity() - self.scratch.len() < 32 << 10 {
                self.scratch.reserve(256 << 10);
            }
            let (before_in, before_out) = (input.pos(), self.scratch.len());
            let pos = self.scratch.len();
            let hint = d.run(
                &mut input,
                &mut OutBuffer::around_pos(&mut self.scratch, pos),
            )?;
            if hint == 0 && input.pos() == body.len() {
                return Ok(());
            }
            if input.pos() == before_in && self.scratch.len() == before_out {
                let room = self.scratch.capacity() > self.scratch.len();
                if room {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the frame is cut short",
                    ));
                }
            }
        }
    }
}

/// Snappy as Kafka's Java client writes it (xerial framing: a magic header, then blocks with
/// a 4-byte length each) or raw, as librdkafka may.
fn snappy(body: &[u8], out: &mut Vec<u8>, max: usize) -> Result<(), String> {
    const MAGIC: &[u8] = b"\x82SNAPPY\x00";
    let block = |b: &[u8], out: &mut Vec<u8>| -> Result<(), String> {
        let n = snap::raw::decompress_len(b).map_err(|e| format!("snappy: {e}"))?;
        let at = out.len();
        if at + n > max {
            return Err(format!("decompresses to more than {max} bytes"));
        }
        out.resize(at + n, 0);
        snap::raw::Decoder::new()
            .decompress(b, &mut out[at..])
            .map_err(|e| format!("snappy: {e}"))?;
        Ok(())
    };
    if body.len() >= 16 && &body[..8] == MAGIC {
        let mut rest = &body[16..];
        while !rest.is_empty() {
            if rest.len() < 4 {
                return Err("snappy: a block length is cut short".to_string());
            }
            let n = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            if rest.len() - 4 < n {
                return Err("snappy: a block is cut short".to_string());
            }
            block(&rest[4..4 + n], out)?;
            rest = &rest[4 + n..];
        }
        Ok(())
    } else {
        block(body, out)
    }
}

fn read_record<'a>(
    c: &mut Cursor<'a>,
    base_offset: i64,
    base_ts: i64,
    max_ts: i64,
    log_append_time: bool,
) -> Option<Rec<'a>> {
    let len = c.varint()?;
    if len < 0 {
        return None;
    }
    let end = c.at.checked_add(len as usize)?;
    if end > c.b.len() {
        return None;
    }
    let mut r = Cursor {
        b: &c.b[..end],
        at: c.at,
    };
    c.at = end;
    r.bytes(1)?; // attributes: unused in v2
    let ts_delta = r.varlong()?;
    let off_delta = r.varint()?;
    let key = r.nullable()?;
    let value = r.nullable()?;
    let headers = &r.b[r.at..];
    Some(Rec {
        offset: base_offset.wrapping_add(off_delta as i64),
        timestamp_ms: if log_append_time {
            max_ts
        } else {
            base_ts.wrapping_add(ts_delta)
        },
        key,
        value,
        headers,
    })
}

/// The value of header `name` in `headers` (as `Rec::headers` holds them); the first match.
/// A garbled header section reads as no header.
pub(crate) fn header<'a>(headers: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let mut c = Cursor { b: headers, at: 0 };
    let n = c.varint()?;
    for _ in 0..n.max(0) {
        let k = c.nullable()?;
        let v = c.nullable()?;
        if k == Some(name) {
            return v;
        }
    }
    None
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    /// Bytes with a varint length, -1 for null.
    fn nullable(&mut self) -> Option<Option<&'a [u8]>> {
        match self.varint()? {
            -1 => Some(None),
            n if n < 0 => None,
            n => self.bytes(n as usize).map(Some),
        }
    }

    fn varint(&mut self) -> Option<i32> {
        let v = self.varlong()?;
        i32::try_from(v).ok()
    }

    /// Zigzag-encoded variable-length integer, at most 10 bytes.
    fn varlong(&mut self) -> Option<i64> {
        let mut raw: u64 = 0;
        for i in 0..10 {
            let b = *self.b.get(self.at)?;
            self.at += 1;
            raw |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Some((raw >> 1) as i64 ^ -((raw & 1) as i64));
            }
        }
        None
    }
}

fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(a)
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}
