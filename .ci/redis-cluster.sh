#!/usr/bin/env bash
# Starts a local 3-master Redis Cluster (no replicas) for the Redis suites, unless one already answers
# with cluster_state:ok. Ports from REDIS_CLUSTER_PORTS (default "7101 7102 7103"); configuration,
# node files and logs in a temporary directory. Prints the REDIS_CLUSTER_NODES value on its last line.
set -euo pipefail
ports=(${REDIS_CLUSTER_PORTS:-7101 7102 7103})
first=${ports[0]}
nodes=$(printf '127.0.0.1:%s,' "${ports[@]}"); nodes=${nodes%,}

cluster_ok() { redis-cli -h 127.0.0.1 -p "$first" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; }

if ! cluster_ok; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/redis-cluster.XXXXXX")
  for port in "${ports[@]}"; do
    mkdir -p "$dir/$port"
    cat >"$dir/$port/redis.conf" <<CONF
port $port
bind 127.0.0.1
cluster-enabled yes
cluster-config-file $dir/$port/nodes.conf
cluster-node-timeout 5000
save ""
appendonly no
daemonize yes
dir $dir/$port
logfile $dir/$port/redis.log
pidfile $dir/$port/redis.pid
CONF
    redis-server "$dir/$port/redis.conf"
  done
  for port in "${ports[@]}"; do
    for _ in $(seq 1 100); do
      redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG && break
      sleep 0.1
    done
  done
  # A node that already belongs to a half-made cluster refuses `--cluster create`: start it afresh.
  for port in "${ports[@]}"; do redis-cli -h 127.0.0.1 -p "$port" cluster reset hard >/dev/null 2>&1 || true; done
  addresses=$(printf '127.0.0.1:%s ' "${ports[@]}")
  # shellcheck disable=SC2086
  redis-cli --cluster create $addresses --cluster-replicas 0 --cluster-yes >"$dir/create.log"
  for _ in $(seq 1 300); do
    cluster_ok && break
    sleep 0.1
  done
  cluster_ok || { echo "Redis Cluster on $nodes did not reach cluster_state:ok (see $dir)" >&2; exit 1; }
fi
echo "$nodes"
