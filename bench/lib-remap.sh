# bench/lib-remap.sh (bash): what remap-bench.sh and remap-gain.sh share, sourced after they set
# `name` (the word their messages start with), `b` (the build directory), `out` (-o DIR, or empty)
# and `needs` (the examples they run). It sets the paths `cluster`, `flowcut` and `ex` and the
# environment of the build's commands, skips the bench (exit 0) when it cannot run here, makes the
# working directory `work`, and defines lock/unlock for each stretch on the emulated cluster (4
# nodes, 200 Mbit/s), which holds /run/flowcut-cluster/test.lock.

cluster="$b/tools/flowcut-cluster"
flowcut="$b/tools/flowcut"
ex="$b/examples"
export FLOWCUT_EXEC_PATH="$b/analyzer:$b/tools"
export FLOWCUT_LIB="$b/libtrace/.libs/libflowcut.so"

skip() {
    echo "$name: SKIP: $*"
    exit 0
}
fail() {
    echo "$name: $*" >&2
    exit 1
}
[ "$(id -u)" -eq 0 ] || skip "the emulated cluster needs root"
for f in "$cluster" "$b/analyzer/flowcut-remap" $(for e in $needs; do echo "$ex/$e"; done); do
    [ -x "$f" ] || skip "$f is not built"
done
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
work=${out:-$(mktemp -d "/tmp/flowcut-$name.XXXXXX")}
mkdir -p "$work" || fail "cannot create $work"
echo "$name: working in $work"

locked=0
lock() {
    mkdir -p /run/flowcut-cluster
    exec 9>/run/flowcut-cluster/test.lock
    flock -w 900 9 || fail "could not get /run/flowcut-cluster/test.lock in 900 s"
    locked=1
    "$cluster" up --nodes 4 --rate 200mbit >/dev/null || fail "cluster up"
}
# Only a holder of the lock takes the cluster down: the exit trap runs unlock after the last
# stretch too, when another job may hold the lock and have its own cluster up.
unlock() {
    [ $locked = 1 ] || return 0
    "$cluster" down >/dev/null 2>&1
    flock -u 9
    exec 9>&-
    locked=0
}
trap 'unlock' EXIT
