static mut COUNTER: u32 = 0; // fire
pub static mut BUFFER: [u8; 16] = [0; 16]; // fire

static TOTAL: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0); // no-fire
// static mut IN_A_COMMENT: u32 = 0; // no-fire
