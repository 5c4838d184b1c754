#!/bin/sh
# seeds.sh: writes the seed corpora of the fuzz targets into OUT/TARGET/ from what the test suite
# already has: the traces of the golden specs (tests/analyzer/golden/*.spec) and of the cases of
# tests/analyzer/test-analyzer-cases.sh (written by gen-trace), those traces exported to OTF2, the
# profile of docs/platform-profile.md and the profiles of tests/unit/test-model-profile.c,
# machinefiles, and command lines.
#
# usage: seeds.sh SRCDIR OUT. FC_GEN names gen-trace and FLOWCUT the flowcut command; without
# them the trace and OTF2 seeds are left out.
set -u
src=$1 out=$2
PY=${PYTHON3:-python3}
mkdir -p "$out/fuzz-trace" "$out/fuzz-otf2" "$out/fuzz-profile" "$out/fuzz-placement" "$out/fuzz-cli"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fc-seeds-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Traces: each golden spec, and each case's gen-trace spec, the heredoc after `gen NAME <<'EOF'`.
mkdir -p "$tmp/specs"
for spec in "$src"/tests/analyzer/golden/*.spec; do
    cp "$spec" "$tmp/specs/$(basename "$spec" .spec)"
done
"$PY" - "$src/tests/analyzer/test-analyzer-cases.sh" "$tmp/specs" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read().splitlines()
os.makedirs(sys.argv[2], exist_ok=True)
i = 0
while i < len(text):
    m = re.match(r"gen (\S+) <<'?EOF'?", text[i])
    i += 1
    if not m:
        continue
    body = []
    while i < len(text) and text[i] != "EOF":
        body.append(text[i])
        i += 1
    open(os.path.join(sys.argv[2], m.group(1)), "w").write("\n".join(body) + "\n")
PY
if [ -n "${FC_GEN-}" ] && [ -x "$FC_GEN" ]; then
    for spec in "$tmp"/specs/*; do
        name=$(basename "$spec")
        mkdir -p "$tmp/t/$name"
        "$FC_GEN" "$tmp/t/$name" <"$spec" >/dev/null 2>&1 || continue
        for f in "$tmp/t/$name"/rank-*.fct; do
            [ -f "$f" ] && cp "$f" "$out/fuzz-trace/$name-$(basename "$f")"
        done
        # Two ranks side by side, in fuzz-trace's split form.
        if [ -f "$tmp/t/$name/rank-000001.fct" ]; then
            "$PY" - "$tmp/t/$name/rank-000000.fct" "$tmp/t/$name/rank-000001.fct" \
                "$out/fuzz-trace/$name-split" <<'PY'
import struct, sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
if len(a) < 65536:
    open(sys.argv[3], "wb").write(b"FCSPLIT" + struct.pack("<H", len(a)) + a + b)
PY
        fi
        mkdir -p "$tmp/o"
        if [ -n "${FLOWCUT-}" ] && [ ! -e "$out/fuzz-otf2/$name" ] &&
            "$FLOWCUT" export --otf2 --no-symbols "$tmp/t/$name" "$tmp/o/$name" >/dev/null 2>&1; then
            anchor=$(find "$tmp/o/$name" -name '*.otf2' | head -n 1)
            [ -n "$anchor" ] && "$PY" "$src/tests/fuzz/pack-otf2.py" "$(dirname "$anchor")" "$out/fuzz-otf2/$name"
        fi
    done
fi
# A killed rank: a rank file without END and its rescue file, two chunks (one queued, one being
# filled) of sends, in fuzz-trace's split form.
if [ -f "$tmp/t/unmatched/rank-000001.fct" ]; then
    "$PY" - "$tmp/t/unmatched/rank-000001.fct" "$out/fuzz-trace/rescue-split" <<'PY'
import struct, sys
fct = open(sys.argv[1], "rb").read()
per, nch = 4, 2
recs_off = 4096 + 4096
h = bytearray(4096)
h[0:8] = b"FCRESCUE"
struct.pack_into("<IHHIIII", h, 8, 0x0A0B0C0D, 2, 2, 1, 64, per, nch)
struct.pack_into("<QQQQ", h, 32, 0, 0, 1 << 32, recs_off)
table = bytearray(4096)
struct.pack_into("<IIIIQQ", table, 0, 2, 0, 3, 0, 0, 1000)   # queued, 3 records
struct.pack_into("<IIIIQQ", table, 32, 1, 0, 0, 0, 1, 5000)  # filling
recs = bytearray(nch * per * 64)
for c in range(nch):
    for i in range(3):
        t0 = 1000 + c * 4000 + i * 100 + (0 if c == 0 or i == 0 else 1000)
        struct.pack_into("<QQQQQiiIIHHI", recs, (c * per + i) * 64, t0, t0 + 50, 8, 0, 0, 0, 3, 0, 0, 4, 0, 0)
data = bytes(h) + bytes(table) + bytes(recs)
if len(fct) < 65536:
    open(sys.argv[2], "wb").write(b"FCSPLIT" + struct.pack("<H", len(fct)) + fct + data)
PY
fi
# Rank files given by the caller (traces of real runs).
for f in ${FUZZ_EXTRA_TRACES-}; do
    [ -f "$f" ] && cp "$f" "$out/fuzz-trace/extra-$(echo "$f" | tr / _)"
done

# Profiles: the example of the documentation and the test's strings (adjacent C literals joined).
"$PY" - "$src/docs/platform-profile.md" "$src/tests/unit/test-model-profile.c" "$out/fuzz-profile" <<'PY'
import os, re, sys
doc = open(sys.argv[1]).read()
n = 0
for block in re.findall(r"```\n(flowcut-profile.*?)```", doc, re.S):
    open(os.path.join(sys.argv[3], "doc-%d" % n), "w").write(block)
    n += 1
c = open(sys.argv[2]).read()
n = 0
for run in re.findall(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+', c):
    try:
        text = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', run)).encode().decode("unicode_escape")
    except UnicodeDecodeError:
        continue
    if "flowcut-profile" in text:
        open(os.path.join(sys.argv[3], "test-%d" % n), "w").write(text)
        n += 1
PY

# Machinefiles as Hydra takes them, on fuzz-placement's nodes n0..n3.
printf 'n0\nn1\nn2\nn3\n' >"$out/fuzz-placement/plain"
printf 'n0:2\nn1:2 # two\n\nn3:4\n' >"$out/fuzz-placement/counts"
printf 'hydra\n' >"$out/fuzz-placement/format"

# Command lines: first byte chooses info, dump, analyze, export, remap; arguments end at NUL.
"$PY" - "$out/fuzz-cli" <<'PY'
import os, sys
lines = {"info": [0, "--json", "trace"], "dump": [1, "--rank", "3", "--kind", "MPI_Send", "--no-sites", "trace"],
         "analyze": [2, "--format", "json", "--model", "fairshare", "trace"],
         "export": [3, "--otf2", "--no-symbols", "trace", "out"],
         "remap": [4, "--nodes", "2", "--slots", "4", "--format", "hydra", "--top", "3", "trace"]}
for name, v in lines.items():
    open(os.path.join(sys.argv[1], name), "wb").write(bytes([v[0]]) + b"\0".join(a.encode() for a in v[1:]))
PY
exit 0
