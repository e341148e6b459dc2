use std::slice;

fn view(p: *const u8, n: usize) -> &'static [u8] {
    // SAFETY: the caller's promise.
    unsafe { slice::from_raw_parts(p, n) } // fire
}

fn view_mut(p: *mut u8, n: usize) -> &'static mut [u8] {
    // SAFETY: the caller's promise.
    unsafe { std::slice::from_raw_parts_mut(p, n) } // fire
}

fn view_of_slice(v: &[u8]) -> &[u8] {
    &v[..] // no-fire
}

fn my_from_raw_parts_helper(n: usize) -> usize {
    n // no-fire
}
