//! Output manners: a closed pipe stops a command quietly (status 141, no
//! panic), a full disk is an error (status 2), for commands that print a
//! lot and for those that print one line.

use std::process::{Command, Stdio};

/// A text whose tokens (one id a line) fill far more than a pipe buffer.
fn big_input(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("structgen-{name}-{}.txt", std::process::id()));
    let para = std::fs::read_to_string(format!(
        "{}/examples/pride-and-prejudice-ch1.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    std::fs::write(&p, para.repeat(40)).unwrap();
    p
}

#[test]
fn a_closed_pipe_exits_quietly() {
    let input = big_input("pipe");
    let runs: [&[&str]; 2] = [
        &["tokenize", input.to_str().unwrap()],
        &["chunk", "--max-tokens", "8", "--text", input.to_str().unwrap()],
    ];
    for args in runs {
        let mut child = Command::new(env!("CARGO_BIN_EXE_structgen"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away at once, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_file(&input);
}

#[test]
fn a_full_disk_is_an_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        testkit::skip("a full disk is an error", "no /dev/full on this system");
        return;
    };
    let input = big_input("full");
    let runs: [&[&str]; 3] =
        [&["count", input.to_str().unwrap()], &["limits"], &["cache-sim", "--groups", "2"]];
    for args in runs {
        let out = Command::new(env!("CARGO_BIN_EXE_structgen"))
            .args(args)
            .stdout(full.try_clone().unwrap())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("cannot write to standard output"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_file(&input);
}
