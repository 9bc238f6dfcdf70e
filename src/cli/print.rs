//! cli::print: how every subcommand writes to its standard streams. `println!`, `print!`,
//! `eprintln!` and `eprint!` in `cli` are the macros below, not std's: std's panic (exit 101)
//! when the stream is gone, e.g. `askgate approvals list | head` once `head` has exited.
//!
//! A closed standard output ends the command at once, quietly, with the status a process
//! killed by `SIGPIPE` reports ([`EXIT_CLOSED_PIPE`], 141): the reader took what it wanted,
//! and a pipeline under `set -o pipefail` still sees that the command did not finish. Turning
//! `SIGPIPE` back on instead would also kill the process on a socket write to a peer that
//! went away (std relies on it being ignored), and the hook command must then exit 2, not
//! die: it writes its answer itself and never goes through here. A standard error that
//! cannot be written is ignored (there is nowhere left to say so). Must not be used for
//! anything but the process's own standard streams.

use std::fmt;
use std::io::{ErrorKind, Write};

/// The exit status when standard output was closed by its reader (128 + `SIGPIPE`).
pub const EXIT_CLOSED_PIPE: u8 = 141;

/// Writes to standard output; ends the process when that cannot be done.
pub fn out(text: fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(text).and_then(|()| stdout.flush());
    match written {
        Ok(()) => {}
        Err(error) if error.kind() == ErrorKind::BrokenPipe => {
            std::process::exit(i32::from(EXIT_CLOSED_PIPE))
        }
        Err(error) => {
            err(format_args!(
                "askgate: cannot write to standard output: {error}\n"
            ));
            std::process::exit(i32::from(super::EXIT_IO))
        }
    }
}

/// Writes to standard error, ignoring a stream that is gone.
pub fn err(text: fmt::Arguments<'_>) {
    let _ignored = std::io::stderr().lock().write_fmt(text);
}

/// std's `println!`, ending the command quietly on a closed standard output.
macro_rules! println {
    () => {
        $crate::cli::print::out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::print::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// std's `print!`, ending the command quietly on a closed standard output (defined, though no
/// subcommand prints half lines yet, so that none falls back to std's).
#[allow(unused_macros)]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::cli::print::out(format_args!($($arg)*))
    };
}

/// std's `eprintln!`, ignoring a standard error that is gone.
macro_rules! eprintln {
    () => {
        $crate::cli::print::err(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::print::err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// std's `eprint!`, ignoring a standard error that is gone.
#[allow(unused_macros)]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::cli::print::err(format_args!($($arg)*))
    };
}
