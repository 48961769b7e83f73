//! IREE's compiler C API (`libIREECompiler.so`, the library `iree-compile`
//! itself loads), bound at run time with `libloading`: one session with the
//! flags of [`COMPILE_FLAGS`], reused across modules, each module one
//! invocation that parses StableHLO text from memory, runs the standard
//! pipeline and writes VM bytecode (a `.vmfb`) to a memory buffer.
//!
//! Only the compile worker process (`compile_worker`) calls this: a crash
//! inside the compiler takes that process down, never the test run.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

use super::tools::COMPILE_FLAGS;

type Session = c_void;
type Invocation = c_void;
type Source = c_void;
type Output = c_void;
type ErrorPtr = *mut c_void;
type DiagnosticCallback = unsafe extern "C" fn(c_int, *const c_char, usize, *mut c_void);

/// The pipeline enum's standard value (`IREE_COMPILER_PIPELINE_STD`).
const PIPELINE_STD: c_int = 0;
/// The error severity of the diagnostics enum.
const SEVERITY_ERROR: c_int = 2;

/// The entry points used, resolved once.
struct Api {
    global_initialize: unsafe extern "C" fn(),
    get_revision: unsafe extern "C" fn() -> *const c_char,
    error_destroy: unsafe extern "C" fn(ErrorPtr),
    error_message: unsafe extern "C" fn(ErrorPtr) -> *const c_char,
    session_create: unsafe extern "C" fn() -> *mut Session,
    session_destroy: unsafe extern "C" fn(*mut Session),
    session_set_flags: unsafe extern "C" fn(*mut Session, c_int, *const *const c_char) -> ErrorPtr,
    invocation_create: unsafe extern "C" fn(*mut Session) -> *mut Invocation,
    invocation_destroy: unsafe extern "C" fn(*mut Invocation),
    invocation_diagnostics:
        unsafe extern "C" fn(*mut Invocation, c_int, DiagnosticCallback, *mut c_void),
    invocation_parse: unsafe extern "C" fn(*mut Invocation, *mut Source) -> bool,
    invocation_pipeline: unsafe extern "C" fn(*mut Invocation, c_int) -> bool,
    invocation_output_vm: unsafe extern "C" fn(*mut Invocation, *mut Output) -> ErrorPtr,
    source_wrap: unsafe extern "C" fn(
        *mut Session,
        *const c_char,
        *const c_char,
        usize,
        bool,
        *mut *mut Source,
    ) -> ErrorPtr,
    source_destroy: unsafe extern "C" fn(*mut Source),
    output_membuffer: unsafe extern "C" fn(*mut *mut Output) -> ErrorPtr,
    output_map: unsafe extern "C" fn(*mut Output, *mut *mut c_void, *mut u64) -> ErrorPtr,
    output_destroy: unsafe extern "C" fn(*mut Output),
}

/// The loaded library with one session; not `Send` (the compiler's objects
/// stay on the thread that made them).
pub(crate) struct Compiler {
    api: Api,
    session: *mut Session,
    flags: Vec<String>,
    /// Compiles in this session so far (the session is renewed every
    /// [`SESSION_COMPILES`], which bounds what its context accumulates).
    compiles: usize,
    _lib: libloading::Library,
}

/// Compiles per session before it is replaced by a fresh one.
const SESSION_COMPILES: usize = 256;

/// A compile that failed: the compiler's diagnostics, errors first-line
/// formatted as `iree-compile` prints them (`module.mlir:LINE:COL: error: ...`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Diagnostics(pub String);

macro_rules! symbol {
    ($lib:expr, $name:literal) => {
        // SAFETY: the type is the header's declaration of this entry point
        // (compiler/bindings/c/iree/compiler/embedding_api.h, API 1.x).
        *unsafe { $lib.get(concat!($name, "\0").as_bytes()) }
            .map_err(|e| format!("{}: {e}", $name))?
    };
}

