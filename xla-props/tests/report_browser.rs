//! `xla-props report` end to end in a real headless browser (Debian's
//! chromium): the page loads from a file:// URL with no console errors, a
//! screenshot is taken, and the heatmap has the expected cells and links.
//!
//! Two pages: one from hand-written results (tests/data/report, with an
//! isolation graph and a comparison), and one from a real run of the harness
//! on the interpreter and a mutant, whose `--json` carries the run's metadata
//! and the per-case ULP histograms.
//!
//! Without chromium the tests skip with a message, unless `CI` is set, where
//! they fail. `XLA_PROPS_CHROMIUM` names another browser binary.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::cli::{exits, xla_props};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/report");
/// Distinct (backend, op, dtype) combinations in tests/data/report/results.json.
const HEATMAP_CELLS: usize = 10;
const FAILURE_ANCHOR: &str = "fail-mutant-drop-f16-round-trip-subtract-f16";

fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("XLA_PROPS_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
    })
}

/// The browser, or `None` (after saying why) when the test should skip.
fn chromium_or_skip() -> Option<PathBuf> {
    match find_chromium() {
        Some(p) => Some(p),
        None if std::env::var_os("CI").is_some() => {
            panic!("chromium is not installed, and CI is set: install it (apt-get install -y chromium)")
        }
        None => {
            xla_props::skip::this_test("chromium is not installed (apt-get install -y chromium); set CI to make this a failure");
            None
        }
    }
}

/// Runs a command with a deadline; kills it (only it) when the deadline passes.
fn run_with_deadline(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the browser");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for the browser") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the browser did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

fn chromium(browser: &Path, profile: &Path, extra: &[String], page: &Path) -> Output {
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()));
    let out = run_with_deadline(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Console messages chromium logged (`...:CONSOLE:LINE] "message", source: ...`).
fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// The text of `<pre id="console-errors" ...>...</pre>` in the dumped DOM.
fn recorded_errors(dom: &str) -> String {
    let start = dom
        .find("<pre id=\"console-errors\"")
        .expect("the page has its error recorder");
    let body = &dom[start..];
    let open = body.find('>').unwrap() + 1;
    let close = body.find("</pre>").unwrap();
    body[open..close].to_string()
}

/// The value of attribute `name` in an element's text.
fn attr<'a>(element: &'a str, name: &str) -> &'a str {
    let at = element
        .find(&format!("{name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {element}"));
    let rest = &element[at + name.len() + 2..];
    &rest[..rest.find('"').unwrap()]
}

/// Reasons on the page, as rendered: every heatmap cell with a skipped
/// case carries numbered marks, each linking to a reason listed under its
/// table; every ULP histogram with a nonzero distance says what accepted it
/// (or that its cases failed). Returns the listed skip reasons (one per
/// cell with skips at least).
fn assert_reasons_on_the_page(dom: &str) -> Vec<String> {
    let mut cells_with_skips = 0;
    for cell in dom.split("<td class=\"cell ").skip(1) {
        let cell = &cell[..cell.find("</td>").unwrap()];
        if attr(cell, "data-skipped") == "0" {
            assert!(!cell.contains("class=\"why\""), "{cell}");
            continue;
        }
        cells_with_skips += 1;
        assert!(
            cell.contains("<sup class=\"why\">"),
            "a skipped cell without a reason: {cell}"
        );
        for mark in cell.split("href=\"#skip-").skip(1) {
            let id = &mark[..mark.find('"').unwrap()];
            let item = format!("<li id=\"skip-{id}\">");
            assert!(dom.contains(&item), "no {item} for {cell}");
        }
    }
    let reasons: Vec<String> = dom
        .split("<li id=\"skip-")
        .skip(1)
        .map(|li| {
            let text = &li[li.find('>').unwrap() + 1..li.find("</li>").unwrap()];
            text.to_string()
        })
        .collect();
    let mut figures = 0;
    for fig in dom.split("<figure class=\"ulp-hist\"").skip(1) {
        let caption = &fig[fig.find("<figcaption>").unwrap()..fig.find("</figcaption>").unwrap()];
        // `BACKEND max N ulp (...)`, one per backend
        for part in caption.split(" max ").skip(1) {
            let n: u64 = part.split_whitespace().next().unwrap().parse().unwrap();
            // its parentheses follow `N ulp` (the part runs to the next backend)
            let own = part;
            if n > 0 {
                figures += 1;
                assert!(
                    own.contains("accepted by: ") || own.contains("failed cases, not accepted"),
                    "a nonzero ulp without its reason: {caption}"
                );
                assert!(!own.contains("not recorded"), "{caption}");
            }
        }
    }
    assert!(figures > 0, "no histogram with a nonzero distance");
    assert!(reasons.len() >= cells_with_skips.min(1), "{reasons:?}");
    reasons
}

