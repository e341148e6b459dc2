use std::mem;

fn float_bits(x: f32) -> u32 {
    unsafe { mem::transmute(x) } // fire
}

fn bytes_to_int(b: [u8; 4]) -> u32 {
    unsafe { std::mem::transmute::<[u8; 4], u32>(b) } // fire
}

fn float_bits_safely(x: f32) -> u32 {
    x.to_bits() // no-fire
}

fn my_transmute_helper(b: [u8; 4]) -> u32 {
    u32::from_ne_bytes(b) // no-fire
}
