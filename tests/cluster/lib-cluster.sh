# lib-cluster.sh: helpers of the emulated-cluster tests, sourced after tests/lib.sh: skips (exit 77)
# when the machine cannot host a cluster, serializes the tests on one lock, takes the cluster down
# on exit whatever happens, and compares measured times with expected ones.
set -u
cluster=$abs_top_builddir/tools/flowcut-cluster
ex=$examples

[ "$(id -u)" -eq 0 ] || skip "the emulated cluster needs root (network namespaces and tc)"
need_command ip "ip (iproute2) not found"
need_command tc "tc (iproute2) not found"
need_command flock "flock (util-linux) not found"
need_command mpiexec.mpich
[ -x "$cluster" ] || skip "$cluster is not built"
[ -x "$ex/pattern" ] || skip "$ex/pattern is not built"
# Some containers allow root but not new network namespaces; probe with a throw-away one.
probe=fcnode-probe-$$
ip netns add "$probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns delete "$probe"

# One cluster at a time on the machine: wait for the other test (or user) to finish.
mkdir -p /run/flowcut-cluster
exec 9>/run/flowcut-cluster/test.lock
flock -w 600 9 || fail "could not get /run/flowcut-cluster/test.lock in 600 s"
at_exit '"$cluster" down >/dev/null 2>&1'

# median_of PATTERN-OUTPUT K: the median time of communication K from `pattern` output.
median_of() {
    awk -v k="$2" '$1 == "comm" && $2 == k { print $7 }' <<<"$1"
}

# min_of PATTERN-OUTPUT K: the shortest time of communication K; load on the machine only ever
# adds time, so the minimum is the best estimate of what the link itself allows.
min_of() {
    awk -v k="$2" '$1 == "comm" && $2 == k { print $9 }' <<<"$1"
}

# check NAME MEASURED EXPECTED LOW HIGH: passes when LOW <= MEASURED/EXPECTED <= HIGH; a failure
# is counted (fail_later) and the test goes on.
check() {
    local verdict
    case $2 in '' | *[!0-9.]*) fail_later "$1: no time measured"; return ;; esac
    verdict=$(awk -v m="$2" -v e="$3" -v lo="$4" -v hi="$5" \
        'BEGIN { r = m / e; printf "%s %.3f", (r >= lo && r <= hi) ? "ok" : "FAIL", r }')
    echo "$1: measured $2 s, expected $3 s, ratio ${verdict#* } (allowed $4..$5): ${verdict%% *}"
    [ "${verdict%% *}" = ok ] || fail_later "$1: ratio ${verdict#* } outside $4..$5"
}
