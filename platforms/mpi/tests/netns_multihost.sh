#!/usr/bin/env bash
# A real multi-host Open MPI run on one machine: two network namespaces
# ("hosts") joined by a veth pair, one mpirun across them over TCP.
#
#   platforms/mpi/tests/netns_multihost.sh MPI_TEST_BINARY [ARGS...]
#   NP=6 platforms/mpi/tests/netns_multihost.sh build/platforms/mpi/tests/tacomesh_tests_mpi_mesh --warn NoTests "~[globals]"
#
# Environment:
#   NP          ranks (default 2, at least 2), alternating between the hosts
#               (--map-by node): rank 0 in the first namespace, rank 1 in the
#               second, rank 2 in the first, ...
#   RUN_TIMEOUT seconds the MPI run may take (default 300; the placement
#               probe before it has 60)
#   OSC         Open MPI's one-sided component(s) (default "ucx,sm", below);
#               "default" leaves Open MPI's own choice (fails on Debian's
#               Open MPI 4.1: MPI_Win_allocate -> MPI_ERR_WIN)
#
# Exit code: the mpirun's (124 if RUN_TIMEOUT ran out); 77 ("skipped: ...",
# CTest's SKIP_RETURN_CODE) where namespaces cannot be made here; 2 for a
# usage error; 1 if the setup failed or the ranks were not where they
# should be.
#
# Why namespaces: CTest's MPI tests run every rank on one host, where Open
# MPI moves bytes through shared memory (vader, osc/sm). The platform's
# other path (MPI_Win_allocate + RMA over the network, messages over TCP)
# only runs when the ranks are on different hosts. A network namespace is a
# host as far as the network is concerned: its own interfaces, addresses
# and loopback. Open MPI takes each hostfile entry for a node of its own
# (the ranks an orted starts are on its node: MPI_COMM_TYPE_SHARED and
# OMPI_COMM_WORLD_LOCAL_SIZE follow that, not gethostname(); checked: with
# one hostname for both namespaces each rank still sees 1 rank on its node
# at NP=2). Each namespace gets its own UTS namespace and hostname anyway,
# so that what does key on the hostname (session directories under /tmp,
# Open MPI's and UCX's messages) shows two hosts, as on a real cluster.
#
# Harmless noise in the output: "plm:rsh: Warning: setpgid(...) failed in
# parent with errno=Permission denied(13)" (mpirun's race with the agent's
# exec, now and then), and with 3 or more ranks UCX's "error during flush:
# Endpoint timeout" / "disconnect failed" as the ranks finalise.
#
# Needs root (or CAP_SYS_ADMIN + CAP_NET_ADMIN), iproute2, util-linux's
# unshare, coreutils' timeout, and Open MPI 4.x (plm_rsh_agent).
set -euo pipefail

usage() {
    echo "usage: [NP=N] [RUN_TIMEOUT=S] [OSC=...] $0 MPI_TEST_BINARY [ARGS...]" >&2
    exit 2
}
skip() {
    echo "skipped: $*" >&2
    exit 77
}
say() { echo "netns_multihost: $*" >&2; }

