//! The framed protocol between the backend and its worker process.
//!
//! A frame is a little-endian `u32` payload length followed by the payload.
//! Payloads are a tag byte and fields in a fixed order: integers little-endian,
//! strings and byte vectors prefixed by a `u64` length.

use std::io::{self, Read, Write};

use super::pjrt::{buffer_type_code, element_type_of_code, HostArray};

/// Largest frame accepted (guards against reading garbage as a length).
const MAX_FRAME: usize = 1 << 31;

/// A request from the backend to the worker.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// Compile StableHLO MLIR text.
    Compile {
        /// The program.
        mlir: String,
    },
    /// Execute a compiled program.
    Execute {
        /// From `Response::Compiled`.
        exe_id: u64,
        /// Arguments in parameter order.
        args: Vec<HostArray>,
    },
    /// Forget a compiled program.
    Release {
        /// From `Response::Compiled`.
        exe_id: u64,
    },
    /// Compile StableHLO MLIR text for a grid of replicas × partitions
    /// (SPMD partitioning on for more than one partition: a partitioned
    /// program's values are marked manually sharded, which the partitioner
    /// leaves as they are; an annotated program is partitioned by its
    /// shardings).
    CompileDevices {
        /// The program.
        mlir: String,
        /// Replicas.
        replicas: u64,
        /// Partitions.
        partitions: u64,
    },
    /// Execute a program compiled by `CompileDevices` once on each of its devices.
    ExecuteDevices {
        /// From `Response::Compiled`.
        exe_id: u64,
        /// Each device's arguments, in flattened device id order.
        args: Vec<Vec<HostArray>>,
    },
    /// How many devices the client has.
    Devices,
    /// Debug hook: compile with empty compile options, which makes XLA abort the process.
    DebugCompileWithoutOptions {
        /// The program.
        mlir: String,
    },
    /// Debug hook: sleep (to exercise the per-call timeout).
    DebugSleep {
        /// Milliseconds.
        millis: u64,
    },
}

/// A reply from the worker.
#[derive(Clone, Debug, PartialEq)]
pub enum Response {
    /// The worker loaded the plugin; a description of it.
    Ready(String),
    /// A PJRT call or a malformed request failed.
    Error(String),
    /// Compiled; the id to execute it by.
    Compiled {
        /// Executable id.
        exe_id: u64,
        /// Outputs per execution.
        num_outputs: u64,
    },
    /// Outputs of an execution, flattened.
    Outputs(Vec<HostArray>),
    /// Each device's outputs of an execution, in flattened device id order.
    DeviceOutputs(Vec<Vec<HostArray>>),
    /// How many devices the client has.
    Devices(u64),
    /// Done.
    Ok,
}

/// Writes one frame.
pub fn write_frame(w: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(payload)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "frame too large",
        ));
    }
    // Grow with the data actually received, so a corrupt length cannot make
    // us allocate gigabytes up front.
    let mut buf = Vec::with_capacity(len.min(1 << 20));
    r.take(len as u64).read_to_end(&mut buf)?;
    if buf.len() < len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "truncated frame",
        ));
    }
    Ok(Some(buf))
}

#[derive(Default)]
struct Enc(Vec<u8>);

impl Enc {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn arrays(&mut self, arrays: &[HostArray]) {
        self.u64(arrays.len() as u64);
        for a in arrays {
            // Every HostArray built by this crate has a transferable dtype.
            self.u8(buffer_type_code(a.dtype).unwrap_or(0) as u8);
            self.u64(a.dims.len() as u64);
            for &d in &a.dims {
                self.u64(d as u64);
            }
            self.bytes(&a.bytes);
        }
    }
}

struct Dec<'a>(&'a [u8]);

fn bad(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed frame: {what}"),
    )
}

impl Dec<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.0.len() < n {
            return Err(bad("truncated"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> io::Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let n = usize::try_from(self.u64()?).map_err(|_| bad("length"))?;
        Ok(self.take(n)?.to_vec())
    }
    fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?).map_err(|_| bad("utf-8"))
    }
    fn arrays(&mut self) -> io::Result<Vec<HostArray>> {
        let n = self.u64()?;
        let mut out = Vec::new();
        for _ in 0..n {
            let code = self.u8()?;
            let dtype = element_type_of_code(code as i32).ok_or_else(|| bad("element type"))?;
            let rank = self.u64()?;
            if rank > 64 {
                return Err(bad("rank"));
            }
            let dims = (0..rank)
                .map(|_| self.u64().map(|d| d as i64))
                .collect::<io::Result<Vec<_>>>()?;
            let bytes = self.bytes()?;
            out.push(HostArray { dtype, dims, bytes });
        }
        Ok(out)
    }
    /// One list of arrays per device.
    fn device_arrays(&mut self) -> io::Result<Vec<Vec<HostArray>>> {
        let n = self.u64()?;
        if n > 1 << 16 {
            return Err(bad("device count"));
        }
        (0..n).map(|_| self.arrays()).collect()
    }
    fn done(&self) -> io::Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(bad("trailing bytes"))
        }
    }
}