impl Compiler {
    /// Loads `lib` (a `libIREECompiler.so`), initializes the compiler and
    /// makes a session with [`COMPILE_FLAGS`] and `iree-lld` from `linker`.
    pub(crate) fn load(lib: &Path, linker: &Path) -> Result<Compiler, String> {
        // SAFETY: loading IREE's compiler library runs its static
        // initializers, which only register the compiler's own passes.
        let library = unsafe { libloading::Library::new(lib) }
            .map_err(|e| format!("cannot load {}: {e}", lib.display()))?;
        let api = Api {
            global_initialize: symbol!(library, "ireeCompilerGlobalInitialize"),
            get_revision: symbol!(library, "ireeCompilerGetRevision"),
            error_destroy: symbol!(library, "ireeCompilerErrorDestroy"),
            error_message: symbol!(library, "ireeCompilerErrorGetMessage"),
            session_create: symbol!(library, "ireeCompilerSessionCreate"),
            session_destroy: symbol!(library, "ireeCompilerSessionDestroy"),
            session_set_flags: symbol!(library, "ireeCompilerSessionSetFlags"),
            invocation_create: symbol!(library, "ireeCompilerInvocationCreate"),
            invocation_destroy: symbol!(library, "ireeCompilerInvocationDestroy"),
            invocation_diagnostics: symbol!(
                library,
                "ireeCompilerInvocationEnableCallbackDiagnostics"
            ),
            invocation_parse: symbol!(library, "ireeCompilerInvocationParseSource"),
            invocation_pipeline: symbol!(library, "ireeCompilerInvocationPipeline"),
            invocation_output_vm: symbol!(library, "ireeCompilerInvocationOutputVMBytecode"),
            source_wrap: symbol!(library, "ireeCompilerSourceWrapBuffer"),
            source_destroy: symbol!(library, "ireeCompilerSourceDestroy"),
            output_membuffer: symbol!(library, "ireeCompilerOutputOpenMembuffer"),
            output_map: symbol!(library, "ireeCompilerOutputMapMemory"),
            output_destroy: symbol!(library, "ireeCompilerOutputDestroy"),
        };
        // SAFETY: documented as callable more than once; never shut down
        // (the process exits with the compiler loaded).
        unsafe { (api.global_initialize)() };
        let mut flags: Vec<String> = COMPILE_FLAGS.iter().map(|f| f.to_string()).collect();
        flags.push(format!(
            "--iree-llvmcpu-embedded-linker-path={}",
            linker.display()
        ));
        let mut compiler = Compiler {
            api,
            session: std::ptr::null_mut(),
            flags,
            compiles: 0,
            _lib: library,
        };
        compiler.session = compiler.new_session()?;
        Ok(compiler)
    }

