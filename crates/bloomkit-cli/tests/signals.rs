//! Signals, crashes and closed pipes: whatever a command acknowledged is in the file.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::Duration;
use support::*;

/// Starts `bloomkit dedup` with piped input and output; a thread feeds it `feed` (then keeps
/// the input open when `endless`), another collects its output lines.
struct Dedup {
    child: Child,
    printed: std::sync::mpsc::Receiver<String>,
    feeder: Option<std::thread::JoinHandle<()>>,
}

impl Dedup {
    fn start(args: &[&str], feed: Vec<String>, endless: bool) -> Dedup {
        let (mut child, mut input) = spawn_piped(&mut bk(args));
        let feeder = std::thread::spawn(move || {
            for line in feed {
                if writeln!(input, "{line}").is_err() {
                    return; // it died
                }
            }
            let _ = input.flush();
            if endless {
                // Keep the pipe open until the process is gone (a `tail -F`).
                while input.write_all(b"").is_ok() && writeln!(input).is_ok() {
                    std::thread::sleep(Duration::from_millis(50));
                    // An empty line is an element too: feed the same one again and again.
                }
            }
        });
        let (tx, printed) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            // A line is printed when its newline is: a process killed in the middle of a write
            // can leave the start of a line without its end, which is not a printed line.
            let mut out = BufReader::new(out);
            let mut line = Vec::new();
            loop {
                line.clear();
                match out.read_until(b'\n', &mut line) {
                    Ok(_) if line.ends_with(b"\n") => {
                        line.pop();
                        let text = String::from_utf8_lossy(&line).into_owned();
                        if tx.send(text).is_err() {
                            return;
                        }
                    }
                    _ => return,
                }
            }
        });
        Dedup {
            child,
            printed,
            feeder: Some(feeder),
        }
    }

    /// Waits for the next printed line (failing the test after a minute without one).
    fn next_line(&self) -> String {
        self.printed
            .recv_timeout(Duration::from_secs(60))
            .expect("dedup printed a line")
    }

    /// Waits for the process to end; returns its status code (None: killed by a signal)
    /// and every line it printed that has not been taken yet.
    fn finish(mut self) -> (Option<i32>, Vec<String>, String) {
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut err).unwrap();
        if let Some(f) = self.feeder.take() {
            f.join().unwrap();
        }
        let rest: Vec<String> = self.printed.iter().collect();
        (status.code(), rest, err)
    }
}

/// A new filter for trial `trial` in a new directory, of a kind that changes with the trial.
fn trial_filter(trial: u64, capacity: &str, fpp: &str) -> (tempfile::TempDir, String) {
    let d = tempfile::tempdir().unwrap();
    let f = path(&d, "f.bloom");
    let kind = ["classic", "scalable", "counting", "blocked"][trial as usize % 4];
    ok(
        &["create", &f, "-n", capacity, "-p", fpp, "--kind", kind],
        b"",
    );
    (d, f)
}

#[test]
fn kill_9_of_dedup_loses_no_printed_line() {
    // 50 trials: dedup (every kind of file, small and large save intervals) killed
    // with SIGKILL at a random point of its input; every line it printed is in the file,
    // and the next command leaves no temporary file behind.
    for trial in 0..50u64 {
        let mut rng = Rng::new(1000 + trial);
        let (d, f) = trial_filter(trial, "20000", "1e-6");
        let feed = lines(&format!("t{trial}"), 0..20_000);
        let every = ["1", "100", "5000"][trial as usize % 3];
        let run = Dedup::start(
            &["dedup", "--no-progress", &f, "--save-every", every],
            feed,
            true,
        );
        // Wait for a random number of printed lines, then kill.
        let wanted = 1 + rng.below(3000);
        let mut printed = Vec::new();
        while (printed.len() as u64) < wanted {
            printed.push(run.next_line());
        }
        let mut run = run;
        run.child.kill().unwrap(); // SIGKILL
        let (code, rest, _) = run.finish();
        assert_eq!(code, None, "killed");
        printed.extend(rest);
        let printed: Vec<String> = printed.into_iter().filter(|l| !l.is_empty()).collect();
        assert_all_present(&f, &printed);
        assert_no_temp_files(d.path());
    }
}

