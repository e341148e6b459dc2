use std::mem;

fn leak_vec(v: Vec<u8>) {
    mem::forget(v); // fire
}

fn leak_string(s: String) {
    std::mem::forget(s); // fire
}

fn keep_alive(v: Vec<u8>) -> mem::ManuallyDrop<Vec<u8>> {
    mem::ManuallyDrop::new(v) // no-fire
}

fn drop_it(v: Vec<u8>) {
    drop(v); // no-fire
}
