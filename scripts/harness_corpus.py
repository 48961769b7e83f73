"""Dumps the HLO of a selection of JAX's own primitive test harnesses.

Run by scripts/gen-harness-corpus.sh (which pins the versions). The harnesses
are `jax._src.internal_test_util.test_harnesses.all_harnesses`; this script
keeps the groups (primitives) and dtypes listed in `RULES` below, at most a
few per (group, dtype), and writes for each kept harness
`NAME.before.hlo` (`jax.jit(h.dyn_fun).lower(*args).as_text(dialect="hlo")`)
and `NAME.after.hlo` (`lowered.compile().as_text()`) into the directory given
as the first argument, NAME being the harness's fullname made safe for a file
name. The arguments are the harness's own example arguments
(`h.dyn_args_maker(np.random.RandomState(0))`): static arguments are baked in
as JAX does, every other argument becomes a parameter (its shape and dtype;
xla-props draws its own values).

The set of harnesses depends on `jax_enable_x64` (the 64-bit dtypes exist
only with it), and so does the lowering of a 32-bit program (index types).
So the parent process runs two children: one without x64 that dumps the
harnesses of dtypes of at most 32 bits, one with x64 that dumps only those of
64-bit dtypes (float64, complex128, uint64, int64). The parent checks that
the names are unique and writes `MANIFEST.tsv` and the generated counts
section of `README.md`.

A few functions the brief asks for have no harness in jax 0.10.2
(`polygamma`, `zeta`, `random_gamma_grad`): `EXTRAS` defines them in the same
style; their MANIFEST source column says `extra`.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

# A harness whose unoptimized dump is over this size is skipped: the corpus
# stays small. The optimized dump carries metadata on every fused
# instruction and is allowed four times as much (igamma, polygamma and
# random_gamma_grad are 25-35 KB before and 47-131 KB after optimization).
MAX_BYTES = 40_000
MAX_AFTER_BYTES = 4 * MAX_BYTES
MAX_NAME = 120

# source locations in the dumps name files of this repository and of the
# installed jax: keep them relative, so the dumps do not depend on where the
# repository or the virtual environment is
ROOT = str(Path(__file__).resolve().parent.parent) + "/"

COMPLEX = ("complex64", "complex128")
FLOATS = ("float32", "float64")

# group -> (the kind, for README sections; the dtypes kept; at most this many
# per (group, dtype); a predicate on the fullname, or None)
RULES = {}


def rule(kind, groups, dtypes, cap, keep=None):
    for g in groups:
        RULES[g] = (kind, dtypes, cap, keep)


# complex arithmetic: every elementwise/other primitive that has complex harnesses
rule(
    "complex",
    [
        "add", "sub", "mul", "div", "neg", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt",
        "sin", "cos", "tan", "tanh", "sinh", "asin", "acos", "atan", "asinh", "acosh",
        "atanh", "logistic", "abs", "sign", "conj", "real", "imag", "pow", "eq", "lt",
        "max", "min", "clamp", "reduce_sum", "reduce_prod", "reduce_max", "cumsum", "cumprod",
        "select_n", "concatenate", "reduce_window_add", "convert_element_type",
    ],
    COMPLEX,
    1,
)
rule("complex", ["integer_pow"], COMPLEX, 2, lambda n: n.endswith(("_y_-3", "_y_3")))
rule("complex", ["dot_general"], COMPLEX, 2)
rule("complex", ["conv_general_dilated"], COMPLEX, 1)
# lax.complex takes two floats and makes a complex
rule("complex", ["complex"], FLOATS, 1)
# random bits
rule("random", ["rng_bit_generator"], ("uint8", "uint32", "uint64"), 3,
     lambda n: "_5_7_" in n and ("uint64" not in n or "numpy_uint64_shape_uint64" in n))
rule("random", ["random_gamma"], FLOATS, 2)
rule("random", ["random_split"], ("uint32",), 1)
rule("random", ["random_uniform"], FLOATS, 1, lambda n: "_5_4_" in n)
rule("random", ["random_randint"], ("int32",), 1, lambda n: "_5_4_" in n)
rule("random", ["random_categorical"], ("float32",), 1)
rule("random", ["iota_2x32_shape"], ("uint32",), 2, lambda n: "100_100" not in n)
# linear algebra expanded by XLA:CPU
rule("linalg", ["triangular_solve"], FLOATS + COMPLEX, 2)
# the decomposed special functions, and their plain relatives for reference
rule(
    "special",
    [
        "lgamma", "digamma", "igamma", "igammac", "erf_inv", "bessel_i0e", "bessel_i1e",
        "regularized_incomplete_beta", "erf", "erfc", "atan2", "tan", "polygamma", "zeta",
        "random_gamma_grad",
    ],
    FLOATS,
    1,
)
# ordering
rule("sort", ["sort"], None, 1)  # one per dtype, plus the named ones below
SORT_NAMED = ("sort_dimensions_", "sort_is_stable_", "sort_edge_cases_")
rule("sort", ["top_k"], None, 2)
rule("sort", ["argmax", "argmin"], FLOATS, 1, lambda n: "_dtypes_" in n)
rule("sort", ["approx_top_k"], ("float32",), 2, lambda n: "large_False" in n)

X64_DTYPES = ("float64", "complex128", "uint64", "int64")


def dtype_name(d):
    import numpy as np

    try:
        return np.dtype(d).name
    except TypeError:
        return str(d)


def file_name(fullname):
    """The fullname as a file name: [A-Za-z0-9_.-] only; a long one is cut
    and ends with 8 hex digits of its sha1 (file names stay under 200 bytes)."""
    name = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_.-]+", "_", fullname)).strip("_.")
    if len(name) > MAX_NAME:
        name = name[: MAX_NAME - 9].rstrip("_.") + "_" + hashlib.sha1(fullname.encode()).hexdigest()[:8]
    return name


def extras():
    """Harness-style definitions of the functions without a harness."""
    import numpy as np
    from jax import lax
    from jax._src.internal_test_util import test_harnesses as th
    from jax._src import test_util as jtu

    out = []
    for dtype in (np.float32, np.float64):
        s = jtu.format_shape_dtype_string((20, 20), dtype)
        for group, fun in [
            ("polygamma", lax.polygamma),
            ("zeta", lax.zeta),
            ("random_gamma_grad", lax.random_gamma_grad),
        ]:
            out.append(
                th.Harness(
                    group,
                    f"extra_shape_{s}",
                    fun,
                    [th.RandArg((20, 20), dtype), th.RandArg((20, 20), dtype)],
                    dtype=dtype,
                    rng_factory=jtu.rand_positive,
                )
            )
    return out


def selected(harnesses, x64):
    """The harnesses this process dumps, in definition order, with their source."""
    taken = Counter()
    for h, source in harnesses:
        r = RULES.get(h.group_name)
        if r is None:
            continue
        _, dtypes, cap, keep = r
        d = dtype_name(h.dtype)
        if (d in X64_DTYPES) != x64:
            continue
        if dtypes is not None and d not in dtypes:
            continue
        if keep is not None and not keep(h.fullname):
            continue
        named = h.group_name == "sort" and (
            h.fullname.startswith(SORT_NAMED) or ("_multiple_arrays_" in h.fullname and "isstable_True" in h.fullname)
        )
        if not named:
            if taken[(h.group_name, d)] >= cap:
                continue
            taken[(h.group_name, d)] += 1
        yield h, source


def relative(text, site):
    return text.replace(site, "").replace(ROOT, "")


def dump(out, x64):
    """Child: dumps this mode's harnesses; prints one JSON record per harness."""
    import jax
    import numpy as np

    assert jax.config.jax_enable_x64 == x64
    from jax._src.internal_test_util import test_harnesses as th

    site = str(Path(jax.__file__).resolve().parent.parent) + "/"
    harnesses = [(h, "all_harnesses") for h in th.all_harnesses] + [(h, "extra") for h in extras()]
    for h, source in selected(harnesses, x64):
        rec = {
            "name": file_name(h.fullname),
            "group": h.group_name,
            "dtype": dtype_name(h.dtype),
            "fullname": h.fullname,
            "source": source,
            "x64": x64,
        }
        lims = [l.description for l in h.jax_unimplemented if l.filter(device="cpu", dtype=h.dtype)]
        if lims:
            rec["skipped"] = "jax_unimplemented on cpu: " + "; ".join(lims)
        else:
            try:
                args = h.dyn_args_maker(np.random.RandomState(0))
                lowered = jax.jit(h.dyn_fun).lower(*args)
                before = relative(lowered.as_text(dialect="hlo"), site)
                after = relative(lowered.compile().as_text(), site)
            except Exception as e:  # noqa: BLE001 - recorded, not hidden
                rec["skipped"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            else:
                sizes = (len(before.encode()), len(after.encode()))
                if sizes[0] > MAX_BYTES or sizes[1] > MAX_AFTER_BYTES:
                    rec["skipped"] = f"too large: {sizes[0]} bytes before, {sizes[1]} after optimization"
                else:
                    (out / f"{rec['name']}.before.hlo").write_text(before)
                    (out / f"{rec['name']}.after.hlo").write_text(after)
        print(json.dumps(rec), flush=True)


BEGIN = "<!-- generated by scripts/harness_corpus.py: begin -->"
END = "<!-- generated by scripts/harness_corpus.py: end -->"


def counts_section(records):
    kept = [r for r in records if "skipped" not in r]
    lines = [BEGIN, "", f"{len(kept)} harnesses kept ({2 * len(kept)} modules), "
             f"{len(records) - len(kept)} selected but skipped.", ""]
    by_kind = defaultdict(list)
    for r in kept:
        by_kind[RULES[r["group"]][0]].append(r)
    lines += ["| kind | group | dtypes (harnesses) |", "| --- | --- | --- |"]
    for kind in ("complex", "random", "linalg", "special", "sort"):
        per_group = defaultdict(Counter)
        for r in by_kind[kind]:
            per_group[r["group"]][r["dtype"]] += 1
        for g in sorted(per_group):
            ds = ", ".join(f"{d} {n}" for d, n in sorted(per_group[g].items()))
            lines.append(f"| {kind} | {g} | {ds} |")
    skipped = [r for r in records if "skipped" in r]
    if skipped:
        lines += ["", "Selected but skipped:", ""]
        lines += [f"- `{r['fullname']}` ({r['dtype']}): {r['skipped']}" for r in skipped]
    lines += ["", END]
    return "\n".join(lines)


def main():
    if sys.argv[1] == "--dump":
        import jax  # noqa: F401 - the config is read from the environment

        dump(Path(sys.argv[2]), sys.argv[3] == "x64")
        return
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for mode in ("x32", "x64"):
        env = dict(os.environ, JAX_ENABLE_X64="1" if mode == "x64" else "0", JAX_PLATFORMS="cpu")
        res = subprocess.run(
            [sys.executable, __file__, "--dump", str(out), mode],
            env=env, check=True, stdout=subprocess.PIPE, text=True,
        )
        records += [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    names = Counter(r["name"] for r in records)
    dups = [n for n, k in names.items() if k > 1]
    assert not dups, f"duplicate names: {dups}"
    kept = [r for r in records if "skipped" not in r]
    kept.sort(key=lambda r: r["name"])
    manifest = ["name\tgroup\tdtype\tfullname\tsource"]
    manifest += [f"{r['name']}\t{r['group']}\t{r['dtype']}\t{r['fullname']}\t{r['source']}" for r in kept]
    (out / "MANIFEST.tsv").write_text("\n".join(manifest) + "\n")
    readme = out / "README.md"
    text = readme.read_text() if readme.exists() else f"# JAX harness corpus\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    readme.write_text(head + counts_section(records) + tail)
    print(f"{len(kept)} harnesses kept, {len(records) - len(kept)} skipped", file=sys.stderr)


if __name__ == "__main__":
    main()