/// `xla-props report ARGS...`, which must exit 0.
fn report(args: &[&Path]) {
    let out = xla_props()
        .arg("report")
        .args(args)
        .output()
        .expect("run xla-props report");
    exits(&out, 0);
}

fn render(dir: &Path) -> PathBuf {
    let page = dir.join("report.html");
    let data = Path::new(DATA);
    report(&[
        &data.join("results.json"),
        "-o".as_ref(),
        &page,
        "--compare".as_ref(),
        &data.join("old.json"),
        "--isolation".as_ref(),
        &data.join("isolate-report.json"),
    ]);
    page
}

/// Chromium (None: the test skips), and the report rendered in a fresh
/// directory: the directory and the page.
fn browser_and_page() -> Option<(PathBuf, tempfile::TempDir, PathBuf)> {
    let browser = chromium_or_skip()?;
    let dir = tempfile::tempdir().unwrap();
    let page = render(dir.path());
    Some((browser, dir, page))
}

/// The page's DOM as chromium renders it, which must be clean: the page's
/// recorder ran, and saw no script error, blocked fetch or console.error.
fn clean_dom(browser: &Path, profile: &Path, page: &Path) -> String {
    let out = chromium(
        browser,
        profile,
        &["--dump-dom".into(), "--virtual-time-budget=3000".into()],
        page,
    );
    let dom = String::from_utf8(out.stdout).expect("utf-8 dom");
    assert!(
        dom.contains("<body data-rendered=\"yes\">"),
        "the page's script did not run"
    );
    assert_eq!(recorded_errors(&dom), "", "errors recorded in the page");
    assert_eq!(console_lines(&out.stderr), Vec::<String>::new());
    dom
}

/// Takes a screenshot of the page to `shot`, which must be a png of more
/// than a blank page (a blank page compresses to a few KB).
fn screenshot(browser: &Path, profile: &Path, page: &Path, shot: &Path) {
    chromium(
        browser,
        profile,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600".into(),
        ],
        page,
    );
    let png = std::fs::read(shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a png");
    assert!(png.len() > 20_000, "screenshot is {} bytes", png.len());
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some((browser, dir, page)) = browser_and_page() else {
        return;
    };
    let profile = dir.path().join("profile");

    // the recorder ran, and saw no script error, blocked fetch or console.error
    let dom = clean_dom(&browser, &profile, &page);
    // the heatmap: one cell per (backend, op, dtype) with cases
    assert_eq!(dom.matches("<td class=\"cell ").count(), HEATMAP_CELLS);
    assert_eq!(dom.matches("<table class=\"heatmap\"").count(), 2);
    // a failing cell links to its group of failures, which exists
    let link = format!("<a href=\"#{FAILURE_ANCHOR}\">3</a>");
    assert!(dom.contains(&link), "no link {link}");
    assert_eq!(dom.matches(&format!("id=\"{FAILURE_ANCHOR}\"")).count(), 1);
    // plots are inline svg: histograms and the culprit fusion
    assert!(dom.matches("<svg").count() >= 4);
    // why each skipped cell was skipped, and what accepted each nonzero ulp
    let reasons = assert_reasons_on_the_page(&dom);
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("unsupported: bf16 add (1 case)")),
        "{reasons:?}"
    );
    assert!(
        dom.contains("accepted by: vs_reference tolerance ulp(2), "),
        "the declared tolerance is on the page"
    );

    let shot = dir.path().join("report.png");
    screenshot(&browser, &profile, &page, &shot);
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser.png");
    if std::fs::copy(&shot, &keep).is_ok() {
        eprintln!("screenshot: {}", keep.display());
    }
}

/// The checks above can fail: a page with a script error, a console.error and
/// a network fetch trips both the in-page recorder and chromium's console log.
#[test]
fn console_problems_are_detected() {
    let Some((browser, dir, page)) = browser_and_page() else {
        return;
    };
    let html = std::fs::read_to_string(&page).unwrap().replace(
        "</body>",
        "<img src=\"https://example.invalid/x.png\"><script>console.error(\"boom\"); notAFunction();</script></body>",
    );
    std::fs::write(&page, html).unwrap();
    let out = chromium(
        &browser,
        &dir.path().join("profile"),
        &["--dump-dom".into(), "--virtual-time-budget=3000".into()],
        &page,
    );
    let dom = String::from_utf8(out.stdout).unwrap();
    let recorded = recorded_errors(&dom);
    assert!(recorded.contains("console.error: boom"), "{recorded}");
    assert!(recorded.contains("notAFunction"), "{recorded}");
    assert!(
        recorded.contains("blocked by the page policy"),
        "{recorded}"
    );
    assert!(console_lines(&out.stderr).len() >= 2);
}