[[ $# -ge 1 ]] || usage
binary=$1
shift
# Every rank runs the binary by this path, as on real hosts sharing a file
# system; an absolute path keeps the remote shell's working directory out of it.
[[ -f $binary && -x $binary ]] || { echo "netns_multihost: not an executable: $binary" >&2; exit 2; }
binary=$(readlink -f -- "$binary")
np=${NP:-2}
[[ $np =~ ^[0-9]+$ && $np -ge 2 ]] || { echo "netns_multihost: NP must be a number >= 2 (one rank per host at least), not '$np'" >&2; exit 2; }
run_timeout=${RUN_TIMEOUT:-300}
[[ $run_timeout =~ ^[0-9]+$ && $run_timeout -gt 0 ]] || { echo "netns_multihost: RUN_TIMEOUT must be a positive number of seconds" >&2; exit 2; }

# --- Can we make namespaces here? Anything missing is a skip, not a failure:
# containers without CAP_SYS_ADMIN and CI runners without root are normal.
[[ $(id -u) -eq 0 ]] || skip "needs root to create network namespaces (running as uid $(id -u))"
for tool in ip unshare timeout mpirun findmnt; do
    command -v "$tool" >/dev/null 2>&1 || skip "'$tool' not found (needs iproute2, util-linux, coreutils, openmpi-bin)"
done

# Unique per run, so that parallel runs (e.g. ctest -j) never touch each
# other's namespaces or links. Interface names are limited to 15 characters.
ns1="tmnet$$-1"
ns2="tmnet$$-2"
veth1="tmv$$a"
veth2="tmv$$b"
tmp=""
run_pid=""

# Tear down everything this run made, on every way out (success, failure,
# Ctrl-C, kill). Processes still in our namespaces are ours (mpirun, orted,
# ranks): a namespace lives on as long as a process is in it, so they are
# ended first, then the namespaces go, taking the veth pair with them.
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [[ -n $run_pid ]] && kill -0 "$run_pid" 2>/dev/null; then
        # timeout passes TERM on to mpirun, which ends its ranks everywhere.
        kill -TERM "$run_pid" 2>/dev/null || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$run_pid" 2>/dev/null || true
    fi
    local ns pids
    for ns in "$ns1" "$ns2"; do
        [[ -e /run/netns/$ns ]] || continue
        pids=$(ip netns pids "$ns" 2>/dev/null || true)
        if [[ -n $pids ]]; then
            # shellcheck disable=SC2086
            kill -TERM $pids 2>/dev/null || true
            sleep 1
            pids=$(ip netns pids "$ns" 2>/dev/null || true)
            # shellcheck disable=SC2086
            [[ -z $pids ]] || kill -KILL $pids 2>/dev/null || true
        fi
        ip netns del "$ns" 2>/dev/null || say "warning: could not delete namespace $ns"
    done
    # Only if the pair was made but never moved into a namespace.
    ip link del "$veth1" >/dev/null 2>&1 || true
    [[ -z $tmp ]] || rm -rf -- "$tmp"
    exit "$rc"
}
trap cleanup EXIT
# Exit codes as a shell reports signals; the EXIT trap then cleans up.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# A private /24 that no interface or route of this host uses. The namespaces
# are sealed off from the host's network anyway (nothing routes to them), so
# a clash would be harmless; avoiding one keeps the run's addresses
# unambiguous in anything the user reads (ip addr, logs).
subnet=""
for candidate in 10.231.77 10.231.78 10.232.77 172.31.231 192.168.231; do
    if [[ -z $(ip -4 -o addr show to "$candidate.0/24" 2>/dev/null) &&
          -z $(ip -4 route show root "$candidate.0/24" 2>/dev/null) ]]; then
        subnet=$candidate
        break
    fi
done
[[ -n $subnet ]] || { say "no free private /24 among the candidates"; exit 1; }
addr1="$subnet.1"
addr2="$subnet.2"
cidr="$subnet.0/24"

# 'ip netns exec' remounts /sys for the namespace, which needs / to be a
# mount point: in a plain chroot (the fresh-machine check's) it is not. Ask
# before 'ip netns add', which would leave its /run/netns mount in the
# chroot and keep the chroot from being removed.
findmnt -n / >/dev/null 2>&1 || skip "/ is not a mount point (a chroot?): 'ip netns exec' cannot enter a namespace here"
ip netns add "$ns1" 2>/dev/null || skip "cannot create a network namespace ('ip netns add' failed: no CAP_SYS_ADMIN, e.g. an unprivileged container?)"
ip netns add "$ns2" 2>/dev/null || skip "cannot create a second network namespace ('ip netns add' failed)"
ip netns exec "$ns1" true 2>/dev/null || skip "cannot enter a network namespace ('ip netns exec' failed)"
# unshare --uts is needed for the per-host hostname below; test it now so a
# kernel or container that refuses it is a skip, not a failed MPI run.
ip netns exec "$ns1" unshare --uts true 2>/dev/null || skip "cannot create a UTS namespace ('unshare --uts' failed)"

# The pair is created with its ends already inside the namespaces, so no end
# is ever left behind in the host's namespace if we are interrupted here.
ip link add "$veth1" netns "$ns1" type veth peer name "$veth2" netns "$ns2" ||
    skip "cannot create a veth pair (no veth support in this kernel or container?)"
ip -n "$ns1" addr add "$addr1/24" dev "$veth1"
ip -n "$ns2" addr add "$addr2/24" dev "$veth2"
# lo too: ranks and daemons of one host talk to each other over it.
for ns in "$ns1" "$ns2"; do ip -n "$ns" link set lo up; done
ip -n "$ns1" link set "$veth1" up
ip -n "$ns2" link set "$veth2" up
# The kernel reports a veth as running (carrier, IFF_RUNNING) only once its
# link watcher has run, which may be up to a second after "up". UCX lists
# just the running interfaces when a rank starts: a rank started before that
# would see only lo and fail to reach the other host ("no active messages
# transport ... Destination is unreachable"). So wait for both ends.
for ((i = 0; ; i++)); do
    if ip -n "$ns1" -o link show dev "$veth1" | grep -q 'state UP' &&
       ip -n "$ns2" -o link show dev "$veth2" | grep -q 'state UP'; then
        break
    fi
    ((i < 100)) || { say "the veth pair did not come up within 10 s"; exit 1; }
    sleep 0.1
done

# The second host must see only its own address (besides loopback), and reach
# the first one only over the veth: if so, anything between the ranks on the
# two hosts goes over TCP on the veth.
ns2_addrs=$(ip -n "$ns2" -o addr show scope global | awk '{print $4}' | tr '\n' ' ')
[[ $ns2_addrs == "$addr2/24 " ]] || { say "unexpected addresses in $ns2: $ns2_addrs"; exit 1; }
# (That the hosts reach each other over the veth is shown by the probe run
# below: its orted in the second namespace calls mpirun back at the first
# host's address.)
say "hosts: $ns1 ($addr1, hostname $ns1), $ns2 ($addr2, hostname $ns2), joined by veth $veth1-$veth2; $ns2 has no global address but $ns2_addrs"

tmp=$(mktemp -d /tmp/netns_multihost.XXXXXX)

# The launch agent, called by mpirun as ssh would be: AGENT [OPTIONS] HOST
# COMMAND... It starts the command (Open MPI's orted) in the namespace that
# owns HOST's address, in a UTS namespace of its own named after the host,
# through a shell, as sshd would run it.
cat >"$tmp/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1
shift
case \$host in
  $addr1) ns=$ns1 ;;
  $addr2) ns=$ns2 ;;
  *) echo "netns_multihost agent: unknown host '\$host'" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$1"' "\$ns" "\$*"
