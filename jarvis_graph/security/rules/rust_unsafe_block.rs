fn first(p: &[u8]) -> u8 {
    unsafe { *p.get_unchecked(0) } // fire
}

fn second(p: &[u8]) -> u8 {
    let v = unsafe { *p.get_unchecked(1) }; // fire
    v
}

fn documented(p: &[u8]) -> u8 {
    // SAFETY: the caller passes a non-empty slice.
    unsafe { *p.get_unchecked(0) } // no-fire
}

fn not_unsafe(p: &[u8]) -> u8 {
    let unsafe_count = p.len() as u8; // no-fire
    unsafe_count
}
