fn read_param(p: *const u32) -> u32 {
    // SAFETY: the reader of this case file may ignore this.
    unsafe { *p } // fire
}

fn read_local(v: &Vec<u32>) -> u32 {
    let q = v.as_ptr();
    // SAFETY: as above.
    unsafe { *q } // fire
}

fn read_checked(p: *const u32) -> u32 {
    if p.is_null() {
        return 0;
    }
    // SAFETY: checked above.
    unsafe { *p } // no-fire
}

fn read_reference(r: &u32) -> u32 {
    *r // no-fire
}
