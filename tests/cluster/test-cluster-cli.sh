#!/bin/bash
# test-cluster-cli.sh: `flowcut cluster` builds what it says and nothing else: up is idempotent,
# uses only 198.18.0.0/15 inside its own namespaces, leaves the caller's links alone, places ranks
# as the machinefile says (node:n lines, one line per rank, blocks without -f), and down removes it
# all.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"

links_before=$(ip -o link show | awk -F': ' '{ print $2 }' | sort)
"$cluster" up --nodes 3 --rate 100mbit || fail "up"
"$cluster" up --nodes 3 --rate 100mbit --duplex half || fail "second up (must replace the first)"
[ "$(ip netns list | grep -c '^fcnode[0-9]')" -eq 3 ] || fail "expected 3 node namespaces"
grep -qx 'duplex=half' /run/flowcut-cluster/state || fail "state does not record duplex=half"
"$cluster" status | grep -q '^nodes:  3' || fail "status does not report 3 nodes"
for i in 0 1 2; do
    addrs=$(ip -n "fcnode$i" -4 -o addr show | awk '$2 != "lo" { print $4 }')
    [ "$addrs" = "198.18.0.$((i + 1))/24" ] || fail "node$i has addresses '$addrs'"
    # Only the on-link route of the benchmarking range: nothing routes anywhere else.
    routes=$(ip -n "fcnode$i" -4 route show | awk '{ print $1 }' | sort -u | tr '\n' ' ')
    [ "$routes" = "198.18.0.0/24 " ] || fail "node$i has routes '$routes'"
done
[ "$(ip -o link show | awk -F': ' '{ print $2 }' | sort)" = "$links_before" ] ||
    fail "the links of the calling namespace changed"

# Placement: rank -> node as Hydra would place them, computed here by hand.
hosts=$work/hosts
where() { "$cluster" mpiexec "$@" sh -c 'echo "$PMI_RANK $FLOWCUT_NODE $(ip -4 -o addr show dev eth0 | awk "{ print \$4 }")"' | sort -n | tr '\n' ' '; }
printf 'node2:2\nnode0\n' >"$hosts"
got=$(where -f "$hosts" -n 4)
want="0 node2 198.18.0.3/24 1 node2 198.18.0.3/24 2 node0 198.18.0.1/24 3 node2 198.18.0.3/24 "
[ "$got" = "$want" ] || fail "machinefile node2:2,node0 with -n 4: got '$got', want '$want'"
printf 'node1\nnode0\nnode1\n' >"$hosts"
got=$(where -f "$hosts" -n 3)
want="0 node1 198.18.0.2/24 1 node0 198.18.0.1/24 2 node1 198.18.0.2/24 "
[ "$got" = "$want" ] || fail "one line per rank: got '$got', want '$want'"
got=$(where -n 4)
want="0 node0 198.18.0.1/24 1 node0 198.18.0.1/24 2 node1 198.18.0.2/24 3 node1 198.18.0.2/24 "
[ "$got" = "$want" ] || fail "blocks without -f: got '$got', want '$want'"
printf 'node7\n' >"$hosts"
"$cluster" mpiexec -f "$hosts" -n 1 true 2>/dev/null && fail "a node outside the cluster was accepted"

"$cluster" down || fail "down"
[ "$(ip netns list | grep -c '^fc')" -eq 0 ] || fail "namespaces left after down"
[ ! -e /run/flowcut-cluster/state ] || fail "state file left after down"
"$cluster" status >/dev/null 2>&1 && fail "status succeeded with no cluster"
exit 0