/// The real thing: the harness runs exp and add on the interpreter and a
/// mutant with a too-short exp polynomial, writes `--json`, and the report of
/// it (compared with an interpreter-only run) loads cleanly in chromium.
#[test]
fn a_real_run_with_a_mutant_renders_with_metadata_and_histograms() {
    let Some(browser) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = |backends: &str, json: &Path| {
        let (ops, dtypes, seed) = ("exponential,add", "f32,f16", ["--seed", "3"]);
        let args = common::suite_args("report-browser", ops, dtypes, backends, &seed, json);
        let report = xla_props::Harness::from_iter(args, |_| None)
            .with_builtins()
            .backend(xla_props::backend::Interpreter::default())
            .failures_dir(dir.path().join("failures"))
            .run_to_report()
            .expect("the harness runs");
        assert!(json.is_file());
        report
    };
    let old = dir.path().join("old.json");
    let new = dir.path().join("new.json");
    let before = run("interpreter", &old);
    assert_eq!(before.totals.failed, 0);
    let after = run("interpreter,mutant:exp-low-precision", &new);
    assert!(after.totals.failed > 0, "the mutant fails some cases");

    // what to expect, read from the results themselves
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&new).unwrap()).unwrap();
    let cases = v["cases"].as_array().unwrap();
    let part = |c: &serde_json::Value, i: usize| -> String {
        let id = c["id"].as_str().unwrap();
        let parts: Vec<&str> = id.split("::").collect();
        if i == usize::MAX {
            parts[parts.len() - 1].to_string()
        } else {
            parts[i].to_string()
        }
    };
    let cells: std::collections::BTreeSet<(String, String, String)> = cases
        .iter()
        .map(|c| (part(c, usize::MAX), part(c, 1), part(c, 2)))
        .collect();
    let failed = cases
        .iter()
        .find(|c| c["outcome"] == "failed")
        .expect("a failure");
    assert!(failed["rerun"].is_string() && failed["verdict"].is_string());
    let anchor = xla_props::report::cell_anchor(&(
        part(failed, usize::MAX),
        part(failed, 1),
        part(failed, 2),
    ));

    let page = dir.path().join("real.html");
    report(&[&new, "--compare".as_ref(), &old, "-o".as_ref(), &page]);

    let profile = dir.path().join("profile");
    let dom = clean_dom(&browser, &profile, &page);
    // one heatmap cell per (backend, op, dtype) of the results, one table per backend
    assert_eq!(dom.matches("<td class=\"cell ").count(), cells.len());
    assert_eq!(dom.matches("<table class=\"heatmap\"").count(), 2);
    // a failing cell links to its failures, which are there, with the rerun command
    assert!(
        dom.contains(&format!("href=\"#{anchor}\"")),
        "no link to {anchor}"
    );
    assert_eq!(dom.matches(&format!("id=\"{anchor}\"")).count(), 1);
    let rerun = failed["rerun"].as_str().unwrap();
    assert!(dom.contains(rerun), "no {rerun}");
    // every failure is new against the interpreter-only run
    assert!(dom.matches("<span class=\"badge\">new</span>").count() >= 1);
    // the metadata the runner recorded
    let table = &dom[dom.find("<table id=\"metadata\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains("<th>seed</th><td>3</td>"), "{table}");
    assert!(table.contains("built into xla-props"), "{table}");
    assert!(table.contains("with mutation exp-low-precision"), "{table}");
    assert!(table.contains("<th>host</th>"), "{table}");
    assert!(table.contains("<th>git revision</th>"), "{table}");
    assert!(!table.contains("version not recorded"), "{table}");
    // the ULP histograms of exp, from the per-case histograms, both backends drawn
    for d in ["f32", "f16"] {
        let id = format!("id=\"ulp-exponential-{d}\"");
        let fig = &dom[dom.find(&id).unwrap_or_else(|| panic!("no {id}"))..];
        let fig = &fig[..fig.find("</figure>").unwrap()];
        assert!(fig.contains("<svg"), "{fig}");
        assert!(fig.contains("ulp per element"), "{fig}");
        assert!(fig.contains("mutant:exp-low-precision max"), "{fig}");
    }
    // the run's accepted distances carry their reasons too (and skips, if any)
    assert_reasons_on_the_page(&dom);
    let captions: Vec<&str> = dom
        .split("<figcaption>")
        .skip(1)
        .map(|c| &c[..c.find("</figcaption>").unwrap()])
        .collect();
    assert!(
        captions
            .iter()
            .any(|c| c.contains("accepted by: ") && c.contains(" tolerance ")),
        "no declared tolerance on the page: {captions:#?}"
    );

    screenshot(&browser, &profile, &page, &dir.path().join("real.png"));
}
