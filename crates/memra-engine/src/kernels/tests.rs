//! Unit tests of `kernels`.

use super::*;
use std::ffi::OsString;

/// The C parameter list of `name` in `source`, split at commas: its `__global__` definition
/// (`void name(` or, with launch bounds, `void __launch_bounds__(..) name(`).
fn c_params(source: &str, name: &str) -> Vec<String> {
    let start = source
        .match_indices("__global__ void ")
        .find_map(|(at, _)| {
            let line = &source[at..at + source[at..].find('\n').unwrap_or(source.len() - at)];
            line.find(&format!(" {name}("))
                .map(|i| at + i + name.len() + 2)
        })
        .unwrap_or_else(|| panic!("{name} is not defined"));
    let end = start + source[start..].find(')').unwrap();
    source[start..end]
        .split(',')
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect()
}

#[test]
fn every_kernel_is_defined_with_the_declared_parameters() {
    for (i, k) in Kernel::ALL.iter().enumerate() {
        assert_eq!(*k as usize, i, "ALL must follow the discriminants");
        let src = k.source();
        assert!(SOURCES.iter().any(|s| s.file == src.file));
        assert!(src.source.contains("extern \"C\""), "{}", src.file);
        let c = c_params(src.source, k.name());
        assert_eq!(c.len(), k.params().len(), "{}: {c:?}", k.name());
        for (p, decl) in k.params().iter().zip(&c) {
            let ok = match p {
                Param::Ptr => decl.contains('*'),
                Param::U32 => decl.starts_with("unsigned int "),
                Param::U64 => decl.starts_with("unsigned long long ") && !decl.contains('*'),
            };
            assert!(ok, "{}: {decl} is not a {p:?}", k.name());
        }
    }
}

#[test]
fn options_follow_the_compute_capability() {
    assert_eq!(nvrtc_options(9, 0)[0], "--gpu-architecture=compute_90");
    assert_eq!(nvrtc_options(8, 6)[0], "--gpu-architecture=compute_86");
}

#[test]
fn cache_key_changes_with_source_options_and_version() {
    let o90 = nvrtc_options(9, 0);
    let o80 = nvrtc_options(8, 0);
    let base = cache_key("a", &o90, (13, 0));
    assert_eq!(base, cache_key("a", &o90, (13, 0)));
    assert_ne!(base, cache_key("b", &o90, (13, 0)));
    assert_ne!(base, cache_key("a", &o80, (13, 0)));
    assert_ne!(base, cache_key("a", &o90, (12, 8)));
    assert_eq!(base.len(), 32);
}

#[test]
fn cache_dir_resolution_order() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    };
    assert_eq!(
        cache_dir_from(env(&[("MEMRA_KERNEL_CACHE", "/c"), ("HOME", "/h")])),
        Some(PathBuf::from("/c"))
    );
    assert_eq!(
        cache_dir_from(env(&[("MEMRA_KERNEL_CACHE", "off"), ("HOME", "/h")])),
        None
    );
    assert_eq!(
        cache_dir_from(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
        Some(PathBuf::from("/x/memra-engine/kernels"))
    );
    assert_eq!(
        cache_dir_from(env(&[("HOME", "/h")])),
        Some(PathBuf::from("/h/.cache/memra-engine/kernels"))
    );
    assert_eq!(cache_dir_from(env(&[])), None);
}

#[test]
fn atomic_write_replaces_whole_file() {
    let dir = std::env::temp_dir().join(format!("memra-cache-test-{}", std::process::id()));
    let p = dir.join("sub").join("k.ptx");
    write_atomically(&p, "first").unwrap();
    write_atomically(&p, "second").unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "second");
    let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() != "k.ptx")
        .collect();
    assert!(leftovers.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
