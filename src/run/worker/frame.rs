//! The worker protocol's frames (clients/PROTOCOL.md): a u32 length, a type letter, a body.
//!
//! Reading polls the pipe with a timeout, so the thread that drives a worker still sees the
//! run's stop flag while the worker is silent, and reads in large chunks, so a frame of
//! completion records costs one copy and no allocation.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};

/// The largest frame either side may send (a length past it is a broken worker, not a
/// reason to allocate).
pub(crate) const MAX_FRAME: usize = 16 << 20;

/// A JSON message (`"msg"` names it).
pub(crate) const JSON: u8 = b'J';
/// Completion records, 48 bytes each.
pub(crate) const COMPLETIONS: u8 = b'C';
/// Read records, 48 bytes each.
pub(crate) const READS: u8 = b'R';
/// Payload lines: (u32 length, bytes) each.
pub(crate) const LINES: u8 = b'L';

/// Frames read off a worker's standard output.
pub(crate) struct FrameReader {
    fd: RawFd,
    buf: Vec<u8>,
    /// Bytes of `buf` read and not yet handed out: `buf[start..end]`.
    start: usize,
    end: usize,
}

/// What one `next` found.
pub(crate) enum Next<'a> {
    Frame(u8, &'a [u8]),
    /// Nothing within the timeout.
    Idle,
    /// The worker closed its output (it exited, or is about to).
    Closed,
}

impl FrameReader {
    /// Reads `source`, which stays open as long as this reader is used.
    pub(crate) fn new(source: &impl AsRawFd) -> FrameReader {
        FrameReader {
            fd: source.as_raw_fd(),
            buf: vec![0; 1 << 18],
            start: 0,
            end: 0,
        }
    }

    /// The next frame, waiting at most `timeout_ms` for bytes when none is buffered.
    pub(crate) fn next(&mut self, timeout_ms: i32) -> io::Result<Next<'_>> {
        loop {
            if let Some((kind, from, to)) = self.buffered()? {
                self.start = to;
                return Ok(Next::Frame(kind, &self.buf[from..to]));
            }
            if !self.wait(timeout_ms)? {
                return Ok(Next::Idle);
            }
            if self.fill()? == 0 {
                return Ok(Next::Closed);
            }
        }
    }

    /// A whole frame in the buffer: its type and the body's range.
    fn buffered(&mut self) -> io::Result<Option<(u8, usize, usize)>> {
        let have = self.end - self.start;
        if have < 5 {
            return Ok(None);
        }
        let len_bytes: [u8; 4] = self.buf[self.start..self.start + 4]
            .try_into()
            .unwrap_or_default();
        let len = u32::from_le_bytes(len_bytes) as usize;
        if len == 0 || len > MAX_FRAME {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a frame of {len} bytes (at most {MAX_FRAME})"),
            ));
        }
        if have < 4 + len {
            // Make room for the whole frame: move what is buffered to the front, grow once.
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() < 4 + len {
                self.buf.resize(4 + len, 0);
            }
            return Ok(None);
        }
        let kind = self.buf[self.start + 4];
        Ok(Some((kind, self.start + 5, self.start + 4 + len)))
    }

    /// Whether bytes (or the end) can be read within `timeout_ms`.
    fn wait(&self, timeout_ms: i32) -> io::Result<bool> {
        let mut p = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd, for the length given.
            let n = unsafe { libc::poll(&mut p, 1, timeout_ms) };
            if n >= 0 {
                return Ok(n > 0);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    fn fill(&mut self) -> io::Result<usize> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        loop {
            let room = &mut self.buf[self.end..];
            // SAFETY: reads at most `room.len()` bytes into memory this reader owns.
            let n = unsafe { libc::read(self.fd, room.as_mut_ptr().cast(), room.len()) };
            if n >= 0 {
                self.end += n as usize;
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Writes one frame.
pub(crate) fn write(out: &mut impl Write, kind: u8, body: &[u8]) -> io::Result<()> {
    let len = u32::try_from(body.len() + 1)
        .ok()
        .filter(|l| *l as usize <= MAX_FRAME)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(&[kind])?;
    out.write_all(body)
}

/// Writes one JSON message.
pub(crate) fn write_json(out: &mut impl Write, msg: &serde_json::Value) -> io::Result<()> {
    write(out, JSON, msg.to_string().as_bytes())?;
    out.flush()
}

/// Writes lines in as many `L` frames as they need.
pub(crate) fn write_lines<'a>(
    out: &mut impl Write,
    lines: impl IntoIterator<Item = &'a [u8]>,
) -> io::Result<()> {
    let mut body = Vec::new();
    for line in lines {
        if body.len() + 4 + line.len() > MAX_FRAME - 1 && !body.is_empty() {
            write(out, LINES, &body)?;
            body.clear();
        }
        body.extend_from_slice(&(line.len() as u32).to_le_bytes());
        body.extend_from_slice(line);
    }
    if !body.is_empty() {
        write(out, LINES, &body)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_as_written_whatever_the_chunks() {
        let (r, w) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
        let mut w2 = w.try_clone().expect("clone");
        let writer = std::thread::spawn(move || {
            write_json(&mut w2, &serde_json::json!({"msg": "hello", "protocol": 1}))
                .expect("write");
            let big = vec![7u8; 300_000]; // past the reader's first buffer
            write(&mut w2, COMPLETIONS, &big).expect("write");
            write_lines(&mut w2, [&b"ab"[..], &b""[..], &b"xyz"[..]]).expect("write");
        });
        let mut fr = FrameReader::new(&r);
        let mut got = Vec::new();
        while got.len() < 3 {
            match fr.next(5_000).expect("read") {
                Next::Frame(k, body) => got.push((k, body.to_vec())),
                Next::Idle => panic!("nothing within 5 s"),
                Next::Closed => break,
            }
        }
        writer.join().expect("writer");
        assert_eq!(got[0].0, JSON);
        let v: serde_json::Value = serde_json::from_slice(&got[0].1).expect("json");
        assert_eq!(v["msg"], "hello");
        assert_eq!(got[1], (COMPLETIONS, vec![7u8; 300_000]));
        assert_eq!(got[2].0, LINES);
        assert_eq!(got[2].1, b"\x02\0\0\0ab\0\0\0\0\x03\0\0\0xyz");
        drop(w);
        assert!(matches!(fr.next(1_000).expect("read"), Next::Closed));
    }

    #[test]
    fn a_length_past_the_bound_is_refused_not_allocated() {
        let (r, mut w) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
        w.write_all(&u32::MAX.to_le_bytes()).expect("write");
        w.write_all(b"J").expect("write");
        let mut fr = FrameReader::new(&r);
        assert!(fr.next(1_000).is_err());
    }
}