EOF
chmod +x "$tmp/agent"

# slots=NP on both hosts and --map-by node: the ranks alternate between them.
printf '%s slots=%s\n%s slots=%s\n' "$addr1" "$np" "$addr2" "$np" >"$tmp/hostfile"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun_args=(
    --allow-run-as-root --oversubscribe
    -np "$np" --hostfile "$tmp/hostfile" --map-by node
    # Both "hosts" share this machine's CPUs; binding each to cores it
    # thinks are its own would pile the ranks of both onto the same ones.
    --bind-to none
    # TCP and self only: no vader (shared memory) between ranks, so ranks on
    # the same host talk over lo and across hosts over the veth.
    --mca btl tcp,self
    --mca btl_tcp_if_include "$cidr" --mca oob_tcp_if_include "$cidr"
    --mca plm_rsh_agent "$tmp/agent"
    # With two hosts a tree spawn gains nothing; launch the one orted directly.
    --mca plm_rsh_no_tree_spawn 1
)
# With config.remote_memory = rma the platform's MESH memory is an MPI
# window (MPI_Win_allocate across hosts; bench_mpi's Put + Get baseline is
# one too), and its ranks ask for MPI_THREAD_MULTIPLE. Over TCP, Open MPI 4.1
# has no one-sided component for that by default: osc/rdma needs an RDMA
# BTL (openib, ugni, uct), osc/pt2pt refuses MPI_THREAD_MULTIPLE ("The OSC
# pt2pt component does not support MPI_THREAD_MULTIPLE in this release"),
# and Debian's /etc/openmpi/openmpi-mca-params.conf excludes ucx and pt2pt
# (osc = ^ucx,pt2pt). So osc/ucx is asked for here (sm stays for windows
# within one host). UCX picks its own transports and sees through the
# namespaces (one machine, one /dev/shm): a run with UCX_TLS=sm,self, shared
# memory only, passes, so left alone it could move the window's bytes
# through shared memory between the "hosts". UCX_TLS=tcp,self keeps it on
# TCP (with UCX_TLS=self alone the window cannot be made, so TCP is what
# carries it); -x hands it to the ranks on both hosts, as it would over ssh.
osc=${OSC:-ucx,sm}
if [[ $osc != default ]]; then
    mpirun_args+=(--mca osc "$osc")
