use std::ffi::CStr;
use std::os::raw::c_char;

#[no_mangle]
pub extern "C" fn parse_number(s: *const c_char) -> i32 {
    let text = unsafe { CStr::from_ptr(s) }.to_str().unwrap(); // fire
    text.len() as i32
}

fn name_of(s: *const c_char) -> String {
    let name = unsafe { CStr::from_ptr(s).to_str() }.expect("utf-8"); // fire
    name.to_string()
}

fn parse_local(s: &str) -> i32 {
    s.parse::<i32>().unwrap() // no-fire
}

#[no_mangle]
pub extern "C" fn parse_number_safely(s: *const c_char) -> i32 {
    match unsafe { CStr::from_ptr(s) }.to_str() { // no-fire
        Ok(t) => t.len() as i32,
        Err(_) => -1,
    }
}
