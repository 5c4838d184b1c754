# bench/lib-hold.sh (bash): sourced by the benches that trace on the emulated cluster one stretch at
# a time (observe-bench.sh, selfcal-bench.sh), after they set $cluster (the flowcut-cluster script).
mkdir -p /run/flowcut-cluster
# hold RATE CMD...: runs CMD on a 4-node cluster of its own at RATE, under the lock every cluster
# job of the machine takes, and takes the cluster down after.
hold() {
    flock -w 900 /run/flowcut-cluster/test.lock bash -c '
        c=$1; r=$2; shift 2
        "$c" up --nodes 4 --rate "$r" >/dev/null || exit 1
        "$@"; s=$?
        "$c" down >/dev/null 2>&1
        exit $s' hold "$cluster" "$@"
}