fi
export UCX_TLS=tcp,self
mpirun_args+=(-x UCX_TLS)

# mpirun in the first namespace, with that host's hostname. It runs in the
# background so that a signal to this script is acted on at once (bash defers
# traps until a foreground command ends), and under timeout so the run is
# bounded (-k: KILL if TERM is not enough).
run_mpirun() {
    timeout -k 30 "$1" ip netns exec "$ns1" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$ns1" \
        mpirun "${mpirun_args[@]}" "${@:2}" &
    run_pid=$!
    local rc=0
    wait "$run_pid" || rc=$?
    run_pid=""
    return "$rc"
}

# Proof of placement, before the real run: the same mpirun runs a shell per
# rank that reports its hostname, network namespace, addresses, and how many
# ranks Open MPI put on its node (OMPI_COMM_WORLD_LOCAL_SIZE: the node
# MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) splits by).
probe='printf "rank %s: hostname %s, netns %s, addresses %s, ranks on this node %s\n" \
    "$OMPI_COMM_WORLD_RANK" "$(hostname)" "$(readlink /proc/self/ns/net)" \
    "$(ip -4 -o addr show scope global | awk "{print \$4}" | tr "\n" " ")" "$OMPI_COMM_WORLD_LOCAL_SIZE"'
# (Output to a file, not $(...): run_mpirun must run in this shell for the
# traps to know its pid.)
run_mpirun 60 sh -c "$probe" >"$tmp/probe" 2>&1 || { say "the placement probe failed:"; cat "$tmp/probe" >&2; exit 1; }
probe_out=$(cat "$tmp/probe")
echo "$probe_out" | sort -n -k2 | sed 's/^/netns_multihost: /' >&2
netns_count=$( (echo "$probe_out" | grep -o 'netns net:\[[0-9]*\]' || true) | sort -u | wc -l)
ranks_seen=$(echo "$probe_out" | grep -c '^rank ' || true)
[[ $ranks_seen -eq $np && $netns_count -eq 2 ]] ||
    { say "expected $np ranks in 2 network namespaces, saw $ranks_seen ranks in $netns_count"; exit 1; }

say "running: mpirun ${mpirun_args[*]} $binary $* (in $ns1, timeout ${run_timeout}s)"
say "$np ranks alternating between $ns1 ($addr1) and $ns2 ($addr2): different network namespaces and hostnames, TCP only (btl tcp,self; one-sided: osc $osc, UCX_TLS=$UCX_TLS)"
start=$SECONDS
rc=0
run_mpirun "$run_timeout" "$binary" "$@" || rc=$?
say "mpirun exited with $rc after $((SECONDS - start)) s ($np ranks across 2 network namespaces)"
exit "$rc"
