// A type with padding or pointers could be read back from device bytes that are not valid for
// it: implementing DeviceCopy needs `unsafe`.
use memra_engine::DeviceCopy;

#[derive(Clone, Copy)]
struct Pair(u8, u32);

impl DeviceCopy for Pair {}

fn main() {}