impl Request {
    /// Serializes the request into a frame payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::default();
        match self {
            Request::Compile { mlir } => {
                e.u8(1);
                e.bytes(mlir.as_bytes());
            }
            Request::Execute { exe_id, args } => {
                e.u8(2);
                e.u64(*exe_id);
                e.arrays(args);
            }
            Request::Release { exe_id } => {
                e.u8(3);
                e.u64(*exe_id);
            }
            Request::DebugCompileWithoutOptions { mlir } => {
                e.u8(5);
                e.bytes(mlir.as_bytes());
            }
            Request::DebugSleep { millis } => {
                e.u8(6);
                e.u64(*millis);
            }
            Request::CompileDevices {
                mlir,
                replicas,
                partitions,
            } => {
                e.u8(7);
                e.bytes(mlir.as_bytes());
                e.u64(*replicas);
                e.u64(*partitions);
            }
            Request::ExecuteDevices { exe_id, args } => {
                e.u8(8);
                e.u64(*exe_id);
                e.u64(args.len() as u64);
                for a in args {
                    e.arrays(a);
                }
            }
            Request::Devices => e.u8(10),
        }
        e.0
    }

    /// Parses a frame payload.
    pub fn decode(payload: &[u8]) -> io::Result<Request> {
        let mut d = Dec(payload);
        let r = match d.u8()? {
            1 => Request::Compile { mlir: d.string()? },
            2 => Request::Execute {
                exe_id: d.u64()?,
                args: d.arrays()?,
            },
            3 => Request::Release { exe_id: d.u64()? },
            5 => Request::DebugCompileWithoutOptions { mlir: d.string()? },
            6 => Request::DebugSleep { millis: d.u64()? },
            7 => Request::CompileDevices {
                mlir: d.string()?,
                replicas: d.u64()?,
                partitions: d.u64()?,
            },
            8 => Request::ExecuteDevices {
                exe_id: d.u64()?,
                args: d.device_arrays()?,
            },
            10 => Request::Devices,
            _ => return Err(bad("request tag")),
        };
        d.done()?;
        Ok(r)
    }
}

impl Response {
    /// Serializes the response into a frame payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::default();
        match self {
            Response::Ready(s) => {
                e.u8(1);
                e.bytes(s.as_bytes());
            }
            Response::Error(s) => {
                e.u8(2);
                e.bytes(s.as_bytes());
            }
            Response::Compiled {
                exe_id,
                num_outputs,
            } => {
                e.u8(3);
                e.u64(*exe_id);
                e.u64(*num_outputs);
            }
            Response::Outputs(arrays) => {
                e.u8(4);
                e.arrays(arrays);
            }
            Response::Ok => e.u8(5),
            Response::DeviceOutputs(lists) => {
                e.u8(6);
                e.u64(lists.len() as u64);
                for a in lists {
                    e.arrays(a);
                }
            }
            Response::Devices(n) => {
                e.u8(7);
                e.u64(*n);
            }
        }
        e.0
    }

    /// Parses a frame payload.
    pub fn decode(payload: &[u8]) -> io::Result<Response> {
        let mut d = Dec(payload);
        let r = match d.u8()? {
            1 => Response::Ready(d.string()?),
            2 => Response::Error(d.string()?),
            3 => Response::Compiled {
                exe_id: d.u64()?,
                num_outputs: d.u64()?,
            },
            4 => Response::Outputs(d.arrays()?),
            5 => Response::Ok,
            6 => Response::DeviceOutputs(d.device_arrays()?),
            7 => Response::Devices(d.u64()?),
            _ => return Err(bad("response tag")),
        };
        d.done()?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::ElementType;

    #[test]
    fn requests_and_responses_round_trip() {
        let a = HostArray {
            dtype: ElementType::F16,
            dims: vec![2, 1],
            bytes: vec![0, 60, 0, 188],
        };
        let reqs = [
            Request::Compile {
                mlir: "module {}".into(),
            },
            Request::Execute {
                exe_id: 7,
                args: vec![a.clone()],
            },
            Request::Release { exe_id: 3 },
            Request::DebugSleep { millis: 5 },
            Request::CompileDevices {
                mlir: "module {}".into(),
                replicas: 2,
                partitions: 4,
            },
            Request::ExecuteDevices {
                exe_id: 2,
                args: vec![vec![a.clone()], vec![], vec![a.clone(), a.clone()]],
            },
            Request::Devices,
        ];
        for r in reqs {
            assert_eq!(Request::decode(&r.encode()).unwrap(), r);
        }
        let resps = [
            Response::Ready("x".into()),
            Response::Error("bad".into()),
            Response::Compiled {
                exe_id: 1,
                num_outputs: 2,
            },
            Response::Outputs(vec![a.clone()]),
            Response::Ok,
            Response::DeviceOutputs(vec![vec![a.clone()], vec![a]]),
            Response::Devices(8),
        ];
        for r in resps {
            assert_eq!(Response::decode(&r.encode()).unwrap(), r);
        }
    }

    #[test]
    fn frames_round_trip_and_reject_garbage() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"hello").unwrap();
        let mut r = &buf[..];
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"hello");
        assert_eq!(read_frame(&mut r).unwrap(), None);
        // A length far beyond the data is an error, not a huge allocation.
        let mut r = &[0xff, 0xff, 0xff, 0x7f, 1, 2][..];
        assert!(read_frame(&mut r).is_err());
        assert!(Request::decode(&[9]).is_err());
        assert!(Request::decode(&[1, 200]).is_err());
        let mut trailing = Request::Release { exe_id: 1 }.encode();
        trailing.push(0);
        assert!(Request::decode(&trailing).is_err());
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn decoding_garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Request::decode(&bytes);
            let _ = Response::decode(&bytes);
            let _ = read_frame(&mut &bytes[..]);
        }
    }
}

