# deps.sh: installs the Debian 12 packages flowcut needs that are missing. Sourced by demo.sh and
# check.sh; it installs nothing that is already there and runs apt-get update only when it must.

# libsimgrid-dev (SimGrid's SMPI, which the models' benchmark runs beside flowcut's models) brings
# its own smpicc and smpirun and no MPI library: mpicc and mpiexec stay MPICH's.
FC_PACKAGES="build-essential autoconf automake libtool pkg-config mpich libmpich-dev gfortran
g++ libunwind-dev zlib1g-dev libopen-trace-format2-dev otf2-tools libcmocka-dev python3 iproute2
binutils kmod valgrind libmetis-dev libdeflate-dev libisal-dev python3-otf2 chromium libsimgrid-dev"
# What `make fuzz` needs besides (libFuzzer comes with Debian's clang); CI installs it too.
FC_FUZZ_PACKAGES="clang"

fc_install_deps() {
    missing=
    for p in $FC_PACKAGES; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing="$missing $p"
        fi
    done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "flowcut: missing Debian packages:$missing; run this command as root, or install them with: apt-get install$missing" >&2
        return 1
    fi
    echo "flowcut: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || { echo "flowcut: apt-get update failed" >&2; return 1; }
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >&2 ||
        { echo "flowcut: apt-get install failed for:$missing" >&2; return 1; }
}

# Builds flowcut out of tree in $1 (created if missing) with configure arguments $2...
fc_build() {
    dir=$1; shift
    src=$(cd "$(dirname "$0")" && pwd)
    if [ ! -x "$src/configure" ] || [ "$src/configure.ac" -nt "$src/configure" ]; then
        (cd "$src" && autoreconf -fi) || { echo "flowcut: autoreconf failed" >&2; return 1; }
    fi
    mkdir -p "$dir" && cd "$dir" || return 1
    if [ ! -f Makefile ]; then
        "$src/configure" -q "$@" || { echo "flowcut: configure failed (see $dir/config.log)" >&2; return 1; }
    fi
    make -j"$(nproc)" >/dev/null || make || return 1
}
