//! A mapped file cut short under its reader. When another process truncates a file that is
//! mapped (`truncate`, `> file`), or a sparse file's page cannot be had (a full tmpfs), the
//! next access to a page past the new end raises `SIGBUS`, which by default kills the process
//! with "Bus error" and a core dump. No Rust code can return from that access, so a program
//! that maps files it does not own can at least end cleanly: [`exit_on_sigbus`] replaces the
//! crash with its own message and exit status. Nothing more is written after the fault (the
//! process ends inside the faulting access); a file a writer left dirty is sealed by its next
//! opener as after any interrupted writer.

use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

/// The message the handler writes: a leaked, never-freed byte string (one per call of
/// [`exit_on_sigbus`], so a process that maps a few files leaks a few short strings).
static MESSAGE: AtomicPtr<Vec<u8>> = AtomicPtr::new(std::ptr::null_mut());
/// The exit status, stored with the message.
static STATUS: AtomicI32 = AtomicI32::new(2);

/// Makes a `SIGBUS` end the process with `message` (a line on standard error) and exit status
/// `status` instead of a crash; a later call replaces the message (a program names the file it
/// maps last). For programs that own their process, such as bloomkit's CLI: a library or an
/// interpreter that embeds bloomkit should leave its host's signal handling alone. On systems
/// other than Linux it does nothing.
///
/// # Errors
/// The operating system's error when the handler cannot be installed.
pub fn exit_on_sigbus(message: &str, status: i32) -> std::io::Result<()> {
    let line = Box::new(format!("{message}\n").into_bytes());
    STATUS.store(status, Ordering::Relaxed);
    // The previous message is leaked, not freed: a handler running right now may be reading it.
    MESSAGE.store(Box::into_raw(line), Ordering::Release);
    install()
}

#[cfg(target_os = "linux")]
fn install() -> std::io::Result<()> {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        // SAFETY: a zeroed `sigaction` is a valid value of the C struct (empty mask, no flags);
        // the handler set in it only calls async-signal-safe functions (`write`, `_exit`) and
        // reads atomics, and `sigaction` is given valid pointers (a null old action).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) != 0 {
                result = Err(std::io::Error::last_os_error());
            }
        }
    });
    result
}

#[cfg(not(target_os = "linux"))]
fn install() -> std::io::Result<()> {
    Ok(())
}

#[cfg(target_os = "linux")]
extern "C" fn on_sigbus(_: libc::c_int) {
    let message = MESSAGE.load(Ordering::Acquire);
    if !message.is_null() {
        // SAFETY: a non-null `MESSAGE` points to a leaked `Vec<u8>` that is never freed or
        // changed after it was published (Release/Acquire above); `write` and `_exit` are
        // async-signal-safe and `write` is given that vector's own pointer and length.
        unsafe {
            let bytes = &*message;
            libc::write(2, bytes.as_ptr().cast(), bytes.len());
        }
    }
    // SAFETY: `_exit` ends the process without running anything else (no destructor, no
    // atexit handler), which is what a signal handler may do.
    unsafe { libc::_exit(STATUS.load(Ordering::Relaxed)) }
}
