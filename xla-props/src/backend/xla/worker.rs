//! The worker process: loads a PJRT plugin and serves compile/execute requests
//! from its parent over stdin/stdout frames.
//!
//! Started as `xla-props __xla-worker --plugin PATH`. Before loading the
//! plugin, the worker moves its protocol stream off file descriptor 1 and points
//! fd 1 at stderr, so anything the plugin prints cannot corrupt the frames.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter};
use std::path::Path;

use super::pjrt::{self, Client, LoadedExecutable, Plugin, COMPILE_OPTIONS};
use super::protocol::{exit_code, protocol_stdout, read_frame, write_frame, Request, Response};

/// The environment variable that carries the PJRT client create options to
/// the worker, as a JSON object (a declared backend's `create_options`).
pub const CREATE_OPTIONS_ENV: &str = "XLA_PROPS_PJRT_CREATE_OPTIONS";

/// The argument that selects worker mode in the `xla-props` binary.
pub const WORKER_ARG: &str = "__xla-worker";

/// Runs worker mode if `args` (without the program name) ask for it; returns
/// `None` otherwise so the caller proceeds normally. The returned value is the
/// process exit code.
pub fn main_if_worker(args: &[String]) -> Option<i32> {
    if args.first().map(String::as_str) != Some(WORKER_ARG) {
        return None;
    }
    let plugin = match args.get(1..3) {
        Some([flag, path]) if flag == "--plugin" => path.clone(),
        _ => {
            eprintln!("usage: xla-props {WORKER_ARG} --plugin PATH");
            return Some(2);
        }
    };
    Some(exit_code("xla worker", serve(Path::new(&plugin))))
}

fn serve(plugin_path: &Path) -> io::Result<()> {
    let mut out = BufWriter::new(protocol_stdout()?);
    let mut input = BufReader::new(io::stdin().lock());
    let send = |out: &mut BufWriter<File>, r: Response| write_frame(out, &r.encode());

    let plugin: &'static Plugin = match Plugin::load(plugin_path) {
        Ok(p) => Box::leak(Box::new(p)),
        Err(e) => return send(&mut out, Response::Error(e.to_string())),
    };
    let options = match std::env::var(CREATE_OPTIONS_ENV) {
        Ok(json) => match serde_json::from_str(&json) {
            Ok(o) => o,
            Err(e) => {
                let why = format!("bad {CREATE_OPTIONS_ENV}: {e}");
                return send(&mut out, Response::Error(why));
            }
        },
        Err(_) => Default::default(),
    };
    let client: &'static Client<'static> = match Client::create_with_options(plugin, &options) {
        Ok(c) => Box::leak(Box::new(c)),
        Err(e) => return send(&mut out, Response::Error(e.to_string())),
    };
    let mut ready = pjrt::describe(plugin);
    if let Ok(v) = client.platform_version() {
        ready.push_str(&format!(", platform {v}"));
    }
    send(&mut out, Response::Ready(ready))?;

    let mut executables: HashMap<u64, LoadedExecutable<'static>> = HashMap::new();
    let mut next_id = 1u64;
    while let Some(frame) = read_frame(&mut input)? {
        let response = match Request::decode(&frame) {
            Err(e) => Response::Error(e.to_string()),
            Ok(Request::Compile { mlir }) => {
                let exe = client.compile(&mlir, "mlir", COMPILE_OPTIONS);
                keep(
                    &mut executables,
                    &mut next_id,
                    exe.map_err(|e| e.to_string()),
                )
            }
            Ok(Request::Execute { exe_id, args }) => match executables.get(&exe_id) {
                None => Response::Error(format!("no executable with id {exe_id}")),
                Some(exe) => match exe.execute(&args) {
                    Ok(outs) => Response::Outputs(outs),
                    Err(e) => Response::Error(e.to_string()),
                },
            },
            Ok(Request::CompileDevices {
                mlir,
                replicas,
                partitions,
            }) => {
                let exe = compile_devices(client, &mlir, replicas, partitions);
                keep(&mut executables, &mut next_id, exe)
            }
            Ok(Request::ExecuteDevices { exe_id, args }) => match executables.get(&exe_id) {
                None => Response::Error(format!("no executable with id {exe_id}")),
                Some(exe) => match exe.execute_on_devices(&args) {
                    Ok(outs) => Response::DeviceOutputs(outs),
                    Err(e) => Response::Error(e.to_string()),
                },
            },
            Ok(Request::Devices) => match client.addressable_device_count() {
                Ok(n) => Response::Devices(n as u64),
                Err(e) => Response::Error(e.to_string()),
            },
            Ok(Request::Release { exe_id }) => {
                executables.remove(&exe_id);
                Response::Ok
            }
            Ok(Request::DebugCompileWithoutOptions { mlir }) => {
                // Deliberately the crash the real options avoid.
                match client.compile(&mlir, "mlir", &[]) {
                    Ok(_) => Response::Ok,
                    Err(e) => Response::Error(e.to_string()),
                }
            }
            Ok(Request::DebugSleep { millis }) => {
                std::thread::sleep(std::time::Duration::from_millis(millis));
                Response::Ok
            }
        };
        send(&mut out, response)?;
    }
    Ok(())
}

/// Keeps a compiled executable under the next id (the response names it),
/// or answers why it did not compile.
fn keep(
    executables: &mut HashMap<u64, LoadedExecutable<'static>>,
    next_id: &mut u64,
    compiled: Result<LoadedExecutable<'static>, String>,
) -> Response {
    match compiled {
        Ok(exe) => {
            let id = *next_id;
            *next_id += 1;
            let num_outputs = exe.num_outputs() as u64;
            executables.insert(id, exe);
            Response::Compiled {
                exe_id: id,
                num_outputs,
            }
        }
        Err(e) => Response::Error(e),
    }
}

/// Compiles a program for `replicas` × `partitions` devices (an already
/// partitioned one with its values marked manually sharded, or an
/// annotated one with its shardings: see `hlo::stablehlo`'s lowering) and
/// checks that PJRT runs device `k` of the grid (replica-major)
/// as the executable's `k`-th device, the order its argument lists take.
fn compile_devices(
    client: &'static Client<'static>,
    mlir: &str,
    replicas: u64,
    partitions: u64,
) -> Result<LoadedExecutable<'static>, String> {
    let (r, p) = (replicas as usize, partitions as usize);
    // XLA compiles more than one partition only with SPMD partitioning on:
    // it leaves a partitioned program's manually sharded values as they
    // are, and partitions an annotated program by its shardings
    let options = pjrt::devices::compile_options(r, p, p > 1);
    let exe = client
        .compile(mlir, "mlir", &options)
        .map_err(|e| e.to_string())?;
    let ids = exe.device_ids().map_err(|e| e.to_string())?;
    let want: Vec<i64> = (0..(r * p) as i64).collect();
    if ids != want {
        return Err(format!(
            "the executable runs on devices {ids:?}; the {r}x{p} grid's device assignment \
             asked for {want:?} in this order"
        ));
    }
    Ok(exe)
}