    /// The compiler's build revision (`ireeCompilerGetRevision`).
    pub(crate) fn revision(&self) -> String {
        // SAFETY: a static string valid while the compiler is initialized.
        let p = unsafe { (self.api.get_revision)() };
        if p.is_null() {
            return String::new();
        }
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    fn new_session(&self) -> Result<*mut Session, String> {
        let flags: Vec<CString> = self
            .flags
            .iter()
            .map(|f| CString::new(f.as_str()).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let argv: Vec<*const c_char> = flags.iter().map(|f| f.as_ptr()).collect();
        // SAFETY: session creation cannot fail; the flags outlive the call.
        unsafe {
            let session = (self.api.session_create)();
            let err = (self.api.session_set_flags)(session, argv.len() as c_int, argv.as_ptr());
            if let Some(why) = self.take_error(err) {
                (self.api.session_destroy)(session);
                return Err(format!("the compiler refused its flags: {why}"));
            }
            Ok(session)
        }
    }

    /// The message of `err`, destroying it; `None` for no error.
    fn take_error(&self, err: ErrorPtr) -> Option<String> {
        if err.is_null() {
            return None;
        }
        // SAFETY: a non-null error from this API, destroyed once here.
        unsafe {
            let p = (self.api.error_message)(err);
            let m = if p.is_null() {
                "unknown error".to_string()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            };
            (self.api.error_destroy)(err);
            Some(m)
        }
    }

    /// Compiles StableHLO text (named `name` in diagnostics) to a `.vmfb`.
    pub(crate) fn compile(&mut self, name: &str, mlir: &str) -> Result<Vec<u8>, Diagnostics> {
        if self.compiles >= SESSION_COMPILES {
            let fresh = self.new_session().map_err(Diagnostics)?;
            // SAFETY: no invocation of the old session is alive.
            unsafe { (self.api.session_destroy)(self.session) };
            self.session = fresh;
            self.compiles = 0;
        }
        self.compiles += 1;
        let name = CString::new(name).map_err(|e| Diagnostics(e.to_string()))?;
        let text = CString::new(mlir).map_err(|e| Diagnostics(e.to_string()))?;
        let mut diagnostics = String::new();
        // SAFETY: every object made here is destroyed here, in reverse order;
        // the callback's user data (`diagnostics`) outlives the invocation.
        unsafe {
            let inv = (self.api.invocation_create)(self.session);
            (self.api.invocation_diagnostics)(
                inv,
                0,
                on_diagnostic,
                &mut diagnostics as *mut String as *mut c_void,
            );
            let result = self.run(inv, &name, &text);
            (self.api.invocation_destroy)(inv);
            result.map_err(|why| {
                Diagnostics(match why {
                    Some(w) => format!("{w}\n{diagnostics}").trim().to_string(),
                    None => diagnostics.trim().to_string(),
                })
            })
        }
    }

    /// Parse, pipeline, output; `Err(Some(message))` for an API error,
    /// `Err(None)` when the diagnostics say why.
    unsafe fn run(
        &self,
        inv: *mut Invocation,
        name: &CStr,
        text: &CStr,
    ) -> Result<Vec<u8>, Option<String>> {
        let mut source: *mut Source = std::ptr::null_mut();
        let bytes = text.to_bytes_with_nul();
        let err = (self.api.source_wrap)(
            self.session,
            name.as_ptr(),
            bytes.as_ptr() as *const c_char,
            bytes.len(),
            true,
            &mut source,
        );
        if let Some(why) = self.take_error(err) {
            return Err(Some(why));
        }
        let result = self.pipeline(inv, source);
        (self.api.source_destroy)(source);
        result
    }

    unsafe fn pipeline(
        &self,
        inv: *mut Invocation,
        source: *mut Source,
    ) -> Result<Vec<u8>, Option<String>> {
        if !(self.api.invocation_parse)(inv, source)
            || !(self.api.invocation_pipeline)(inv, PIPELINE_STD)
        {
            return Err(None);
        }
        let mut output: *mut Output = std::ptr::null_mut();
        if let Some(why) = self.take_error((self.api.output_membuffer)(&mut output)) {
            return Err(Some(why));
        }
        let written = self.take_error((self.api.invocation_output_vm)(inv, output));
        let result = match written {
            Some(why) => Err(Some(why)),
            None => {
                let mut data: *mut c_void = std::ptr::null_mut();
                let mut size: u64 = 0;
                match self.take_error((self.api.output_map)(output, &mut data, &mut size)) {
                    Some(why) => Err(Some(why)),
                    None if data.is_null() => Ok(Vec::new()),
                    None => {
                        Ok(std::slice::from_raw_parts(data as *const u8, size as usize).to_vec())
                    }
                }
            }
        };
        (self.api.output_destroy)(output);
        result
    }
}

impl Drop for Compiler {
    fn drop(&mut self) {
        if !self.session.is_null() {
            // SAFETY: the session made in `load`, destroyed once.
            unsafe { (self.api.session_destroy)(self.session) };
        }
    }
}

/// Appends each diagnostic to the `String` behind `user`, an error's as
/// `... error: MESSAGE` the way `iree-compile` prints it (the message
/// carries its location first).
unsafe extern "C" fn on_diagnostic(
    severity: c_int,
    message: *const c_char,
    size: usize,
    user: *mut c_void,
) {
    if message.is_null() || user.is_null() {
        return;
    }
    // SAFETY: the API passes `size` bytes valid for this call, and `user`
    // is the `String` given with the callback.
    let text = String::from_utf8_lossy(std::slice::from_raw_parts(message as *const u8, size));
    let out = &mut *(user as *mut String);
    let kind = match severity {
        SEVERITY_ERROR => "error",
        1 => "warning",
        3 => "remark",
        _ => "note",
    };
    // an IR dump after the note says nothing a reader of the failure needs
    let text = match text.find("see current operation:") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    let mut end = text.len().min(4000);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    out.push_str(format_diagnostic(kind, text[..end].trim()).trim());
    out.push('\n');
}

/// `LOC: KIND: MESSAGE` from the callback's `LOC: MESSAGE` (the location is
/// the text before the first `: ` when it looks like `FILE:LINE:COL`),
/// else `KIND: MESSAGE`.
pub(crate) fn format_diagnostic(kind: &str, text: &str) -> String {
    if let Some(at) = text.find(": ") {
        let loc = &text[..at];
        let mut parts = loc.rsplitn(3, ':');
        let col = parts.next().and_then(|c| c.parse::<usize>().ok());
        let line = parts.next().and_then(|l| l.parse::<usize>().ok());
        if col.is_some() && line.is_some() && parts.next().is_some() {
            return format!("{loc}: {kind}: {}", &text[at + 2..]);
        }
    }
    format!("{kind}: {text}")
}

#[cfg(test)]
mod tests {
    use super::format_diagnostic;

    #[test]
    fn a_located_diagnostic_prints_as_iree_compile_prints_it() {
        assert_eq!(
            format_diagnostic(
                "error",
                "module.mlir:3:10: failed to legalize operation 'math.absf'"
            ),
            "module.mlir:3:10: error: failed to legalize operation 'math.absf'"
        );
        assert_eq!(
            format_diagnostic("error", "no location: x"),
            "error: no location: x"
        );
        assert_eq!(format_diagnostic("note", "a:b: c"), "note: a:b: c");
    }
}