#[test]
fn kill_9_of_add_loses_no_reported_add() {
    // 50 trials: an add that completed (and reported) is followed by an add killed at a random
    // point; the reported items are all present, the file is a valid filter, and the next
    // command removes any temporary file the killed save left.
    for trial in 0..50u64 {
        let mut rng = Rng::new(2000 + trial);
        let (d, f) = trial_filter(trial, "50000", "0.01");
        let reported = lines(&format!("r{trial}"), 0..5_000);
        let r = ok(&["add", &f], &input(&reported));
        assert!(r.err.starts_with("added 5000 items"), "{}", r.err);
        let input_path = d.path().join("more.txt");
        std::fs::write(&input_path, input(&lines(&format!("k{trial}"), 0..40_000))).unwrap();
        let mut child = bk(&["add", "-q", &f, "--save-every", "500"])
            .stdin(std::fs::File::open(&input_path).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(100_000)));
        child.kill().unwrap();
        child.wait().unwrap();
        ok(&["info", &f], b"");
        assert_no_temp_files(d.path());
        assert_all_present(&f, &reported);
    }
}

#[test]
fn sigint_and_sigterm_end_dedup_with_every_printed_line_saved() {
    for (trial, (sig, code)) in [("INT", 130), ("TERM", 143), ("INT", 130), ("TERM", 143)]
        .into_iter()
        .enumerate()
    {
        let d = tempfile::tempdir().unwrap();
        let f = path(&d, "seen.bloom");
        // The default --save-every: without the signal handling nothing would be saved.
        let kind = if trial < 2 { "classic" } else { "scalable" };
        let feed = lines(&format!("s{trial}"), 0..50_000);
        let run = Dedup::start(
            &["dedup", &f, "-n", "100000", "-p", "1e-6", "--kind", kind],
            feed,
            true,
        );
        let mut printed = Vec::new();
        while printed.len() < 20_000 {
            printed.push(run.next_line());
        }
        signal(&run.child, sig);
        let (status, rest, err) = run.finish();
        assert_eq!(status, Some(code), "{err}");
        clean(code, &err);
        assert!(err.contains("every printed line is saved"), "{err}");
        printed.extend(rest);
        let printed: Vec<String> = printed.into_iter().filter(|l| !l.is_empty()).collect();
        assert!(printed.len() >= 20_000);
        assert_all_present(&f, &printed);
        // A second run prints none of them again.
        let again = ok(&["dedup", "--no-progress", &f], &input(&printed));
        assert_eq!(again.out, "");
    }
}

#[test]
fn a_slow_stream_is_printed_and_saved_line_by_line() {
    // `tail -F | bloomkit dedup`: each line is printed as soon as it arrives, and is already
    // in the file when it is printed (another process sees it), while dedup keeps running.
    let d = tempfile::tempdir().unwrap();
    let (f, mut child, mut input, mut out) = live_dedup(d.path());
    for i in 0..5 {
        let line = format!("slow-{i}");
        writeln!(input, "{line}").unwrap();
        input.flush().unwrap();
        let mut got = String::new();
        out.read_line(&mut got).unwrap();
        assert_eq!(got.trim_end(), line);
        // Recorded before it was printed; and the running dedup holds no lock while it
        // waits for input, so this add gets through.
        assert_eq!(run(&["check", &f, &line], b"").code, 0);
        ok(&["add", "-q", &f, &format!("other-{i}")], b"");
        // A line another process added is not new.
        writeln!(input, "other-{i}").unwrap();
    }
    drop(input);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(rest, "");
}

#[test]
fn a_closed_output_ends_dedup_quietly_with_its_lines_saved() {
    // `bloomkit dedup f | head -1`.
    let d = tempfile::tempdir().unwrap();
    let f = path(&d, "seen.bloom");
    let script = format!(
        "seq 1 200000 | {} dedup {f} -n 300000 -p 0.001 --kind scalable | head -1",
        bin().display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err, "", "quiet");
    // Whatever it printed (at least "1") is saved; the next run does not print it again.
    let again = ok(&["dedup", "--no-progress", &f], b"1\n");
    assert_eq!(again.out, "");
}
