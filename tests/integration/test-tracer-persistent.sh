#!/bin/sh
# test-tracer-persistent.sh: persistent requests on 3 ranks: Send_init/Recv_init, each Startall
# followed by its START records and each Waitall by the matching COMPLETEs, Request_free. Output and
# exit status are the same traced and untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example persistent 3 4 5
