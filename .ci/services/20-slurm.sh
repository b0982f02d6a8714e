# shellcheck shell=bash
# Single-node SLURM (munge + slurmdbd/MariaDB accounting + slurmctld + slurmd) for the real
# executor tests. Sourced by .ci/run (as root, after apt-get update): it must not `exit`, must be
# safe under `set -euo pipefail`, and must be idempotent (a second source finds it running).
#
# Exports RSI_TEST_SLURM=1 once `sinfo` reports the node idle.
# Accounting is best effort: without it submitit reads cancelled jobs as UNKNOWN (INFRA.md,
# pitfall 1), which the executor survives by timing out its waits. Set RSI_SLURM_ACCOUNTING=0 to
# skip MariaDB entirely.
# Daemon PIDs are written under /run/rsi-slurm/ so they can be stopped by PID, never by name.

_rsi_slurm_up() {
    local state
    state="$(timeout 5 sinfo -h -o %T 2>/dev/null | head -n1 || true)"
    [ "$state" = "idle" ] || [ "$state" = "mixed" ] || [ "$state" = "allocated" ]
}

_rsi_slurm_pid_alive() {
    [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

_rsi_slurm_start() {
    local piddir=/run/rsi-slurm logdir=/var/log/rsi-slurm
    local accounting="${RSI_SLURM_ACCOUNTING:-1}"
    mkdir -p "$piddir" "$logdir"

    local packages="slurm-wlm slurmctld slurmd slurm-client munge"
    [ "$accounting" = "1" ] && packages="$packages slurmdbd mariadb-server"
    local missing=""
    for p in $packages; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null \
            || { echo "20-slurm: apt-get install failed for:$missing" >&2; return 0; }
    fi

    # munge: a key owned by munge, mode 600, and the socket directory.
    mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
    [ -s /etc/munge/munge.key ] || mungekey --create >/dev/null 2>&1 || true
    chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
    chmod 600 /etc/munge/munge.key
    if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        runuser -u munge -- /usr/sbin/munged
        for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    fi

    # Accounting: MariaDB + slurmdbd (so cancelled/failed jobs have a readable state).
    local acct_lines="AccountingStorageType=accounting_storage/none"
    if [ "$accounting" = "1" ] && command -v slurmdbd >/dev/null 2>&1; then
        mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
        if ! mysqladmin ping >/dev/null 2>&1; then
            [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql >/dev/null 2>&1 || true
            (setsid mariadbd --user=mysql --skip-networking=0 --bind-address=127.0.0.1 \
                >"$logdir/mariadb.log" 2>&1 & echo $! >"$piddir/mariadb.pid")
            for _ in $(seq 100); do mysqladmin ping >/dev/null 2>&1 && break; sleep 0.2; done
        fi
        mysql -uroot -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
            CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;" 2>/dev/null || true
        cat >/etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
PidFile=$piddir/slurmdbd.daemon.pid
LogFile=$logdir/slurmdbd.log
EOF
        chmod 600 /etc/slurm/slurmdbd.conf
        if ! _rsi_slurm_pid_alive "$piddir/slurmdbd.pid"; then
            (setsid slurmdbd -D >>"$logdir/slurmdbd.out" 2>&1 & echo $! >"$piddir/slurmdbd.pid")
            for _ in $(seq 100); do
                (exec 3<>/dev/tcp/127.0.0.1/6819) 2>/dev/null && break
                sleep 0.1
            done
        fi
        if (exec 3<>/dev/tcp/127.0.0.1/6819) 2>/dev/null; then
            acct_lines="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
JobAcctGatherType=jobacct_gather/none"
        else
            echo "20-slurm: slurmdbd did not come up; running without accounting" >&2
        fi
    fi

    local cpus mem_mb
    cpus="$(nproc)"
    mem_mb="$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)"
    mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd
    cat >/etc/slurm/slurm.conf <<EOF
ClusterName=rsi
SlurmctldHost=localhost
AuthType=auth/munge
CryptoType=crypto/munge
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$piddir/slurmctld.daemon.pid
SlurmdPidFile=$piddir/slurmd.daemon.pid
SlurmctldLogFile=$logdir/slurmctld.log
SlurmdLogFile=$logdir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1,sched_min_interval=0,batch_sched_delay=0
ReturnToService=2
MaxArraySize=100001
MaxJobCount=100000
MinJobAge=300
KillWait=5
$acct_lines
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    if [ "$accounting" = "1" ] && grep -q slurmdbd /etc/slurm/slurm.conf; then
        # Register the cluster once; slurmctld refuses to record jobs for an unknown cluster.
        timeout 20 sacctmgr -i add cluster rsi >/dev/null 2>&1 || true
    fi

    if ! _rsi_slurm_pid_alive "$piddir/slurmctld.pid"; then
        (setsid slurmctld -D >>"$logdir/slurmctld.out" 2>&1 & echo $! >"$piddir/slurmctld.pid")
    fi
    if ! _rsi_slurm_pid_alive "$piddir/slurmd.pid"; then
        (setsid slurmd -D -N localhost >>"$logdir/slurmd.out" 2>&1 & echo $! >"$piddir/slurmd.pid")
    fi
    for _ in $(seq 150); do
        _rsi_slurm_up && break
        sleep 0.2
    done
    # A node left DOWN/DRAIN by an earlier, killed daemon comes back on request.
    if ! _rsi_slurm_up; then
        timeout 5 scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true
        for _ in $(seq 50); do _rsi_slurm_up && break; sleep 0.2; done
    fi
}

if _rsi_slurm_up; then
    export RSI_TEST_SLURM=1
else
    _rsi_slurm_start || true
    if _rsi_slurm_up; then
        export RSI_TEST_SLURM=1
        echo "20-slurm: single-node SLURM is idle ($(timeout 5 sinfo -h -o '%D nodes, %c cpus' || true))"
    else
        echo "20-slurm: SLURM did not become idle; see /var/log/rsi-slurm/" >&2
    fi
fi