/// A worker's side of the protocol: fd 1, taken for the frames, with fd 1
/// pointed at stderr, so nothing a library prints can corrupt the frames.
pub fn protocol_stdout() -> io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup/dup2 of the process's own standard descriptors; the new
    // descriptor is owned by the returned File only.
    unsafe {
        let fd = libc::dup(1);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(std::fs::File::from_raw_fd(fd))
    }
}

/// A worker process's exit code: 0 when it `served` to the end, else 1,
/// its error printed after `who`.
pub fn exit_code(who: &str, served: io::Result<()>) -> i32 {
    match served {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{who}: {e}");
            1
        }
    }
}

/// The frames a worker process writes to `stdout`, read on a thread of their
/// own, so that a caller can wait for the next one with a timeout; the last
/// item is the end of the stream (`Ok(None)`) or its error.
pub fn frame_reader(
    stdout: impl Read + Send + 'static,
) -> std::sync::mpsc::Receiver<io::Result<Option<Vec<u8>>>> {
    let (tx, frames) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut r = io::BufReader::new(stdout);
        loop {
            let frame = read_frame(&mut r);
            let stop = !matches!(frame, Ok(Some(_)));
            if tx.send(frame).is_err() || stop {
                break;
            }
        }
    });
    frames
}

/// The last `cap` bytes a worker process writes to `stderr`, collected on a
/// thread of their own (for the report when the worker dies).
pub fn stderr_tail(
    stderr: impl Read + Send + 'static,
    cap: usize,
) -> std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<u8>>> {
    let tail = std::sync::Arc::new(std::sync::Mutex::new(
        std::collections::VecDeque::with_capacity(cap),
    ));
    let sink = std::sync::Arc::clone(&tail);
    std::thread::spawn(move || {
        let mut stderr = stderr;
        let mut buf = [0u8; 1024];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut t = sink.lock().unwrap_or_else(|p| p.into_inner());
            t.extend(&buf[..n]);
            let excess = t.len().saturating_sub(cap);
            t.drain(..excess);
        }
    });
    tail
}

/// A worker process's three pipes, each served as the parent uses it: its
/// stdin, the frames of its stdout ([`frame_reader`]) and the tail of its
/// stderr ([`stderr_tail`]).
pub struct WorkerPipes {
    /// Where requests are written.
    pub stdin: std::process::ChildStdin,
    /// The replies, read on a thread of their own.
    pub frames: std::sync::mpsc::Receiver<io::Result<Option<Vec<u8>>>>,
    /// The last bytes the worker wrote to stderr.
    stderr: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<u8>>>,
}

impl WorkerPipes {
    /// Takes the pipes of `child`, spawned with all three piped, keeping
    /// `cap` bytes of its stderr; None, with the child killed and reaped,
    /// when one of them was not created.
    pub fn take(child: &mut std::process::Child, cap: usize) -> Option<WorkerPipes> {
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        };
        Some(WorkerPipes {
            stdin,
            frames: frame_reader(stdout),
            stderr: stderr_tail(stderr, cap),
        })
    }

    /// What the worker has written to stderr lately (empty when the reader
    /// thread panicked).
    pub fn stderr_bytes(&self) -> Vec<u8> {
        self.stderr
            .lock()
            .map(|t| t.iter().copied().collect())
            .unwrap_or_default()
    }
}
