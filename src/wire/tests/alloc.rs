//! A counting global allocator for the lib's test binary: it counts only on a thread that asks
//! (`measure`), so the other tests in the binary allocate as ever (one thread-local read more).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

#[global_allocator]
static A: Counting = Counting;

/// Count an allocation of `size` bytes if this thread is measuring.
fn count(size: usize) {
    // try_with: a thread being torn down has no thread-locals left, and counts nothing.
    if ON.try_with(Cell::get).unwrap_or(false) {
        let _ = TOTAL.try_with(|t| t.set(t.get().saturating_add(size)));
        let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
    }
}

// SAFETY: every call is passed on unchanged to the System allocator, which upholds
// GlobalAlloc's contract; counting only reads and writes const-initialised thread-locals,
// which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's layout is passed on as it came.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as in alloc.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: ptr was allocated by System (every allocation here is) with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: ptr came from System with layout; the caller guarantees new_size is valid.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// What `f` allocated on this thread: the sum of every allocation's size (a reallocation
/// counts its new size) and the largest one.
#[derive(Debug, Clone, Copy)]
pub(super) struct Allocated {
    pub total: usize,
    pub largest: usize,
}

pub(super) fn measure<T>(f: impl FnOnce() -> T) -> (T, Allocated) {
    /// Stops counting however `f` ends (a panic included).
    struct Off;
    impl Drop for Off {
        fn drop(&mut self) {
            let _ = ON.try_with(|o| o.set(false));
        }
    }
    TOTAL.with(|t| t.set(0));
    LARGEST.with(|l| l.set(0));
    let off = Off;
    ON.with(|o| o.set(true));
    let out = f();
    drop(off);
    let a = Allocated {
        total: TOTAL.with(Cell::get),
        largest: LARGEST.with(Cell::get),
    };
    (out, a)
}
