//! A 100 MB trace is read in bounded memory: the readers stream, so peak memory grows with
//! what they keep (the GPU operations, and each CPU event as a 24-byte record for the host
//! side), not with the document. Its own test binary, so the process's peak
//! resident size belongs to this test alone.

use std::io::Write;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

#[test]
fn a_100_mb_kineto_trace_is_read_in_bounded_memory() {
    let path = std::env::temp_dir().join(format!("le-large-{}.json", std::process::id()));
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        write!(f, "{{\"traceEvents\":[").unwrap();
        let cpu = r#"{"ph":"X","cat":"cpu_op","name":"aten::something_long_enough_to_matter","pid":1,"tid":1,"ts":1.0,"dur":2.0,"args":{"Input Dims":[[1,4096],[4096,4096]],"Input type":["c10::BFloat16","c10::BFloat16"]}},"#;
        let mut written = 0usize;
        let mut i = 0u64;
        while written < 100 << 20 {
            f.write_all(cpu.as_bytes()).unwrap();
            written += cpu.len();
            if i % 1000 == 0 {
                let k = format!(
                    r#"{{"ph":"X","cat":"kernel","name":"k{}","ts":{},"dur":3.5,"args":{{"device":0,"stream":7,"grid":[132,1,1],"block":[256,1,1]}}}},"#,
                    i % 7,
                    i
                );
                f.write_all(k.as_bytes()).unwrap();
                written += k.len();
            }
            i += 1;
        }
        write!(f, r#"{{"ph":"M","name":"end"}}]}}"#).unwrap();
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size >= 100 << 20);
    let before = peak_rss_kib();
    let w = launch_econ::trace::read(&path).unwrap();
    let after = peak_rss_kib();
    std::fs::remove_file(&path).unwrap();
    assert!(w.ops.len() > 300, "{}", w.ops.len());
    let grew = after.saturating_sub(before);
    assert!(
        grew < 32 * 1024,
        "peak RSS grew by {grew} KiB reading a {size}-byte file"
    );
}
