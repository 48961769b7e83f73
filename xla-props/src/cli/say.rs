//! `say!`: the commands' one way to print a line to stdout.

/// Prints a line to stdout; a closed pipe (`| head`) is the reader's choice, not a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
